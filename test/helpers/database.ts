import { randomBytes } from "node:crypto";
import { SQL } from "bun";
import { describe, inject, it } from "vitest";
import { type Store } from "../../src/db/store";
import { openStore } from "../../src/db/openStore";
import { storeName, TEMPLATE_DATABASE, testStoreFromEnv, type TestStore } from "./testStore";

export { storeName, testStoreFromEnv, type TestStore } from "./testStore";

export const TEST_STORE: TestStore = testStoreFromEnv(process.env);
export const onPostgres = TEST_STORE === "postgres";

/** With a database URL the server needs a key from outside (every node decrypts the same secrets). */
export const TEST_SECRET_KEY = "hookrelay test suite secret key";

declare module "vitest" {
  export interface ProvidedContext {
    /** The cluster's maintenance database, set by test/globalSetup.ts on PostgreSQL runs. */
    pgAdminUrl: string;
  }
}

let admin: SQL | null = null;
function adminClient(): SQL {
  if (admin) return admin;
  const url = inject("pgAdminUrl");
  if (!url) throw new Error("HOOKRELAY_TEST_DATABASE=postgres but no cluster was provided: run through vitest.config.ts (test/globalSetup.ts starts it)");
  admin = new SQL({ url, max: 2 });
  return admin;
}

function urlOf(database: string): string {
  const u = new URL(inject("pgAdminUrl"));
  u.pathname = `/${database}`;
  return u.toString();
}

/** The PostgreSQL database that belongs to a data dir: made on first use, kept across restarts on that dir. */
const byDataDir = new Map<string, Promise<string>>();

async function databaseFor(dataDir: string): Promise<string> {
  let made = byDataDir.get(dataDir);
  if (!made) {
    made = (async () => {
      const name = `t_${randomBytes(6).toString("hex")}`;
      await adminClient().unsafe(`CREATE DATABASE ${name} TEMPLATE ${TEMPLATE_DATABASE}`);
      return name;
    })();
    byDataDir.set(dataDir, made);
    made.catch(() => byDataDir.delete(dataDir));
  }
  return made;
}

/**
 * The environment that points a server or a CLI process at the store of
 * `dataDir`: the data dir alone on SQLite; on PostgreSQL also that dir's own
 * database and the secret key. Two calls with the same dir give the same
 * database (a restart finds its data).
 */
export async function storeEnv(dataDir: string): Promise<Record<string, string>> {
  if (!onPostgres) return { HOOKRELAY_DATA_DIR: dataDir };
  const database = await databaseFor(dataDir);
  return { HOOKRELAY_DATA_DIR: dataDir, HOOKRELAY_DATABASE_URL: urlOf(database), HOOKRELAY_SECRET_KEY: TEST_SECRET_KEY };
}

/** The same as command-line flags, for tests that run `--data-dir DIR`. */
export async function storeArgs(dataDir: string): Promise<string[]> {
  const env = await storeEnv(dataDir);
  return env.HOOKRELAY_DATABASE_URL ? ["--data-dir", dataDir, "--database-url", env.HOOKRELAY_DATABASE_URL] : ["--data-dir", dataDir];
}

/**
 * PostgreSQL runs only: the URL of a new, empty database on the run's
 * cluster (no tables: for tests of migrating, e.g. several start-ups at
 * once). Dropped with the cluster at the end of the run.
 */
export async function emptyDatabaseUrl(): Promise<string> {
  if (!onPostgres) throw new Error("emptyDatabaseUrl() needs HOOKRELAY_TEST_DATABASE=postgres: mark the test (PostgreSQL only) with describeOnly");
  const name = `e_${randomBytes(6).toString("hex")}`;
  await adminClient().unsafe(`CREATE DATABASE ${name} TEMPLATE template0`);
  return urlOf(name);
}

/**
 * PostgreSQL runs only: what a test file about PostgreSQL itself used to get
 * from a throwaway cluster of its own (initdb and a start, seconds each on a
 * busy machine): a new empty database, here on the run's cluster. `stop`
 * has nothing to do (the cluster goes at the end of the run).
 */
export async function emptyPgDatabase(): Promise<{ url: string; stop(): void }> {
  return { url: await emptyDatabaseUrl(), stop() {} };
}

/** Drops the data dir's database (PostgreSQL), whoever is still connected to it. */
export async function dropStore(dataDir: string): Promise<void> {
  const made = byDataDir.get(dataDir);
  if (!made) return;
  byDataDir.delete(dataDir);
  const name = await made.catch(() => null);
  if (name) await adminClient().unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
}

/**
 * A describe block that only makes sense on one store. Its title says so and
 * why, e.g. "backups (SQLite only: VACUUM INTO copies the SQLite file)";
 * on the other store every test in it is skipped (and its hooks do not run).
 */
export function describeOnly(store: TestStore, title: string, why: string, fn: () => void) {
  const full = `${title} (${storeName(store)} only: ${why})`;
  if (store === TEST_STORE) describe(full, fn);
  // Skipped on the other store, never silently: the title carries the reason (`why`), and the run's summary counts it.
  else describe.skip(full, fn);
}

/**
 * The data dir's store opened apart from any server: a second reader that
 * still answers once the server under test has stopped (the SQLite file, or
 * the dir's PostgreSQL database). Close it when done.
 */
export async function openStoreOf(dataDir: string): Promise<Store> {
  const env = await storeEnv(dataDir);
  return openStore({ dataDir, databaseUrl: env.HOOKRELAY_DATABASE_URL });
}

/** One test that only makes sense on one store: its title says so and why; the other store skips it. */
export function itOnly(store: TestStore, title: string, why: string, fn: () => unknown, timeout?: number) {
  const full = `${title} (${storeName(store)} only: ${why})`;
  if (store === TEST_STORE) it(full, fn, timeout);
  // As describeOnly: skipped on the other store with the reason in the title.
  else it.skip(full, fn, timeout);
}
