import { sql } from "drizzle-orm";
import { storeOf } from "../dialect";
import type { Db } from "../db";
import { onCommit, outsideTransaction, transaction } from "../transaction";
import { pgArray, pgRows } from "./rows";

/**
 * Counters kept in memory between flushes (docs/decisions.md D13, PostgreSQL only):
 * sources.request_count / event_count / last_event_at and
 * connections.event_count / last_event_at are moved by every ingest and
 * routing batch. Updated inside those transactions, a busy source's or
 * connection's row is one every node's batch waits on (its row lock is held
 * until each COMMIT). Instead each node adds what its committed batches
 * counted here and writes the sum every FLUSH_EVERY_MS in a short
 * transaction of its own, rows locked in id order (two nodes' flushes
 * cannot deadlock), so an ingest acknowledgement never waits on another
 * node's counter update.
 *
 * What a crash costs: up to FLUSH_EVERY_MS of counts of the node that died
 * (the events themselves are committed; only the counters lag). A clean stop
 * flushes (the store's close). A source WITH a request_limit is not counted
 * here: its request_count is the budget, kept exact inside the batch that
 * spends it (pg/ingestSql.ts). SQLite (one writer) counts inside the batch
 * as before and never has anything pending.
 *
 * Read-your-writes on one node: the API adds this node's pending counts to
 * what it read (pendingSourceCounts / pendingConnectionCounts); other nodes
 * see them after the next flush.
 */
export const FLUSH_EVERY_MS = 1000;

export interface SourceCount {
  requests: number;
  events: number;
  /** ISO time of the latest event counted, or "" when none. */
  last: string;
}

export interface ConnectionCount {
  events: number;
  last: string;
}

class PendingCounters {
  sources = new Map<string, SourceCount>();
  connections = new Map<string, ConnectionCount>();
  /** Taken by the flush running now, still shown to readers until it commits. */
  flushing: { sources: Map<string, SourceCount>; connections: Map<string, ConnectionCount> } | null = null;
  timer: ReturnType<typeof setInterval> | null = null;
  running: Promise<void> | null = null;

  constructor(readonly db: Db) {}
}

const byDb = new WeakMap<object, PendingCounters>();
/** Every store with counters pending, for the API's reads (ids are unique across stores). */
const live = new Set<PendingCounters>();

function pendingOf(db: Db): PendingCounters {
  const root = storeOf(db).root;
  let p = byDb.get(root);
  if (!p) {
    p = new PendingCounters(root);
    byDb.set(root, p);
  }
  return p;
}

function started(p: PendingCounters) {
  if (p.timer) return;
  live.add(p);
  // A timer made inside a transaction's call chain would carry it along.
  p.timer = outsideTransaction(() =>
    setInterval(() => {
      void flushCounters(p.db).catch(() => {
        // Kept for the next flush (flushCounters puts them back).
      });
    }, FLUSH_EVERY_MS),
  );
  p.timer.unref?.();
}

const later = (a: string, b: string) => (a > b ? a : b);

/** Counts these sources once the current transaction commits (nothing if it rolls back). `db`: the store's root. */
export function countSourcesLater(db: Db, counts: ReadonlyMap<string, SourceCount>): void {
  if (counts.size === 0) return;
  onCommit(db, () => {
    const p = pendingOf(db);
    for (const [id, c] of counts) addSource(p.sources, id, c);
    started(p);
  });
}

/** Counts these connections once the current transaction commits. */
export function countConnectionsLater(db: Db, counts: ReadonlyMap<string, ConnectionCount>): void {
  if (counts.size === 0) return;
  onCommit(db, () => {
    const p = pendingOf(db);
    for (const [id, c] of counts) addConnection(p.connections, id, c);
    started(p);
  });
}

function addSource(into: Map<string, SourceCount>, id: string, c: SourceCount) {
  const had = into.get(id);
  into.set(id, had ? { requests: had.requests + c.requests, events: had.events + c.events, last: later(had.last, c.last) } : { ...c });
}

function addConnection(into: Map<string, ConnectionCount>, id: string, c: ConnectionCount) {
  const had = into.get(id);
  into.set(id, had ? { events: had.events + c.events, last: later(had.last, c.last) } : { ...c });
}

/** This node's counts of a source not yet written (zeros when none). */
export function pendingSourceCounts(id: string): SourceCount {
  const sum: SourceCount = { requests: 0, events: 0, last: "" };
  for (const p of live) for (const m of [p.sources, p.flushing?.sources]) {
    const c = m?.get(id);
    if (c) Object.assign(sum, { requests: sum.requests + c.requests, events: sum.events + c.events, last: later(sum.last, c.last) });
  }
  return sum;
}

/** This node's counts of a connection not yet written (zeros when none). */
export function pendingConnectionCounts(id: string): ConnectionCount {
  const sum: ConnectionCount = { events: 0, last: "" };
  for (const p of live) for (const m of [p.connections, p.flushing?.connections]) {
    const c = m?.get(id);
    if (c) Object.assign(sum, { events: sum.events + c.events, last: later(sum.last, c.last) });
  }
  return sum;
}

/**
 * Writes the pending counts now, in one short transaction: the rows locked
 * in id order first, then one UPDATE … FROM unnest per table. On failure the
 * counts go back to wait for the next flush.
 */
export async function flushCounters(db: Db): Promise<void> {
  const p = byDb.get(storeOf(db).root);
  if (!p) return;
  while (p.running) await p.running;
  if (p.sources.size === 0 && p.connections.size === 0) return;
  const taken = { sources: p.sources, connections: p.connections };
  p.sources = new Map();
  p.connections = new Map();
  p.flushing = taken;
  p.running = outsideTransaction(() => writeCounts(p.db, taken))
    .catch((error) => {
      for (const [id, c] of taken.sources) addSource(p.sources, id, c);
      for (const [id, c] of taken.connections) addConnection(p.connections, id, c);
      throw error;
    })
    .finally(() => {
      p.flushing = null;
      p.running = null;
    });
  await p.running;
}

/** Flushes what is pending and stops the timer (the store is closing). */
export async function stopCounters(db: Db): Promise<void> {
  const p = byDb.get(storeOf(db).root);
  if (!p) return;
  if (p.timer) clearInterval(p.timer);
  p.timer = null;
  try {
    await flushCounters(db);
  } finally {
    live.delete(p);
  }
}

const byId = <T>(m: Map<string, T>) => [...m].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

async function writeCounts(db: Db, taken: { sources: Map<string, SourceCount>; connections: Map<string, ConnectionCount> }) {
  const sources = byId(taken.sources);
  const connections = byId(taken.connections);
  await transaction(db, async () => {
    if (sources.length > 0) {
      const ids = pgArray(sources.map(([id]) => id));
      await pgRows(db, sql`SELECT id FROM sources WHERE id = ANY(${ids}::text[]) ORDER BY id FOR UPDATE`);
      await pgRows(
        db,
        sql`UPDATE sources s SET request_count = s.request_count + u.requests, event_count = s.event_count + u.events,
                   last_event_at = CASE WHEN u.last = '' THEN s.last_event_at WHEN s.last_event_at IS NULL OR s.last_event_at < u.last THEN u.last ELSE s.last_event_at END
              FROM unnest(${ids}::text[], ${pgArray(sources.map(([, c]) => c.requests))}::int8[], ${pgArray(sources.map(([, c]) => c.events))}::int8[],
                          ${pgArray(sources.map(([, c]) => c.last))}::text[]) AS u(id, requests, events, last)
             WHERE s.id = u.id`,
      );
    }
    if (connections.length > 0) {
      const ids = pgArray(connections.map(([id]) => id));
      await pgRows(db, sql`SELECT id FROM connections WHERE id = ANY(${ids}::text[]) ORDER BY id FOR UPDATE`);
      await pgRows(
        db,
        sql`UPDATE connections c SET event_count = c.event_count + u.events,
                   last_event_at = CASE WHEN c.last_event_at IS NULL OR c.last_event_at < u.last THEN u.last ELSE c.last_event_at END
              FROM unnest(${ids}::text[], ${pgArray(connections.map(([, c]) => c.events))}::int8[], ${pgArray(connections.map(([, c]) => c.last))}::text[]) AS u(id, events, last)
             WHERE c.id = u.id`,
      );
    }
  });
}
