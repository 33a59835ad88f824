import { SQL } from "bun";
import { sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/bun-sql";
import { SQLiteInteger } from "drizzle-orm/sqlite-core";
import { registerHandle, type StoreHandle } from "../dialect";
import { DatabaseUnavailable } from "../store";
import type { Db } from "../db";
import { currentTx } from "../transaction";
import { pgMigrations } from "../../generated/migrations.gen";

/** Reserved for hookrelay's migrations: every process that starts on an empty database waits on it in turn. */
const MIGRATION_LOCK = 0x686f6f6b; // "hook"
export const MIN_SERVER_VERSION = 150000;

export { DatabaseUnavailable };

export interface OpenPostgres {
  db: Db;
  client: SQL;
  close(): Promise<void>;
}

/**
 * Opens (migrating as needed) the PostgreSQL database at `url`. The domain's
 * tables are the sqlite-core ones of src/db/schema: drizzle builds correct
 * PostgreSQL from them (the whole suite runs on both stores to keep it so),
 * and src/db/pg/schema, generated from the same files, is what the
 * migrations are made of. Failures to reach or log in to the server are one
 * line (DatabaseUnavailable), never a stack trace.
 */
export async function openPostgres(url: string, opts: { max?: number } = {}): Promise<OpenPostgres> {
  readIntegersAsNumbers();
  const client = new SQL({ url, max: opts.max ?? 10, idleTimeout: 60, connectionTimeout: 10 });
  try {
    const [row] = (await client`SELECT current_setting('server_version_num')::int AS v, current_setting('server_version') AS name`) as { v: number; name: string }[];
    if (row!.v < MIN_SERVER_VERSION) throw new DatabaseUnavailable(`PostgreSQL ${row!.name} is too old: hookrelay needs PostgreSQL 15 or newer`);
    await migrate(client);
  } catch (error) {
    await client.close().catch(() => {});
    // The driver's error stays as the cause: serve tells "not reachable yet" (it waits) from "refused" (it stops).
    throw error instanceof DatabaseUnavailable ? error : new DatabaseUnavailable(describePostgresError(error, url), { cause: error });
  }
  const inner = drizzle({ client }) as unknown as Db;
  const handle: StoreHandle = { dialect: "postgres", root: inner };
  // Statements made through the root inside transaction(...) run on the transaction's connection.
  const root = new Proxy(inner as object, {
    get(target, prop) {
      const via = (currentTx(handle) ?? target) as Record<string | symbol, unknown>;
      const value = Reflect.get(via, prop);
      return typeof value === "function" ? value.bind(via) : value;
    },
  }) as Db;
  handle.root = root;
  registerHandle(root, handle);
  registerHandle(inner, handle);
  return {
    db: root,
    client,
    async close() {
      await client.close({ timeout: 5 });
    },
  };
}

/**
 * drizzle's migrator takes no lock: several processes starting on one empty
 * database at once would each try to create the tables (docs/decisions.md D17: 2 or 3
 * of 4 crashed). A session-level advisory lock held on a reserved connection
 * lets one migrate; the others then find nothing to do.
 */
async function migrate(client: SQL) {
  const lockHolder = await client.reserve();
  try {
    await lockHolder`SELECT pg_advisory_lock(${MIGRATION_LOCK})`;
    try {
      const db = drizzle({ client });
      const internal = db as unknown as { dialect: { migrate(m: unknown, s: unknown, c: unknown): Promise<void> }; session: unknown };
      const meta = pgMigrations.map((m) => ({ sql: m.sql, bps: m.bps, folderMillis: m.folderMillis, hash: m.hash }));
      await internal.dialect.migrate(meta, internal.session, { migrationsFolder: "" });
    } finally {
      await lockHolder`SELECT pg_advisory_unlock(${MIGRATION_LOCK})`;
    }
  } finally {
    lockHolder.release();
  }
}

/** Bun.SQL returns int8 as a string; the schema's integer columns are numbers on both stores (they stay below 2^53). */
let patched = false;
function readIntegersAsNumbers() {
  if (patched) return;
  patched = true;
  (SQLiteInteger.prototype as unknown as { mapFromDriverValue(v: unknown): unknown }).mapFromDriverValue = (v) => (typeof v === "string" ? Number(v) : v);
}

/** The SQLSTATE of a server error (Bun.SQL puts it in errno; `code` names the client's error class). */
export function sqlState(error: unknown): string | undefined {
  const e = error as { errno?: unknown; code?: unknown } | null;
  if (typeof e?.errno === "string") return e.errno;
  return undefined;
}

/** One line for why the database could not be used, without the password. */
export function describePostgresError(error: unknown, url: string): string {
  let where = "the database";
  let user = "";
  try {
    const u = new URL(url);
    where = `PostgreSQL at ${u.hostname}:${u.port || "5432"}${u.pathname}`;
    user = decodeURIComponent(u.username);
  } catch {}
  const state = sqlState(error);
  const message = error instanceof Error ? error.message.split("\n")[0]! : String(error);
  // Checked against Bun 1.4's PostgresError: a server's refusal has the SQLSTATE in errno and code
  // ERR_POSTGRES_SERVER_ERROR; a refused or unresolvable connection has code
  // ERR_POSTGRES_CONNECTION_REFUSED and the message "Failed to connect", without errno.
  if (state === "28P01") return `${where} refused the password of ${user ? `user "${user}"` : "the default user"}: ${message}`;
  if (state === "28000") return `${where} refused ${user ? `user "${user}"` : "the default user"}: ${message}`;
  if (state === "3D000") return `${where}: ${message}`;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string" && /CONNECTION_REFUSED|CONNECTION_CLOSED|CONNECTION_TIMEOUT|ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ECONNRESET|ETIMEDOUT/.test(code)) {
    return `cannot reach ${where} (${code === "ERR_POSTGRES_CONNECTION_REFUSED" ? "connection refused, or the host name does not resolve" : message}): is the server running and the URL right?`;
  }
  return `${where}: ${message}${state ? ` (SQLSTATE ${state})` : ""}`;
}

export const pingSql = sql`SELECT 1`;
