import { ingestStoreOf } from "./ingestStore";
import { openPgStore } from "./pg/store";
import { openSqliteStore } from "./sqlite/store";
import type { Store, StoreOptions } from "./store";

/**
 * The store is chosen here, once, from the config: PostgreSQL with a
 * database URL, else the data dir's SQLite file. The dialect folders
 * (src/db/sqlite, src/db/pg) never import each other; this file and
 * statements.ts are the only ones that know both.
 */
export async function openStore(opts: StoreOptions): Promise<Store> {
  const store = opts.databaseUrl ? await openPgStore(opts.databaseUrl) : openSqliteStore(opts);
  return { ...store, ingest: ingestStoreOf(store.db) };
}
