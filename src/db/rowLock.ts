import { sql } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import { dialectOf } from "./dialect";
import type { Db } from "./db";
import { pgRows } from "./pg/rows";

/**
 * Inside a write transaction: holds the row `id` of `table` until the
 * COMMIT, after waiting for any other transaction that holds it, so a
 * read-check-write on that row (e.g. "the position is still where I read
 * it") cannot interleave with another one. SQLite: the write transaction
 * already excludes every other writer. PostgreSQL (READ COMMITTED): two
 * transactions would otherwise both pass the check; FOR UPDATE makes the
 * second wait and then read the first's committed row.
 */
export async function lockRow(db: Db, table: SQLiteTable, id: string): Promise<void> {
  if (dialectOf(db) !== "postgres") return;
  await pgRows(db, sql`SELECT 1 FROM ${table} WHERE id = ${id} FOR UPDATE`);
}
