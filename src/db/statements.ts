import type { Db } from "./db";
import { dialectOf, type Dialect } from "./dialect";
import type { IngestSql } from "./ingestBatch";
import type { QueueStore } from "./queueStore";
import type { RoutingSql } from "./routingSql";
import { pgStatements } from "./pg/store";
import { sqliteStatements } from "./sqlite/store";
import type { DialectStatements } from "./store";

/**
 * A handle (a store's root, or a transaction opened on it) finds its
 * dialect's hot-path statements here: one table instead of a switch on the
 * dialect in every caller. With openStore.ts, the only files that know both
 * dialect folders.
 */
const statements: Record<Dialect, DialectStatements> = { sqlite: sqliteStatements, postgres: pgStatements };

/** The delivery queue's storage on `db` (src/delivery/queue.ts). */
export function queueStoreOf(db: Db): QueueStore {
  return statements[dialectOf(db)].queue(db);
}

/** The routing hot path's statements on `db` (src/delivery/router.ts, src/domain/deliveries.ts). */
export function routingSql(db: Db): RoutingSql {
  return statements[dialectOf(db)].routing(db);
}

/** After retention's deletes: the pages they freed back to the file system (src/db/sqlite/space.ts); answers how many. */
export function reclaimFreePages(db: Db): Promise<number> {
  return statements[dialectOf(db)].reclaimFreePages(db);
}

/** Ingest's statements on `db` (src/db/ingestStore.ts). */
export function ingestSqlOf(db: Db): IngestSql {
  return statements[dialectOf(db)].ingestSql(db);
}
