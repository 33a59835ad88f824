import { sql } from "drizzle-orm";
import type { DialectStatements, DialectStore, StoreOptions } from "../store";
import { sqliteIngestSql } from "./ingestSql";
import { openDatabase } from "./open";
import { sqliteQueue } from "./queue";
import { sqliteRoutingSql } from "./routingSql";
import { reclaimFreePages } from "./space";
import { openSqliteSnapshot } from "./snapshot";

export const sqliteStatements: DialectStatements = {
  queue: sqliteQueue,
  routing: sqliteRoutingSql,
  ingestSql: sqliteIngestSql,
  reclaimFreePages,
};

/** The data dir's SQLite file: one serve process at a time (serve.lock), so never shared. */
export function openSqliteStore(opts: StoreOptions): DialectStore {
  const file = openDatabase(opts.dataDir, { sync: opts.sync });
  return {
    ...sqliteStatements,
    dialect: "sqlite",
    db: file.db,
    shared: false,
    sqlite: { handle: file.sqlite, path: file.path },
    location: file.path,
    async snapshot() {
      return openSqliteSnapshot(file.path);
    },
    async ping() {
      file.db.run(sql`select 1`);
    },
    async close() {
      file.close();
    },
  };
}
