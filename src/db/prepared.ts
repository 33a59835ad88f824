import type { Database } from "bun:sqlite";
import { sql, type SQL } from "drizzle-orm";
import { dialectOf } from "./dialect";
import type { Db } from "./db";

/**
 * Statements on the delivery hot path are built and compiled once per
 * database instead of per call: drizzle's query building plus SQLite's
 * prepare cost more than running the statement itself (measured: about 60%
 * of a delivery's CPU before this). Drizzle's `.prepare()` keeps them
 * dialect-neutral (run them with `await statement.execute(values)`).
 * PostgreSQL: built per call, never cached: a statement prepared on the root
 * db runs on the pool, outside the caller's transaction, while one built
 * inside transaction() is built on the transaction.
 */
export function preparedFor<T>(build: (db: Db) => T): (db: Db) => T {
  const cache = new WeakMap<Db, T>();
  return (db) => {
    if (dialectOf(db) === "postgres") return build(db);
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

/**
 * The bun:sqlite handle under a drizzle database, for the few batch
 * statements drizzle's builders cannot express (UPDATE … FROM json_each).
 * drizzle() attaches it as $client; the Db type (db.ts) does not spell it out.
 */
export function sqliteOf(db: Db): Database {
  return (db as unknown as { $client: Database }).$client;
}
