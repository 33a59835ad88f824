import type { Database } from "bun:sqlite";
import type { Db } from "./open";
import { sqliteOf } from "./prepared";

/**
 * One write transaction per event-loop turn, shared by the hot writers of
 * `serve` (ingest's group commit and the delivery pump): whatever asks for a
 * write during a turn runs in the same BEGIN IMMEDIATE … COMMIT once the
 * turn's I/O is done. A commit's cost is the pages it writes, and these
 * writers dirty the same newest pages (the events and attempts just inserted
 * are the ones being completed), so two commits a turn cost nearly twice one
 * (docs/performance.md, fifth round).
 *
 * Each unit that shares its turn runs in a savepoint of its own: one that
 * throws is rolled back alone and its promise rejects; the others still
 * commit. If BEGIN or COMMIT fails, every unit of the turn rejects with that
 * error. A promise resolves only after the COMMIT, so a caller that answers
 * after it answers with its writes on disk. Work must be synchronous (see
 * transaction.ts).
 */
interface Unit {
  work: () => unknown;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/** The units waiting for the next turn of each database; the first to arrive schedules it. */
const turns = new WeakMap<Database, { units: Unit[] }>();

export function inWriteTurn<T>(db: Db, work: () => T): Promise<T> {
  const sqlite = sqliteOf(db);
  let turn = turns.get(sqlite);
  if (!turn) turns.set(sqlite, (turn = { units: [] }));
  const current = turn;
  return new Promise<T>((resolve, reject) => {
    if (current.units.push({ work, resolve: resolve as (value: unknown) => void, reject }) === 1) setImmediate(() => runTurn(sqlite, current));
  });
}

type Settled = { ok: true; value: unknown } | { ok: false; error: unknown };

function runTurn(sqlite: Database, turn: { units: Unit[] }) {
  const units = turn.units;
  // A unit that asks for another write while it runs gets the next turn.
  turn.units = [];
  // Alone in its turn, a unit needs no savepoint: its rollback is the transaction's. (A savepoint
  // copies every page it is the first to change into a journal in memory.)
  const alone = units.length === 1;
  const settled: Settled[] = [];
  try {
    sqlite
      .transaction(() => {
        if (alone) return void settled.push({ ok: true, value: synchronous(units[0]!.work) });
        for (const unit of units) {
          try {
            // Nested: bun:sqlite makes it a SAVEPOINT, rolled back alone when it throws.
            settled.push({ ok: true, value: sqlite.transaction(() => synchronous(unit.work))() });
          } catch (error) {
            settled.push({ ok: false, error });
          }
        }
      })
      .immediate();
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

function synchronous(work: () => unknown): unknown {
  const out = work();
  if (out instanceof Promise) throw new Error("inWriteTurn: work must be synchronous (see src/db/transaction.ts)");
  return out;
}
