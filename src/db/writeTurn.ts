import { storeOf } from "./dialect";
import type { Db } from "./db";
import { currentTx, outsideTransaction, transaction } from "./transaction";

/**
 * One write transaction per event-loop turn, shared by the hot writers of
 * `serve` (ingest's group commit and the delivery pump): whatever asks for a
 * write during a turn runs in the same transaction once the turn's I/O is
 * done. On SQLite a commit's cost is the pages it writes, and these writers
 * dirty the same newest pages, so two commits a turn cost nearly twice one
 * (docs/performance.md, fifth round); on PostgreSQL one commit stands for
 * many round trips.
 *
 * Each unit that shares its turn runs in a savepoint of its own: one that
 * throws is rolled back alone and its promise rejects; the others still
 * commit. If BEGIN or COMMIT fails, every unit of the turn rejects with that
 * error. A promise resolves only after the COMMIT, so a caller that answers
 * after it answers with its writes on disk. Work awaits database statements
 * only (transaction.ts).
 */
interface Unit {
  work: () => unknown;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/**
 * The units waiting for the next turn of each store; the first to arrive
 * schedules it, after the turn in progress (if any) has committed. One turn
 * at a time per process: on SQLite the one writer makes it so anyway; on
 * PostgreSQL it is what makes the group commit a group (what arrives while a
 * turn commits waits for the next, rather than starting turns of one event
 * each that queue up on the same rows).
 */
interface Turns {
  units: Unit[];
  previous: Promise<void>;
}
const turns = new WeakMap<object, Turns>();

export function inWriteTurn<T>(db: Db, work: () => T | Promise<T>): Promise<T> {
  const handle = storeOf(db);
  // Already inside a transaction of this store: the work is part of it (a turn would wait for it to end).
  if (currentTx(handle)) return transaction(db, async () => work());
  let turn = turns.get(handle);
  if (!turn) turns.set(handle, (turn = { units: [], previous: Promise.resolve() }));
  const current = turn;
  return new Promise<T>((resolve, reject) => {
    if (current.units.push({ work, resolve: resolve as (value: unknown) => void, reject }) === 1) {
      current.previous = outsideTransaction(() => current.previous.then(() => new Promise<void>((turnDone) => setImmediate(() => void runTurn(handle.root, current).finally(turnDone)))));
    }
  });
}

type Settled = { ok: true; value: unknown } | { ok: false; error: unknown };

async function runTurn(db: Db, turn: Turns) {
  const units = turn.units;
  // A unit that asks for another write while it runs gets the next turn.
  turn.units = [];
  // Alone in its turn, a unit needs no savepoint: its rollback is the transaction's. (A savepoint
  // copies every page it is the first to change into a journal in memory.)
  const alone = units.length === 1;
  const settled: Settled[] = [];
  try {
    await transaction(db, async () => {
      if (alone) return void settled.push({ ok: true, value: await units[0]!.work() });
      for (const unit of units) {
        try {
          // Nested: a SAVEPOINT, rolled back alone when it throws.
          settled.push({ ok: true, value: await transaction(db, async () => unit.work()) });
        } catch (error) {
          settled.push({ ok: false, error });
        }
      }
    });
  } catch (error) {
    for (const unit of units) unit.reject(error);
    return;
  }
  units.forEach((unit, i) => {
    const s = settled[i]!;
    if (s.ok) unit.resolve(s.value);
    else unit.reject(s.error);
  });
}
