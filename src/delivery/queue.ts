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

/** Destinations that have queued rows, paused ones and `exclude` left out. */
function claimableDestinations(db: Db, exclude: Iterable<string>): string[] {
  const s = deliverySql(db);
  const skip = new Set(exclude);
  for (const d of s.pausedDestinations.all()) skip.add(d.id);
  const out: string[] = [];
  let next = s.firstQueuedDestination.get()?.id ?? null;
  while (next !== null) {
    if (!skip.has(next)) out.push(next);
    next = s.nextQueuedDestination.get(next)?.id ?? null;
  }
  return out;
}

export interface ClaimOptions {
  now: Date;
  limit: number;
  /** Destinations to leave alone this time (out of rate-limit slots). */
  exclude: string[];
  /** One row at most of each of these destinations (rate-limited ones: more would only be handed back). */
  oneEach?: ReadonlySet<string>;
}

/**
 * Claims up to `limit` due rows: queued rows whose time has come, and rows
 * whose lease expired. Rows of paused destinations and of `exclude`
 * (destinations out of rate-limit slots) stay queued and cost nothing: rows
 * are looked up per destination, so a paused destination with a backlog of
 * 100k is never scanned. Destinations take turns (one row each in turn, oldest
 * first within each), so one destination's backlog never starves another's.
 *
 * Inside the caller's write transaction (the worker's pump): the read and
 * the UPDATE must not be split by another writer. SQLite dialect: atomic
 * because SQLite has one writer. A PostgreSQL implementation would select
 * the ids with FOR UPDATE SKIP LOCKED so several processes can claim side
 * by side.
 */
export function claimDue(db: Db, opts: ClaimOptions): AttemptRow[] {
  const s = deliverySql(db);
  const now = iso(opts.now);
  const lease = iso(new Date(opts.now.getTime() + LEASE_MS));
  const perDestination = claimableDestinations(db, opts.exclude).map((destinationId) =>
    s.dueOf.all(destinationId, now, opts.oneEach?.has(destinationId) ? 1 : opts.limit),
  );
  const claimed: AttemptRow[] = [];
  for (let turn = 0; claimed.length < opts.limit; turn++) {
    let any = false;
    for (const rows of perDestination) {
      const row = rows[turn];
      if (!row) continue;
      any = true;
      claimed.push(row);
      if (claimed.length >= opts.limit) break;
    }
    if (!any) break;
  }
  if (claimed.length < opts.limit) claimed.push(...s.leaseExpired.all(now, opts.limit - claimed.length));
  if (claimed.length === 0) return claimed;
  s.claim.run(JSON.stringify(claimed.map((r) => r.rowId)), lease);
  for (const row of claimed) row.leaseUntil = lease;
  return claimed;
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

/** When the next queued row not in `exclude` (nor of a paused destination) becomes due; null when none is queued. */
export function nextDueAt(db: Db, exclude: string[]): Date | null {
  const s = deliverySql(db);
  let first: string | null = null;
  for (const destinationId of claimableDestinations(db, exclude)) {
    const at = s.firstScheduledOf.get(destinationId)?.at;
    if (at && (first === null || at < first)) first = at;
  }
  return first ? new Date(first) : null;
}

/** Queue depth (queued or in flight) and the age of the oldest due queued row, for /metrics. */
export async function queueStats(db: Db, now: Date): Promise<{ depth: number; oldestDueSeconds: number }> {
  // Two equality counts: each is answered from its partial index alone.
  const [queued] = await db.select({ n: count() }).from(a).where(eq(a.status, "queued"));
  const [delivering] = await db.select({ n: count() }).from(a).where(eq(a.status, "delivering"));
  const oldest = nextDueAt(db, []);
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
  const openedIssues = [...recordIssueOutcomes(db, recorded, now), ...recordEndpointHealth(db, recorded, now, opts.endpointDisableAfterMs)];
  return { changedEvents, settledJobIds: [...jobCounts.keys()], stale, retriesQueued, failures, openedIssues, dlqScopes: [...dlqScopes.values()] };
}

