import { sql } from "drizzle-orm";
import type { Database } from "bun:sqlite";
import type { SQL } from "bun";
import type { Dialect } from "./dialect";
import { openDatabase, type Db, type SyncMode } from "./open";

/** An open database of either dialect: what serve and the CLI's local mode start from. */
export interface Store {
  dialect: Dialect;
  db: Db;
  /** SQLite only: the file and its handle (checkpoints, backups, space). */
  sqlite?: { handle: Database; path: string };
  /** PostgreSQL only: the Bun.SQL client, for what needs a session of its own (the scheduler's lease, LISTEN/NOTIFY between nodes). */
  pg?: { client: SQL };
  /** Where the data lives, for logs and `config print` (no password). */
  location: string;
  /** Whether the database answers (readiness). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** The database cannot be reached or used (server down, credentials refused, too old): one line, no stack. */
export class DatabaseUnavailable extends Error {
  override name = "DatabaseUnavailable";
}

/** A readiness probe must answer while the server is down, not after the client's connect timeout. */
const PING_TIMEOUT_MS = 2000;

export interface StoreOptions {
  dataDir: string;
  /** `postgres://…`: PostgreSQL; otherwise the data dir's SQLite file. */
  databaseUrl?: string;
  sync?: SyncMode;
}

export async function openStore(opts: StoreOptions): Promise<Store> {
  if (opts.databaseUrl) {
    const { openPostgres } = await import("./pg/open");
    const pg = await openPostgres(opts.databaseUrl);
    return {
      dialect: "postgres",
      db: pg.db,
      pg: { client: pg.client },
      location: redactedUrl(opts.databaseUrl),
      async ping() {
        let timer: ReturnType<typeof setTimeout> | undefined;
        const late = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new DatabaseUnavailable("the database did not answer within 2 s")), PING_TIMEOUT_MS);
        });
        try {
          await Promise.race([pg.client`SELECT 1`, late]);
        } finally {
          clearTimeout(timer);
        }
      },
      async close() {
        // A clean stop loses no counts (src/db/pg/counters.ts).
        const { stopCounters } = await import("./pg/counters");
        await stopCounters(pg.db).catch(() => {});
        await pg.close();
      },
    };
  }
  const file = openDatabase(opts.dataDir, { sync: opts.sync });
  return {
    dialect: "sqlite",
    db: file.db,
    sqlite: { handle: file.sqlite, path: file.path },
    location: file.path,
    async ping() {
      file.db.run(sql`select 1`);
    },
    async close() {
      file.close();
    },
  };
}

/** The URL without its password. */
export function redactedUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "(unparseable database URL)";
  }
}
