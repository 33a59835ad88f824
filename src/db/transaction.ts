import type { Db } from "./open";

/** The transaction handle drizzle passes to a bun:sqlite transaction callback. */
export type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];

/**
 * Runs `work` in one SQLite write transaction (BEGIN IMMEDIATE … COMMIT, or
 * ROLLBACK when it throws).
 *
 * Why synchronous: bun:sqlite is a synchronous driver, and drizzle's
 * `db.transaction(async (tx) => { await … })` commits when the callback
 * returns its promise, before any awaited statement runs; awaited statements
 * then run outside the transaction and a throw rolls nothing back. So
 * atomic multi-statement writes use the sync forms (`.run()`, `.all()`,
 * `.get()`) inside `work`, and `work` must not return a promise.
 * A PostgreSQL implementation of this function would be async.
 */
export function writeTransaction<T>(db: Db, work: (tx: Tx) => T): T {
  const result = db.transaction((tx) => {
    const out = work(tx);
    if (out instanceof Promise) throw new Error("writeTransaction: work must be synchronous (see src/db/transaction.ts)");
    return out;
  }, { behavior: "immediate" });
  return result as T;
}
