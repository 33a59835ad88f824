import type { RawValue } from "./codec";

/**
 * One consistent view of a whole database, for reading every table of it
 * as of one moment while writers go on: a read transaction held open on a
 * connection of its own (SQLite: a WAL read transaction; PostgreSQL:
 * REPEATABLE READ READ ONLY). Each dialect folder makes one
 * (src/db/sqlite/snapshot.ts, src/db/pg/snapshot.ts); the Store opens it.
 */
export interface PortableSnapshot {
  /** Which store the rows come from, for the archive's manifest ("sqlite" or "postgres"). */
  source: string;
  /**
   * Up to `limit` rows of `table` whose id follows `after` (null: from the
   * first), in the store's own order of the key, each row as the values of
   * `columns` in that order.
   */
  page(table: string, columns: string[], after: string | null, limit: number): Promise<RawValue[][]>;
  count(table: string): Promise<number>;
  close(): Promise<void>;
}

/** Names in SQL come from the schema, never from input; quoted all the same. */
export function quoted(name: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a table or column name: ${name}`);
  return `"${name}"`;
}

/** Runs `fn` on a snapshot of the store, closed after. */
export async function withSnapshot<T>(store: { snapshot(): Promise<PortableSnapshot> }, fn: (snapshot: PortableSnapshot) => Promise<T>): Promise<T> {
  const snapshot = await store.snapshot();
  try {
    return await fn(snapshot);
  } finally {
    await snapshot.close();
  }
}
