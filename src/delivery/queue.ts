import { and, asc, count, eq, inArray, lt, min, sql } from "drizzle-orm";
import { newId } from "../contracts/ids";
import type { Db } from "../db/open";
import { deliveryAttempts, destinations, jobs } from "../db/schema";
import { ph, preparedFor, sqliteOf } from "../db/prepared";
import { writeTransaction } from "../db/transaction";
import { insertQueuedAttempt } from "../domain/deliveries";
import { iso } from "../domain/clock";
import { refreshEventStatuses, type ChangedEvent } from "../domain/eventStatus";

/**
 * The delivery queue is the delivery_attempts table (DESIGN.md, "The queue
 * is a table"): a `queued` row whose scheduled_at has come is work to do.
 * Claim it with a lease, deliver outside any transaction, then record the
 * outcome in one short write transaction: complete it, or mark it failed and
 * insert the next try, or move it to the DLQ.
 */
const a = deliveryAttempts;
/** What a worker needs of a claimed row (fewer columns: less to read back and map per claim). */
const claimedColumns = {
  id: a.id,
  orgId: a.orgId,
  envId: a.envId,
  eventId: a.eventId,
  connectionId: a.connectionId,
  destinationId: a.destinationId,
  requestUrl: a.requestUrl,
  requestMethod: a.requestMethod,
  attemptNumber: a.attemptNumber,
  triggerType: a.triggerType,
  noRetry: a.noRetry,
  jobId: a.jobId,
  leaseUntil: a.leaseUntil,
};
export type AttemptRow = Pick<typeof deliveryAttempts.$inferSelect, keyof typeof claimedColumns>;

/**
 * Longer than the largest destination timeout (300 s): a live worker always
 * finishes before its lease runs out; only a dead one lets a row become
 * claimable again.
 */
export const LEASE_MS = 10 * 60 * 1000;

const queueStatements = preparedFor((db) => ({
  // A loose index scan over attempts_due (destination_id, scheduled_at WHERE queued): one seek per destination.
  firstQueuedDestination: db.select({ id: min(a.destinationId) }).from(a).where(eq(a.status, "queued")).prepare(),
  nextQueuedDestination: db
    .select({ id: min(a.destinationId) })
    .from(a)
    .where(and(eq(a.status, "queued"), sql`${a.destinationId} > ${sql.placeholder("after")}`))
    .prepare(),
  pausedDestinations: db.select({ id: destinations.id }).from(destinations).where(eq(destinations.status, "paused")).prepare(),
  dueOf: db
    .select(claimedColumns)
    .from(a)
    .where(and(eq(a.status, "queued"), eq(a.destinationId, sql.placeholder("destinationId")), sql`${a.scheduledAt} <= ${sql.placeholder("now")}`))
    .orderBy(asc(a.scheduledAt))
    .limit(sql.placeholder("limit"))
    .prepare(),
  firstScheduledOf: db
    .select({ at: a.scheduledAt })
    .from(a)
    .where(and(eq(a.status, "queued"), eq(a.destinationId, sql.placeholder("destinationId"))))
    .orderBy(asc(a.scheduledAt))
    .limit(1)
    .prepare(),
  leaseExpired: db
    .select(claimedColumns)
    .from(a)
    .where(and(eq(a.status, "delivering"), lt(a.leaseUntil, sql.placeholder("now"))))
    .limit(sql.placeholder("limit"))
    .prepare(),
  // The whole batch in one statement: its rows were just read in this same write transaction.
  claim: db
    .update(a)
    .set({ status: "delivering", leaseUntil: ph("lease") })
    .where(sql`${a.id} in (select value from json_each(${sql.placeholder("ids")}))`)
    .prepare(),
}));

/** Destinations that have queued rows, paused ones and `exclude` left out. */
function claimableDestinations(db: Db, exclude: Iterable<string>): string[] {
  const s = queueStatements(db);
  const skip = new Set(exclude);
  for (const d of s.pausedDestinations.all()) skip.add(d.id);
  const out: string[] = [];
  let next = s.firstQueuedDestination.get()?.id ?? null;
  while (next !== null) {
    if (!skip.has(next)) out.push(next);
    next = s.nextQueuedDestination.get({ after: next })?.id ?? null;
  }
  return out;
}

/**
 * Claims up to `limit` due rows: queued rows whose time has come, and rows
 * whose lease expired. Rows of paused destinations and of `exclude`
 * (destinations out of rate-limit slots) stay queued and cost nothing: rows
 * are looked up per destination, so a paused destination with a backlog of
 * 100k is never scanned. Destinations take turns (one row each in turn, oldest
 * first within each), so one destination's backlog never starves another's.
 *
 * SQLite dialect: reads and updates in one write transaction, atomic because
 * SQLite has one writer. A PostgreSQL implementation would select the ids
 * with FOR UPDATE SKIP LOCKED so several processes can claim side by side.
 */
export function claimDue(db: Db, opts: { now: Date; limit: number; exclude: string[] }): AttemptRow[] {
  const s = queueStatements(db);
  const now = iso(opts.now);
  const lease = iso(new Date(opts.now.getTime() + LEASE_MS));
  return writeTransaction(db, () => {
    const perDestination = claimableDestinations(db, opts.exclude).map((destinationId) => s.dueOf.all({ destinationId, now, limit: opts.limit }));
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
    if (claimed.length < opts.limit) claimed.push(...s.leaseExpired.all({ now, limit: opts.limit - claimed.length }));
    if (claimed.length === 0) return claimed;
    s.claim.run({ ids: JSON.stringify(claimed.map((r) => r.id)), lease });
    for (const row of claimed) row.leaseUntil = lease;
    return claimed;
  });
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
  const s = queueStatements(db);
  let first: string | null = null;
  for (const destinationId of claimableDestinations(db, exclude)) {
    const at = s.firstScheduledOf.get({ destinationId })?.at;
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
}

const outcomeStatements = preparedFor((db) => ({
  /**
   * Records a batch of outcomes in one statement (SQLite: UPDATE … FROM
   * json_each; PostgreSQL would use unnest). Only the claim that holds the
   * lease may record: a row re-claimed after its lease ran out belongs to
   * the new claim. The unary `+`s keep the planner driving from the batch with
   * id lookups: left to itself, once ANALYZE has seen attempts_leased nearly
   * empty, it scans that index and the whole batch for each row (measured:
   * 85 µs per outcome instead of 10).
   */
  complete: sqliteOf(db).prepare<{ id: string }, [string]>(
    `UPDATE delivery_attempts
        SET status = o.value ->> 'status', request_url = o.value ->> 'requestUrl', request_method = o.value ->> 'requestMethod',
            request_headers = o.value ->> 'requestHeaders', request_body_size = o.value ->> 'requestBodySize',
            response_status = o.value ->> 'responseStatus', response_headers = o.value ->> 'responseHeaders',
            response_body = o.value ->> 'responseBody', duration_ms = o.value ->> 'durationMs', error = o.value ->> 'error',
            error_detail = o.value ->> 'errorDetail', next_retry_at = o.value ->> 'nextRetryAt', is_dlq = o.value ->> 'isDlq',
            dlq_at = o.value ->> 'dlqAt', lease_until = NULL
       FROM json_each(?1) AS o
      WHERE delivery_attempts.id = o.value ->> 'id' AND +delivery_attempts.status = 'delivering'
        AND +delivery_attempts.lease_until = o.value ->> 'lease'
      RETURNING delivery_attempts.id`,
  ),
  countJob: db
    .update(jobs)
    .set({ succeeded: sql`${jobs.succeeded} + ${sql.placeholder("succeeded")}`, failed: sql`${jobs.failed} + ${sql.placeholder("failed")}` })
    .where(eq(jobs.id, sql.placeholder("id")))
    .prepare(),
}));

/**
 * Records outcomes of finished deliveries in one write transaction: the
 * row's request/response details, the next try as a new queued row, the
 * DLQ flag, replay job counters and the statuses of the events concerned.
 */
export function recordOutcomes(db: Db, outcomes: AttemptOutcome[], now: Date): RecordedOutcomes {
  const nowIso = iso(now);
  const s = outcomeStatements(db);
  return writeTransaction(db, () => {
    const settledEvents = new Set<string>();
    const jobCounts = new Map<string, { succeeded: number; failed: number }>();
    const rows = outcomes.map((o) => ({
      id: o.attempt.id,
      lease: o.attempt.leaseUntil,
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
    }));
    const recorded = new Set(s.complete.all(JSON.stringify(rows)).map((r) => r.id));
    let stale = 0;
    for (const o of outcomes) {
      const a = o.attempt;
      if (!recorded.has(a.id)) {
        stale++;
        continue;
      }
      if (o.retryAt) {
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
      settledEvents.add(a.eventId);
    }
    for (const [id, c] of jobCounts) s.countJob.run({ id, ...c });
    const changedEvents = refreshEventStatuses(db, settledEvents);
    return { changedEvents, settledJobIds: [...jobCounts.keys()], stale };
  });
}
