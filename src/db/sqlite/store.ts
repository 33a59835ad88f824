import { sql } from "drizzle-orm";
import type { DialectStatements, Store, StoreOptions } from "../store";
import { sqliteIngestSql } from "./ingestSql";
import { openDatabase } from "./open";
import { sqliteQueue } from "./queue";
import { sqliteRoutingSql } from "./routingSql";

export const sqliteStatements: DialectStatements = {
  queue: sqliteQueue,
  routing: sqliteRoutingSql,
  ingest: sqliteIngestSql,
};

/** The data dir's SQLite file: one serve process at a time (serve.lock), so never shared. */
export function openSqliteStore(opts: StoreOptions): Store {
  const file = openDatabase(opts.dataDir, { sync: opts.sync });
  return {
    ...sqliteStatements,
    dialect: "sqlite",
    db: file.db,
    shared: false,
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
