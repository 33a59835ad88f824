import { sql, type SQL } from "drizzle-orm";
import type { Db } from "./open";

/**
 * Statements on the delivery hot path are built and compiled once per
 * database instead of per call: drizzle's query building plus SQLite's
 * prepare cost more than running the statement itself (measured: about 60%
 * of a delivery's CPU before this). Drizzle's `.prepare()` keeps them
 * dialect-neutral; a PostgreSQL build prepares the same way.
 */
export function preparedFor<T>(build: (db: Db) => T): (db: Db) => T {
  const cache = new WeakMap<Db, T>();
  return (db) => {
    let statements = cache.get(db);
    if (!statements) {
      statements = build(db);
      cache.set(db, statements);
    }
    return statements;
  };
}

/** A named placeholder usable where drizzle expects SQL (e.g. in `.set()`). */
export const ph = (name: string): SQL => sql`${sql.placeholder(name)}`;
