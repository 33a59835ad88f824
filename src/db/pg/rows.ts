import { sql, type SQL } from "drizzle-orm";
import type { Db } from "../db";

/**
 * Runs a hand-written statement on PostgreSQL and returns its rows as the
 * server sent them (Bun.SQL: an array; bigint and count(*) as strings, so
 * the SQL casts what must be numbers). Through the root Db it runs in the
 * current transaction, if any (openPostgres).
 */
export async function pgRows<T>(db: Db, query: SQL): Promise<T[]> {
  return (await (db as unknown as { execute(q: SQL): Promise<T[]> }).execute(query)) as T[];
}

/**
 * A JS array as ONE parameter: drizzle would spread a bare array into a
 * list of parameters. Cast it in the SQL (`${pgArray(ids)}::text[]`);
 * Bun.SQL sends text, numbers, nulls and Uint8Arrays (for bytea[]) alike.
 */
export const pgArray = (values: readonly unknown[]): SQL => sql`${sql.param(values)}`;
