import { count, eq } from "drizzle-orm";
import type { Db } from "../db/db";
import { deliveryAttempts } from "../db/schema";
import type { AttemptRow, ClaimedEvent, DestinationForDelivery } from "../db/deliverySql";
import { queueStoreOf } from "../db/statements";
import { iso } from "../core/clock";

/**
 * The delivery queue is the delivery_attempts table (docs/decisions.md
 * D15): a `queued` row whose scheduled_at has come is work to do.
 * Claim it with a lease, deliver outside any transaction, then record the
 * outcome in one short write transaction: complete it, or mark it failed and
 * insert the next try, or move it to the DLQ (src/delivery/outcomes.ts).
 */
const a = deliveryAttempts;
export type { AttemptRow };
/**
 * Longer than the largest destination timeout (300 s): a live worker always
 * finishes before its lease runs out; only a dead one lets a row become
 * claimable again.
 */
export const LEASE_MS = 10 * 60 * 1000;

export interface ClaimOptions {
  now: Date;
  limit: number;
  /** The claiming node (claimed_by): a survivor hands its rows back should it die. */
  claimedBy?: string | null;
  /** Destinations to leave alone this time (out of rate-limit slots). */
  exclude: string[];
  /** One row at most of each of these destinations (rate-limited ones: more would only be handed back). */
  oneEach?: ReadonlySet<string>;
}

export interface ClaimResult {
  rows: AttemptRow[];
  /**
   * Whether the claim saw every claimable due row: when it also took fewer
   * than `limit`, nothing more is due now (the worker may sleep until the
   * next row comes due). False when it stopped part way round the
   * destinations with rows waiting; the next claim goes on from there.
   */
  complete: boolean;
}

/**
 * Claims up to `limit` due rows: queued rows whose time has come, and rows
 * whose lease expired, without `exclude` (destinations out of rate-limit
 * slots) and paused destinations, fairly across destinations: one
 * destination's backlog never starves another's, and a claim costs in
 * proportion to its batch, not to the number of destinations with rows
 * waiting. Each claimed row is `delivering` with a lease of LEASE_MS.
 * SQLite walks the destinations with its prepared statements
 * (src/db/sqlite/queue.ts); PostgreSQL locks with FOR UPDATE SKIP LOCKED so
 * several claimers can claim side by side (src/db/pg/queue.ts).
 *
 * Inside the caller's write transaction (the worker's pump): the claim's
 * reads and its UPDATE must not be split by another writer.
 */
export async function claimBatch(db: Db, opts: ClaimOptions): Promise<ClaimResult> {
  return queueStoreOf(db).claim({
    now: iso(opts.now),
    lease: iso(new Date(opts.now.getTime() + LEASE_MS)),
    limit: opts.limit,
    claimedBy: opts.claimedBy ?? null,
    exclude: new Set(opts.exclude),
    oneEach: opts.oneEach,
  });
}

/** claimBatch's rows alone (tests and benchmarks). */
export async function claimDue(db: Db, opts: ClaimOptions): Promise<AttemptRow[]> {
  return (await claimBatch(db, opts)).rows;
}

/** Hands claimed rows back untouched (no slot for their destination, or shutting down). Runs inside the caller's transaction. */
export async function releaseClaims(db: Db, rows: Pick<AttemptRow, "id" | "leaseUntil">[]): Promise<void> {
  if (rows.length > 0) await queueStoreOf(db).release(rows);
}

/**
 * On start-up: rows a previous run left `delivering` were cut off mid-flight,
 * so they are due again now (at-least-once). SQLite has one `serve` process
 * per database: every claim. PostgreSQL may have other live nodes: only the
 * claims of gone nodes and expired leases, never a live node's.
 */
export async function releaseOrphanedClaims(db: Db, now: Date): Promise<number> {
  return queueStoreOf(db).releaseOrphaned(iso(now));
}

/**
 * Every few seconds on each node: the claims of nodes that are gone (their
 * heartbeat late by NODE_TIMEOUT_MS, or stopped) and of expired leases go
 * back to the queue, so survivors deliver them. A no-op on SQLite (one node).
 */
export async function releaseClaimsOfGoneNodes(db: Db, now: Date): Promise<number> {
  return queueStoreOf(db).releaseGone(iso(now));
}

/** This node's own claims back to the queue (its shutdown deadline passed with deliveries in flight). */
export async function releaseClaimsOf(db: Db, nodeId: string): Promise<number> {
  return queueStoreOf(db).releaseClaimsOf(nodeId);
}

/** The events of a claimed batch (retention may have pruned some meanwhile: those are missing). */
export async function loadClaimedEvents(db: Db, rows: readonly AttemptRow[]): Promise<ClaimedEvent[]> {
  return queueStoreOf(db).loadEvents([...new Set(rows.map((r) => r.eventId))]);
}

/** A destination as the worker sends with it (with its application endpoint's settings, if any). */
export async function destinationForDelivery(db: Db, destinationId: string): Promise<DestinationForDelivery | undefined> {
  return queueStoreOf(db).destinationForDelivery(destinationId);
}

/**
 * When the next queued row that is not due yet at `now` becomes due; null
 * when none waits. One seek, however many destinations have rows queued.
 * Rows already due that a claim left alone belong to paused destinations
 * (resuming one wakes the worker) or to destinations out of rate-limit slots
 * (the worker's pacer knows when those come back).
 */
export async function nextDueAt(db: Db, now: Date): Promise<Date | null> {
  const at = await queueStoreOf(db).nextScheduledAfter(iso(now));
  return at ? new Date(at) : null;
}

/** Queue depth (queued or in flight) and the age of the oldest due queued row (paused destinations' included), for /metrics. */
export async function queueStats(db: Db, now: Date): Promise<{ depth: number; oldestDueSeconds: number }> {
  // Two equality counts: each is answered from its partial index alone.
  const [queued] = await db.select({ n: count() }).from(a).where(eq(a.status, "queued"));
  const [delivering] = await db.select({ n: count() }).from(a).where(eq(a.status, "delivering"));
  const at = await queueStoreOf(db).oldestQueued();
  const oldest = at ? new Date(at) : null;
  return {
    depth: (queued?.n ?? 0) + (delivering?.n ?? 0),
    oldestDueSeconds: oldest && oldest <= now ? (now.getTime() - oldest.getTime()) / 1000 : 0,
  };
}
