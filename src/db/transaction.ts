import { AsyncLocalStorage } from "node:async_hooks";
import { sql } from "drizzle-orm";
import type { Database } from "bun:sqlite";
import { registerHandle, storeOf, type StoreHandle } from "./dialect";
import type { Db } from "./db";
import { sqliteOf } from "./prepared";

/** What a transaction's work receives: a Db whose statements run inside it. */
export type Tx = Db;

/**
 * The transaction the current async call chain is in, per store. On
 * PostgreSQL the root Db is a proxy that sends every statement made inside
 * the chain to the transaction's connection (openPostgres), so domain code
 * that writes `deps.db` inside `transaction(...)` cannot slip out of it; on
 * SQLite there is one connection, and a nested call becomes a savepoint.
 */
interface Frame {
  handle: StoreHandle;
  tx: Db;
  open: boolean;
  savepoints: number;
  /** Run once the outermost transaction has committed (onCommit). */
  committed: (() => void)[];
}
const frames = new AsyncLocalStorage<Frame>();

/** The open transaction of this call chain on `handle`'s store, if any. */
export function currentTx(handle: StoreHandle): Db | undefined {
  const frame = frames.getStore();
  return frame?.open && frame.handle === handle ? frame.tx : undefined;
}

/**
 * Runs `fn` once what this call chain wrote has committed: at once outside a
 * transaction; after the COMMIT inside one; never when the transaction, or
 * the savepoint it was registered in, rolls back. For effects outside the
 * database that must follow the data (e.g. counters kept in memory).
 */
export function onCommit(db: Db, fn: () => void): void {
  const frame = frames.getStore();
  if (frame?.open && frame.handle === storeOf(db)) frame.committed.push(fn);
  else fn();
}

/**
 * Inside a transaction: runs `work`, and once the transaction has committed,
 * hands what `work` registered with onCommit to `schedule` (e.g. setImmediate:
 * after the continuations the commit resumes) instead of running it at the
 * COMMIT. Outside a transaction: runs `work` alone.
 */
export async function committedThrough<T>(schedule: (run: () => void) => void, work: () => Promise<T>): Promise<T> {
  const frame = frames.getStore();
  if (!frame?.open) return work();
  const before = frame.committed.length;
  const out = await work();
  const registered = frame.committed.splice(before);
  if (registered.length > 0) frame.committed.push(() => schedule(() => registered.forEach((fn) => fn())));
  return out;
}

function runCommitted(frame: Frame) {
  for (const fn of frame.committed) fn();
}

/** Runs `fn` outside any transaction of this call chain (work scheduled from inside one that outlives it). */
export function outsideTransaction<T>(fn: () => T): T {
  return frames.exit(fn);
}

/**
 * Runs `work` in one write transaction: committed when its promise resolves,
 * rolled back when it rejects. Called inside another transaction of the same
 * store, it is a savepoint of that one. `work` awaits database statements
 * only (no outgoing HTTP, no timers): on SQLite the transaction holds the one
 * writer while it runs.
 */
export async function transaction<T>(db: Db, work: (tx: Tx) => Promise<T>): Promise<T> {
  const handle = storeOf(db);
  const frame = frames.getStore();
  if (frame?.open && frame.handle === handle) return savepoint(frame, work);
  return handle.dialect === "postgres" ? postgresTransaction(handle, work) : sqliteTransaction(handle, work);
}

// ---------------------------------------------------------------- SQLite

/**
 * bun:sqlite is synchronous and drizzle's bun-sqlite transaction commits
 * when its callback returns a promise, so an async transaction is written
 * here: BEGIN IMMEDIATE, the awaited work, COMMIT. One connection serves the
 * process, so transactions (and write turns, writeTurn.ts) take turns
 * through a gate; a statement outside any transaction is not held up by it.
 * On that one connection, such a statement run while a transaction is open
 * (only another call chain resumed in the same microtask drain can: the
 * work awaits nothing but statements, which bun:sqlite answers at once) is
 * part of it, and would be undone by its rollback. Writes that must not
 * share another's fate go through transaction() themselves.
 */
const gates = new WeakMap<Database, Gate>();

class Gate {
  private tail: Promise<void> = Promise.resolve();
  acquire(): Promise<() => void> {
    const previous = this.tail;
    let release!: () => void;
    this.tail = new Promise<void>((r) => (release = r));
    return previous.then(() => release);
  }
}

function gateOf(sqlite: Database): Gate {
  let gate = gates.get(sqlite);
  if (!gate) gates.set(sqlite, (gate = new Gate()));
  return gate;
}

async function sqliteTransaction<T>(handle: StoreHandle, work: (tx: Tx) => Promise<T>): Promise<T> {
  const db = handle.root;
  const sqlite = sqliteOf(db);
  const release = await gateOf(sqlite).acquire();
  const frame: Frame = { handle, tx: db, open: true, savepoints: 0, committed: [] };
  try {
    sqlite.exec("BEGIN IMMEDIATE");
    try {
      const out = await frames.run(frame, () => work(db));
      frame.open = false;
      sqlite.exec("COMMIT");
      runCommitted(frame);
      return out;
    } catch (error) {
      frame.open = false;
      if (sqlite.inTransaction) sqlite.exec("ROLLBACK");
      throw error;
    }
  } finally {
    frame.open = false;
    release();
  }
}

// ---------------------------------------------------------------- PostgreSQL

type PgTransactional = { transaction<T>(work: (tx: Db) => Promise<T>): Promise<T> };

async function postgresTransaction<T>(handle: StoreHandle, work: (tx: Tx) => Promise<T>): Promise<T> {
  const frame: Frame = { handle, tx: handle.root, open: true, savepoints: 0, committed: [] };
  try {
    const out = await (handle.root as unknown as PgTransactional).transaction((tx) => {
      registerHandle(tx, handle);
      frame.tx = tx;
      return frames.run(frame, () => work(tx));
    });
    frame.open = false;
    runCommitted(frame);
    return out;
  } finally {
    frame.open = false;
  }
}

// ---------------------------------------------------------------- nesting

async function savepoint<T>(frame: Frame, work: (tx: Tx) => Promise<T>): Promise<T> {
  const name = `sp_${++frame.savepoints}`;
  const exec = (statement: string) => runRaw(frame, statement);
  const committedBefore = frame.committed.length;
  await exec(`SAVEPOINT ${name}`);
  try {
    const out = await work(frame.tx);
    await exec(`RELEASE SAVEPOINT ${name}`);
    return out;
  } catch (error) {
    // What the savepoint's work meant to do after the commit is rolled back with it.
    frame.committed.length = committedBefore;
    await exec(`ROLLBACK TO SAVEPOINT ${name}`);
    await exec(`RELEASE SAVEPOINT ${name}`);
    throw error;
  }
}

async function runRaw(frame: Frame, statement: string): Promise<void> {
  if (frame.handle.dialect === "sqlite") {
    sqliteOf(frame.handle.root).exec(statement);
    return;
  }
  await (frame.tx as unknown as { execute(q: unknown): Promise<unknown> }).execute(sql.raw(statement));
}

/**
 * The synchronous SQLite transaction the hot paths used before the seam
 * (docs/decisions.md D12 moves them to `transaction`); SQLite only, `work` must not
 * return a promise.
 */
export function writeTransaction<T>(db: Db, work: (tx: Tx) => T): T {
  if (storeOf(db).dialect !== "sqlite") throw new Error("writeTransaction is SQLite-only; use transaction()");
  const result = db.transaction((tx) => {
    const out = work(tx as unknown as Db);
    if (out instanceof Promise) throw new Error("writeTransaction: work must be synchronous");
    return out;
  }, { behavior: "immediate" });
  return result as T;
}
