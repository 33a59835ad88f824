import { Database } from "bun:sqlite";
import { drizzle } from "drizzle-orm/bun-sqlite";
import type { Db } from "../db";
import type { SyncMode } from "../store";
import { makePrivateDir, makePrivateFile } from "../privateFiles";
import { databasePath } from "./path";
import { migrations } from "../../generated/migrations.gen";


export interface OpenDb {
  db: Db;
  sqlite: Database;
  path: string;
  close(): void;
}

export { databasePath };

/**
 * Opens (creating and migrating as needed) the one SQLite file of a data dir.
 * Every pragma is set explicitly: bun:sqlite reports synchronous=FULL after
 * switching to WAL unless told otherwise.
 */
export function openDatabase(dataDir: string, opts: { sync?: SyncMode; readonly?: boolean } = {}): OpenDb {
  // serve and a local-mode CLI alike: a new dir 0700, a new database 0600 (its -wal and -shm follow it).
  makePrivateDir(dataDir);
  const path = databasePath(dataDir);
  makePrivateFile(path);
  const sqlite = new Database(path, { create: true, strict: true });
  sqlite.exec("PRAGMA busy_timeout = 5000");
  // Before WAL: on a new file this is the only moment auto_vacuum can be set without a VACUUM.
  sqlite.exec("PRAGMA auto_vacuum = INCREMENTAL");
  sqlite.exec("PRAGMA journal_mode = WAL");
  // A WAL that grew under a burst is cut back to this size once checkpointed, instead of staying at its peak.
  sqlite.exec(`PRAGMA journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
  sqlite.exec(`PRAGMA synchronous = ${opts.sync === "full" ? "FULL" : "NORMAL"}`);
  sqlite.exec("PRAGMA foreign_keys = ON");
  sqlite.exec("PRAGMA temp_store = MEMORY");
  useIncrementalVacuum(sqlite);
  // Without the schema, as on PostgreSQL (src/db/pg/open.ts): nothing uses drizzle's relational queries
  // (db.query.*), and building their config from every table cost tens of ms at each start (docs/performance.md, "Start-up").
  const db = drizzle(sqlite) as unknown as Db;
  migrate(db);
  return {
    db,
    sqlite,
    path,
    close() {
      try {
        sqlite.exec("PRAGMA optimize");
      } catch {}
      sqlite.close();
    },
  };
}

export const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

/**
 * Pages freed by retention go back to the file system only with
 * auto_vacuum=INCREMENTAL (src/db/sqlite/space.ts). A database made before that
 * setting needs one full VACUUM to take it; it runs once, on the first open
 * after the upgrade. Busy (another process holds the database): the next open tries again.
 */
function useIncrementalVacuum(sqlite: Database) {
  const mode = (sqlite.query("PRAGMA auto_vacuum").get() as { auto_vacuum: number }).auto_vacuum;
  if (mode === 2) return;
  try {
    sqlite.exec("VACUUM");
  } catch {}
}

/** Applies the migrations embedded at build time; same hashes as drizzle's file migrator. */
function migrate(db: Db) {
  const meta = migrations.map((m) => ({ sql: m.sql, bps: m.bps, folderMillis: m.folderMillis, hash: m.hash }));
  // drizzle's dialect.migrate is internal API (pinned drizzle-orm version; covered by the binary smoke test).
  const internal = db as unknown as { dialect: { migrate(m: unknown, s: unknown, c: unknown): void }; session: unknown };
  internal.dialect.migrate(meta, internal.session, { migrationsFolder: "" });
}
