import { and, count, eq, sql } from "drizzle-orm";
import type { Db } from "../db/open";
import { deliveryAttempts, jobs } from "../db/schema";
import { deliverySql, type AttemptRow } from "../db/deliverySql";
import { preparedFor } from "../db/prepared";
import { newId } from "../contracts/ids";
import { insertQueuedAttempt } from "../domain/deliveries";
import { iso } from "../domain/clock";
import { refreshEventStatuses, type ChangedEvent } from "../domain/eventStatus";
import { recordIssueOutcomes, type OpenedIssue } from "../domain/issues";
import { recordEndpointHealth } from "../domain/endpoints";
import { settleMessages, type MessageSettlement } from "../domain/messages";

/**
 * The delivery queue is the delivery_attempts table (DESIGN.md, "The queue
 * is a table"): a `queued` row whose scheduled_at has come is work to do.
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
 * A claim's walk over destinations visits at most this many per row asked
 * for (and at least WALK_MIN_VISITS): when most destinations with rows
 * waiting have none due yet (their retries are scheduled later), a claim
 * still costs in proportion to its batch, and the next one goes on from
 * where it stopped.
 */
const WALK_VISITS_PER_ROW = 4;
const WALK_MIN_VISITS = 64;

/** Where the walk over destinations stands, per database: it goes round them in id order, claim after claim. */
interface WalkState {
  /** The last destination visited. */
  cursor?: string;
  /** The round in progress: where it began, and whether it has wrapped past the last destination id. */
  lap?: { start?: string; wrapped: boolean };
}
const walks = new WeakMap<Db, WalkState>();

/**
 * Claims up to `limit` due rows: queued rows whose time has come, and rows
 * whose lease expired, without `exclude` (destinations out of rate-limit
 * slots) and paused destinations. Its cost follows the batch, not the number
 * of destinations with rows waiting (docs/performance.md, "Outbound fan-out"):
 *
 * 1. The oldest `limit + 1` due rows are read from attempts_due_time (by
 *    scheduled_at): when there are no more than `limit`, every due row is in
 *    hand, and they are shared out in turns.
 * 2. Otherwise many rows are due, and a destination with a long backlog may
 *    hold all of the oldest. Destinations then take turns: a walk goes round
 *    the destinations with queued rows (attempts_due, a loose index scan: one
 *    seek each) from where the last claim stopped, one row of each; when it
 *    has been round them all with room left, more of each in turns. So one
 *    destination's backlog, or one slow endpoint, never starves another, and
 *    with 10,000 endpoints a batch of 128 visits about 128 of them. A walk
 *    visits at most WALK_VISITS_PER_ROW destinations per row asked for; rows
 *    it left room for are taken from the oldest due (step 1's).
 *
 * Rows within a destination go oldest first. Inside the caller's write
 * transaction (the worker's pump): the reads and the UPDATE must not be split
 * by another writer. SQLite dialect: atomic because SQLite has one writer. A
 * PostgreSQL implementation would select the ids with FOR UPDATE SKIP LOCKED
 * so several processes can claim side by side.
 */
export function claimBatch(db: Db, opts: ClaimOptions): ClaimResult {
  const s = deliverySql(db);
  const now = iso(opts.now);
  const limit = opts.limit;
  const skip = new Set(opts.exclude);
  for (const d of s.pausedDestinations.all()) skip.add(d.id);
  const cap = (destinationId: string) => (opts.oneEach?.has(destinationId) ? 1 : limit);
  const state = walks.get(db) ?? {};
  walks.set(db, state);

  const oldest = s.dueByTime.all(now, limit + 1);
  let claimed: AttemptRow[];
  let complete: boolean;
  if (oldest.length <= limit) {
    // Every due row is here.
    const byDestination = new Map<string, number[]>();
    for (const r of oldest) {
      if (skip.has(r.destinationId)) continue;
      const list = byDestination.get(r.destinationId) ?? [];
      if (list.length < cap(r.destinationId)) list.push(r.rowId);
      byDestination.set(r.destinationId, list);
    }
    claimed = loadInOrder(s, takeTurns([...byDestination.values()], limit));
    complete = true;
    state.lap = undefined;
  } else {
    const walk = walkDestinations(s, state, now, limit, skip, cap);
    claimed = takeTurns(walk.lists, limit);
    complete = walk.lapDone;
    if (claimed.length < limit) {
      // Room the walk did not fill (it stopped part way round): the oldest due rows.
      const taken = new Set(claimed.map((r) => r.rowId));
      const perDestination = new Map<string, number>();
      for (const r of claimed) perDestination.set(r.destinationId, (perDestination.get(r.destinationId) ?? 0) + 1);
      const extra: number[] = [];
      for (const r of oldest) {
        if (claimed.length + extra.length >= limit) break;
        const n = perDestination.get(r.destinationId) ?? 0;
        if (taken.has(r.rowId) || skip.has(r.destinationId) || n >= cap(r.destinationId)) continue;
        perDestination.set(r.destinationId, n + 1);
        extra.push(r.rowId);
      }
      claimed.push(...loadInOrder(s, extra));
    }
  }

  if (claimed.length < limit) claimed.push(...s.leaseExpired.all(now, limit - claimed.length));
  if (claimed.length === 0) return { rows: claimed, complete };
  const lease = iso(new Date(opts.now.getTime() + LEASE_MS));
  s.claim.run(JSON.stringify(claimed.map((r) => r.rowId)), lease);
  for (const row of claimed) row.leaseUntil = lease;
  return { rows: claimed, complete };
}

/** claimBatch's rows alone (tests and benchmarks). */
export function claimDue(db: Db, opts: ClaimOptions): AttemptRow[] {
  return claimBatch(db, opts).rows;
}

type Statements = ReturnType<typeof deliverySql>;

/**
 * Goes round the destinations with queued rows from where the last walk
 * stopped, one due row of each, until `limit` rows or the visit budget. When
 * it completes the round it began (this claim or an earlier one), the
 * destinations it took from this time give more rows each, in turns.
 */
function walkDestinations(s: Statements, state: WalkState, now: string, limit: number, skip: ReadonlySet<string>, cap: (d: string) => number) {
  const budget = Math.max(WALK_MIN_VISITS, limit * WALK_VISITS_PER_ROW);
  const lap = state.lap ?? { start: state.cursor, wrapped: false };
  const lists = new Map<string, AttemptRow[]>();
  let count = 0;
  let visits = 0;
  let lapDone = false;
  // Each step reads the next destination with its oldest queued row: one seek, and the row when it is due.
  let next = s.firstRowAfter.get(state.cursor ?? "");
  while (count < limit && visits < budget) {
    if (next === null) {
      if (lap.start === undefined || lap.wrapped) {
        lapDone = true;
        break;
      }
      lap.wrapped = true;
      next = s.firstRowAfter.get("");
      continue;
    }
    const d = next.destinationId;
    if (lap.wrapped && lap.start !== undefined && d > lap.start) {
      lapDone = true;
      break;
    }
    visits++;
    state.cursor = d;
    if (!skip.has(d) && next.scheduledAt <= now) {
      const { scheduledAt: _, ...row } = next;
      lists.set(d, [row]);
      count++;
    }
    next = s.firstRowAfter.get(d);
  }
  state.lap = lapDone ? undefined : lap;
  if (lapDone) {
    // Round them all with room left: more rows of each, in equal shares, until full or none has more.
    let active = [...lists.keys()].filter((d) => cap(d) > 1);
    while (count < limit && active.length > 0) {
      const share = Math.ceil((limit - count) / active.length);
      const more: string[] = [];
      for (const d of active) {
        const have = lists.get(d)!;
        const want = Math.min(share, cap(d) - have.length);
        const rows = s.dueOf.all(d, now, want, have.length);
        have.push(...rows);
        count += rows.length;
        if (rows.length === want && have.length < cap(d)) more.push(d);
      }
      active = more;
    }
  }
  return { lists: [...lists.values()], lapDone };
}

/** Round-robin over the lists (one of each in turn), up to `limit` items. */
function takeTurns<T>(lists: Iterable<T[]>, limit: number): T[] {
  const all = [...lists];
  const out: T[] = [];
  for (let turn = 0; out.length < limit; turn++) {
    let any = false;
    for (const list of all) {
      const item = list[turn];
      if (item === undefined) continue;
      any = true;
      out.push(item);
      if (out.length >= limit) break;
    }
    if (!any) break;
  }
  return out;
}

/** The rows of these rowids, in the order given. */
function loadInOrder(s: Statements, rowIds: number[]): AttemptRow[] {
  if (rowIds.length === 0) return [];
  const byRowId = new Map(s.rowsByRowId.all(JSON.stringify(rowIds)).map((r) => [r.rowId, r]));
  return rowIds.map((id) => byRowId.get(id)).filter((r): r is AttemptRow => r !== undefined);
}

const releaseStatement = preparedFor((db) =>
  db
    .update(a)
    .set({ status: "queued", leaseUntil: null })
    .where(and(eq(a.id, sql.placeholder("id")), eq(a.status, "delivering"), eq(a.leaseUntil, sql.placeholder("lease"))))
    .prepare(),
);

/** Hands claimed rows back untouched (no slot for their destination, or shutting down). Runs inside the caller's transaction. */
export function releaseClaims(db: Db, rows: Pick<AttemptRow, "id" | "leaseUntil">[]): void {
  const release = releaseStatement(db);
  for (const r of rows) release.run({ id: r.id, lease: r.leaseUntil });
}

/**
 * On start-up: rows a previous run of this process left `delivering` were
 * cut off mid-flight, so they are due again now (at-least-once). SQLite
 * serves one `serve` process; with several processes on PostgreSQL this
 * would be left to lease expiry instead.
 */
export async function releaseOrphanedClaims(db: Db): Promise<number> {
  const rows = await db
    .update(deliveryAttempts)
    .set({ status: "queued", leaseUntil: null })
    .where(eq(deliveryAttempts.status, "delivering"))
    .returning({ id: deliveryAttempts.id });
  return rows.length;
}

/**
 * When the next queued row that is not due yet at `now` becomes due; null
 * when none waits. One seek, however many destinations have rows queued.
 * Rows already due that a claim left alone belong to paused destinations
 * (resuming one wakes the worker) or to destinations out of rate-limit slots
 * (the worker's pacer knows when those come back).
 */
export function nextDueAt(db: Db, now: Date): Date | null {
  const at = deliverySql(db).nextScheduled.get(iso(now))?.at;
  return at ? new Date(at) : null;
}

/** Queue depth (queued or in flight) and the age of the oldest due queued row (paused destinations' included), for /metrics. */
export async function queueStats(db: Db, now: Date): Promise<{ depth: number; oldestDueSeconds: number }> {
  // Two equality counts: each is answered from its partial index alone.
  const [queued] = await db.select({ n: count() }).from(a).where(eq(a.status, "queued"));
  const [delivering] = await db.select({ n: count() }).from(a).where(eq(a.status, "delivering"));
  const at = deliverySql(db).oldestQueued.get()?.at;
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

const jobStatements = preparedFor((db) => ({
  countJob: db
    .update(jobs)
    .set({ succeeded: sql`${jobs.succeeded} + ${sql.placeholder("succeeded")}`, failed: sql`${jobs.failed} + ${sql.placeholder("failed")}` })
    .where(eq(jobs.id, sql.placeholder("id")))
    .prepare(),
}));

export interface RecordOptions {
  /** HOOKRELAY_ENDPOINT_DISABLE_AFTER: an application endpoint failing this long without a success is disabled. */
  endpointDisableAfterMs?: number;
}

/**
 * Records outcomes of finished deliveries: the row's request/response
 * details, the next try as a new queued row, the DLQ flag, replay job
 * counters, the statuses of the events concerned (outbound messages by
 * their counters, src/domain/messages.ts), the destinations' issues
 * (src/domain/issues.ts) and application endpoints' failure clocks
 * (src/domain/endpoints.ts). Inside the caller's
 * write transaction (the worker's pump), which it does not nest: a nested
 * one is a savepoint plus a drizzle transaction object, a cost per pump
 * that showed in profiles.
 */
export function recordOutcomes(db: Db, outcomes: AttemptOutcome[], now: Date, opts: RecordOptions = {}): RecordedOutcomes {
  const nowIso = iso(now);
  const s = jobStatements(db);
  const complete = deliverySql(db).complete;
  const settledEvents = new Set<string>();
  /** Chains without a connection are outbound messages' (src/domain/messages.ts); settled by counting, not by aggregating. */
  const settledMessages = new Map<string, MessageSettlement>();
  const jobCounts = new Map<string, { succeeded: number; failed: number }>();
  let stale = 0;
  let retriesQueued = 0;
  const failures: AttemptOutcome[] = [];
  const recorded: AttemptOutcome[] = [];
  const dlqScopes = new Map<string, { orgId: string; envId: string }>();
  for (const o of outcomes) {
    const a = o.attempt;
    const { changes } = complete.run(
      a.rowId,
      o.status,
      o.requestUrl,
      o.requestMethod,
      o.requestHeaders,
      o.requestBodySize,
      o.responseStatus,
      o.responseHeaders,
      o.responseBody,
      o.durationMs,
      o.error,
      o.errorDetail,
      o.retryAt ? iso(o.retryAt) : null,
      o.dlq ? 1 : 0,
      o.dlq ? nowIso : null,
      a.leaseUntil,
      a.id,
      iso(o.sentAt),
    );
    if (changes === 0) {
      stale++;
      continue;
    }
    recorded.push(o);
    if (o.dlq) dlqScopes.set(`${a.orgId} ${a.envId}`, { orgId: a.orgId, envId: a.envId });
    if (o.status === "failed") failures.push(o);
    if (o.retryAt) {
      retriesQueued++;
      insertQueuedAttempt(db, {
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
  for (const [id, c] of jobCounts) s.countJob.run({ id, ...c });
  const messages = settleMessages(db, settledMessages, now);
  for (const id of messages.unknown) settledEvents.add(id);
  const changedEvents = [...refreshEventStatuses(db, settledEvents), ...messages.changed];
  const health = recordEndpointHealth(db, recorded, now, opts.endpointDisableAfterMs);
  const openedIssues = [...recordIssueOutcomes(db, recorded, now), ...health.opened];
  return { changedEvents, settledJobIds: [...jobCounts.keys()], stale, retriesQueued, failures, openedIssues, dlqScopes: [...dlqScopes.values()], disabledDestinations: health.disabled };
}

