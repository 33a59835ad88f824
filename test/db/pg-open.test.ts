import { SQL } from "bun";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DatabaseUnavailable, type Store } from "../../src/db/store";
import { openStore } from "../../src/db/openStore";
import { pgMigrations } from "../../src/generated/migrations.gen";
import { pgUnavailable, startPgCluster, type PgCluster } from "../helpers/postgres";

/** Opening PostgreSQL: migrations under the advisory lock, and start-up failures as one line. */
const unavailable = pgUnavailable();
if (unavailable) console.warn(`pg-open.test.ts: skipped: ${unavailable}`);

describe.skipIf(unavailable !== null)("opening PostgreSQL (PostgreSQL)", () => {
  let cluster: PgCluster;
  let admin: SQL;
  let port: string;
  beforeAll(async () => {
    cluster = await startPgCluster();
    port = new URL(cluster.url).port;
    admin = new SQL(cluster.url);
    // A role that logs in with a password: the cluster trusts everyone else on 127.0.0.1.
    await admin`CREATE ROLE alice LOGIN PASSWORD 'right password'`;
    const [row] = (await admin`SHOW hba_file`) as { hba_file: string }[];
    await Bun.write(row!.hba_file, "host all alice 127.0.0.1/32 scram-sha-256\nhost all all 127.0.0.1/32 trust\n");
    await admin`SELECT pg_reload_conf()`;
  });
  afterAll(async () => {
    await admin?.close();
    cluster?.stop();
  });

  const urlFor = (db: string, user = "hookrelay") => `postgres://${user}@127.0.0.1:${port}/${db}`;

  it("four start-ups at once on an empty database migrate it once, and none fails", async () => {
    await admin`CREATE DATABASE concurrent`;
    const url = urlFor("concurrent");
    const opened = await Promise.allSettled([1, 2, 3, 4].map(() => openStore({ dataDir: "/nonexistent", databaseUrl: url })));
    const stores = opened.filter((r): r is PromiseFulfilledResult<Store> => r.status === "fulfilled").map((r) => r.value);
    try {
      expect(opened.filter((r) => r.status === "rejected")).toEqual([]);
      const check = new SQL(url);
      const rows = (await check`SELECT hash FROM drizzle.__drizzle_migrations ORDER BY id`) as { hash: string }[];
      await check.close();
      expect(rows.map((r) => r.hash)).toEqual(pgMigrations.map((m) => m.hash));
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });

  it("a database that answers is reported by location without the password, and pings", async () => {
    await admin`CREATE DATABASE located OWNER alice`;
    const store = await openStore({ dataDir: "/nonexistent", databaseUrl: `postgres://alice:right%20password@127.0.0.1:${port}/located` });
    try {
      expect(store.dialect).toBe("postgres");
      expect(store.location).toBe(`postgres://alice:***@127.0.0.1:${port}/located`);
      await expect(store.ping()).resolves.toBeUndefined();
    } finally {
      await store.close();
    }
  });

  const failure = async (url: string) => {
    const error = await openStore({ dataDir: "/nonexistent", databaseUrl: url }).then(
      (s) => s.close().then(() => null),
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(DatabaseUnavailable);
    const message = (error as Error).message;
    expect(message).not.toContain("\n");
    return message;
  };

  it("a wrong password is one line naming the user, never the password", async () => {
    const message = await failure(`postgres://alice:wrong-secret@127.0.0.1:${port}/hookrelay`);
    expect(message).toBe(`PostgreSQL at 127.0.0.1:${port}/hookrelay refused the password of user "alice": password authentication failed for user "alice"`);
  });

  it("a role that does not exist is one line", async () => {
    expect(await failure(urlFor("hookrelay", "nobody"))).toBe(`PostgreSQL at 127.0.0.1:${port}/hookrelay refused user "nobody": role "nobody" does not exist`);
  });

  it("a database that does not exist is one line", async () => {
    expect(await failure(urlFor("missing"))).toBe(`PostgreSQL at 127.0.0.1:${port}/missing: database "missing" does not exist`);
  });

  it("a port nothing listens on is one line saying the server cannot be reached", async () => {
    expect(await failure("postgres://hookrelay@127.0.0.1:1/hookrelay")).toMatch(/^cannot reach PostgreSQL at 127\.0\.0\.1:1\/hookrelay \(connection refused/);
  });
});
