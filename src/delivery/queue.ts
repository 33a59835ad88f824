import { count, eq, sql } from "drizzle-orm";
import type { Db } from "../db/open";
import { deliveryAttempts, jobs } from "../db/schema";
import type { AttemptRow, ClaimedEvent, DestinationForDelivery } from "../db/deliverySql";
import { queueStoreOf } from "../db/queueStore";
import { newId } from "../contracts/ids";
import { insertQueuedAttempts, type AttemptInsert } from "../domain/deliveries";
import { iso } from "../core/clock";
import { failEventsLeftPending, refreshEventStatuses, type ChangedEvent } from "../domain/eventStatus";
import { recordIssueOutcomes, type OpenedIssue } from "../domain/issues";
import { recordEndpointHealth } from "../domain/endpointHealth";
import { settleMessages, type MessageSettlement } from "../domain/messageSettlement";

/**
 * The delivery queue is the delivery_attempts table (docs/decisions.md
 * D15): a `queued` row whose scheduled_at has come is work to do.
 * Claim it with a lease, deliver outside any transaction, then record the
 * outcome in one short write transaction: complete it, or mark it failed and
 * insert the next try, or move it to the DLQ.
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
 * (src/db/sqliteQueue.ts); PostgreSQL locks with FOR UPDATE SKIP LOCKED so
 * several claimers can claim side by side (src/db/pg/queueSql.ts).
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

/** What one delivery came to, as recorded on its row. */
export interface AttemptOutcome {
  attempt: AttemptRow;
  status: "success" | "failed";
  requestUrl: string;
  requestMethod: string;
  requestHeaders: string | null;
  requestBodySize: number;
  responseStatus: number | null;
  responseHeaders: string | null;
  responseBody: string | null;
  durationMs: number | null;
  /** When the request started (or, when nothing was sent, when it was attempted). */
  sentAt: Date;
  error: string | null;
  errorDetail: string | null;
  /** A failure that will be tried again at this time. */
  retryAt: Date | null;
  /** A failure that ends the chain in the DLQ. */
  dlq: boolean;
}

export interface RecordedOutcomes {
  /** Events whose status changed: published as `event.updated`. */
  changedEvents: ChangedEvent[];
  /** Replay jobs one of whose deliveries settled. */
  settledJobIds: string[];
  /** Rows whose lease had been lost (another claim took them over); nothing was written for them. */
  stale: number;
  /** Next tries queued by these outcomes. */
  retriesQueued: number;
  /** The failures recorded (retried, into the DLQ, or a replay's), for the log. */
  failures: AttemptOutcome[];
  /** Issues these outcomes opened or reopened: alert rules hear of them once committed. */
  openedIssues: OpenedIssue[];
  /** Environments where a delivery landed in the DLQ: their dlq rules are checked once committed. */
  dlqScopes: { orgId: string; envId: string }[];
  /** Destinations of application endpoints these outcomes disabled (HOOKRELAY_ENDPOINT_DISABLE_AFTER). */
  disabledDestinations: string[];
}

export interface RecordOptions {
  /** HOOKRELAY_ENDPOINT_DISABLE_AFTER: an application endpoint failing this long without a success is disabled. */
  endpointDisableAfterMs?: number;
}

/**
 * Records outcomes of finished deliveries: the row's request/response
 * details, the next try as a new queued row, the DLQ flag, replay job
 * counters, the statuses of the events concerned (outbound messages by
 * their counters, src/domain/messageSettlement.ts), the destinations' issues
 * (src/domain/issues.ts) and application endpoints' failure clocks
 * (src/domain/endpointHealth.ts). The rows are written a batch at a time (on
 * PostgreSQL one statement for the batch, and one multi-row INSERT for its
 * retries), only where the claim still holds the lease. Inside the caller's
 * write transaction (the worker's pump), which it does not nest: a nested
 * one is a savepoint, a cost per pump that showed in profiles.
 */
export async function recordOutcomes(db: Db, outcomes: AttemptOutcome[], now: Date, opts: RecordOptions = {}): Promise<RecordedOutcomes> {
  const nowIso = iso(now);
  const written = await queueStoreOf(db).recordOutcomes(
    outcomes.map((o) => ({
      attempt: o.attempt,
      status: o.status,
      requestUrl: o.requestUrl,
      requestMethod: o.requestMethod,
      requestHeaders: o.requestHeaders,
      requestBodySize: o.requestBodySize,
      responseStatus: o.responseStatus,
      responseHeaders: o.responseHeaders,
      responseBody: o.responseBody,
      durationMs: o.durationMs,
      error: o.error,
      errorDetail: o.errorDetail,
      nextRetryAt: o.retryAt ? iso(o.retryAt) : null,
      isDlq: o.dlq ? 1 : 0,
      dlqAt: o.dlq ? nowIso : null,
      sentAt: iso(o.sentAt),
    })),
  );
  const settledEvents = new Set<string>();
  /** Chains without a connection are outbound messages' (src/domain/messageSettlement.ts); settled by counting, not by aggregating. */
  const settledMessages = new Map<string, MessageSettlement>();
  const jobCounts = new Map<string, { succeeded: number; failed: number }>();
  let stale = 0;
  const retries: AttemptInsert[] = [];
  const failures: AttemptOutcome[] = [];
  const recorded: AttemptOutcome[] = [];
  const dlqScopes = new Map<string, { orgId: string; envId: string }>();
  for (const o of outcomes) {
    const a = o.attempt;
    if (!written.has(a.id)) {
      stale++;
      continue;
    }
    recorded.push(o);
    if (o.dlq) dlqScopes.set(`${a.orgId} ${a.envId}`, { orgId: a.orgId, envId: a.envId });
    if (o.status === "failed") failures.push(o);
    if (o.retryAt) {
      retries.push({
        id: newId("attempt"),
        orgId: a.orgId,
        envId: a.envId,
        eventId: a.eventId,
        connectionId: a.connectionId,
        destinationId: a.destinationId,
        requestUrl: a.requestUrl,
        requestMethod: a.requestMethod,
        status: "queued",
        attemptNumber: (a.attemptNumber ?? 1) + 1,
        triggerType: "retry",
        scheduledAt: iso(o.retryAt),
        noRetry: a.noRetry,
        forced: a.forced,
        jobId: a.jobId,
        createdAt: nowIso,
      });
      continue;
    }
    if (a.triggerType === "replay") {
      if (a.jobId) {
        const c = jobCounts.get(a.jobId) ?? { succeeded: 0, failed: 0 };
        if (o.status === "success") c.succeeded++;
        else c.failed++;
        jobCounts.set(a.jobId, c);
      }
      continue;
    }
    if (a.connectionId === null) {
      const m = settledMessages.get(a.eventId) ?? { settled: 0, dlq: 0 };
      m.settled++;
      if (o.dlq) m.dlq++;
      settledMessages.set(a.eventId, m);
      continue;
    }
    settledEvents.add(a.eventId);
  }
  await insertQueuedAttempts(db, retries);
  for (const [id, c] of jobCounts) await countJobDeliveries(db, id, c);
  const messages = await settleMessages(db, settledMessages, now);
  for (const id of messages.unknown) settledEvents.add(id);
  // A retry cancelled because its connection was deleted meanwhile (worker.ts) may leave its event with nothing to wait for.
  const cancelled = recorded.filter((o) => o.error === "connection_deleted").map((o) => o.attempt.eventId);
  const changedEvents = [...(await refreshEventStatuses(db, settledEvents)), ...(await failEventsLeftPending(db, cancelled)), ...messages.changed];
  const health = await recordEndpointHealth(db, recorded, now, opts.endpointDisableAfterMs);
  const openedIssues = [...(await recordIssueOutcomes(db, recorded, now)), ...health.opened];
  return {
    changedEvents,
    settledJobIds: [...jobCounts.keys()],
    stale,
    retriesQueued: retries.length,
    failures,
    openedIssues,
    dlqScopes: [...dlqScopes.values()],
    disabledDestinations: health.disabled,
  };
}

/** A replay job's counters: only replays count, a few rows a batch at most. */
async function countJobDeliveries(db: Db, jobId: string, c: { succeeded: number; failed: number }): Promise<void> {
  await db
    .update(jobs)
    .set({ succeeded: sql`${jobs.succeeded} + ${c.succeeded}`, failed: sql`${jobs.failed} + ${c.failed}` })
    .where(eq(jobs.id, jobId));
}
