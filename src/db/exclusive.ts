import { sql } from "drizzle-orm";
import { dialectOf } from "./dialect";
import type { Db } from "./db";
import { pgRows } from "./pg/rows";
import { EXCLUSIVE_LOCKS, type ExclusiveName } from "./pg/lockKeys";
import { transaction, type Tx } from "./transaction";

/**
 * Runs `work` in a write transaction that no other transaction named
 * `name` runs beside, on any process sharing the database: for a
 * check-then-write that a unique key cannot guard (the admin bootstrap of
 * two nodes starting on one empty database). `work` re-checks inside.
 *
 * SQLite: every write transaction already runs alone (BEGIN IMMEDIATE).
 * PostgreSQL: a transaction-level advisory lock, taken first and freed at
 * commit or rollback.
 */
export async function exclusive<T>(db: Db, name: ExclusiveName, work: (tx: Tx) => Promise<T>): Promise<T> {
  return transaction(db, async (tx) => {
    if (dialectOf(db) === "postgres") await pgRows(tx, sql`SELECT pg_advisory_xact_lock(${EXCLUSIVE_LOCKS[name]})`);
    return work(tx);
  });
}
