import type { Db } from "./db";
import { dialectOf, type Dialect } from "./dialect";
import type { IngestSql } from "./ingestBatch";
import type { QueueStore } from "./queueStore";
import type { RoutingSql } from "./routingSql";
import { openPgStore, pgStatements } from "./pg/store";
import { openSqliteStore, sqliteStatements } from "./sqlite/store";
import type { DialectStatements, Store, StoreOptions } from "./store";

/**
 * The one place that knows both dialects (src/db/sqlite, src/db/pg, which
 * never import each other): the store is chosen here once, from the config;
 * and a handle (the root, or a transaction opened on it) finds its
 * dialect's statements here.
 */
export async function openStore(opts: StoreOptions): Promise<Store> {
  return opts.databaseUrl ? openPgStore(opts.databaseUrl) : openSqliteStore(opts);
}

const statements: Record<Dialect, DialectStatements> = { sqlite: sqliteStatements, postgres: pgStatements };

/** The delivery queue's storage on `db` (src/delivery/queue.ts). */
export function queueStoreOf(db: Db): QueueStore {
  return statements[dialectOf(db)].queue(db);
}

/** The routing hot path's statements on `db` (src/delivery/router.ts, src/domain/deliveries.ts). */
export function routingSql(db: Db): RoutingSql {
  return statements[dialectOf(db)].routing(db);
}

/** Ingest's statements on `db` (src/db/ingestStore.ts). */
export function ingestSqlOf(db: Db): IngestSql {
  return statements[dialectOf(db)].ingest(db);
}
