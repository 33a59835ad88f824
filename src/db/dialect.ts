import type { Db } from "./db";

/**
 * Which store a drizzle handle belongs to. Domain code never asks: it awaits
 * drizzle queries that read the same on both. Only src/db (transactions,
 * the hot paths' SQL) picks its statements by dialect.
 */
export type Dialect = "sqlite" | "postgres";

/** One open store: its dialect and the handle every query of it starts from. */
export interface StoreHandle {
  dialect: Dialect;
  /** The Db handed to domain code (on PostgreSQL a proxy that follows the current transaction). */
  root: Db;
}

const handles = new WeakMap<object, StoreHandle>();

/** Registers `db` (a root handle, or a transaction opened on one) as belonging to `handle`. */
export function registerHandle(db: object, handle: StoreHandle): void {
  handles.set(db, handle);
}

export function storeOf(db: Db): StoreHandle {
  const handle = handles.get(db);
  if (handle) return handle;
  // A bun:sqlite drizzle database opened without openStore (a few tests and scripts): its own root.
  const own: StoreHandle = { dialect: "sqlite", root: db };
  handles.set(db, own);
  return own;
}

export function dialectOf(db: Db): Dialect {
  return storeOf(db).dialect;
}
