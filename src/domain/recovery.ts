import { and, asc, eq, gt, gte, inArray, lt, ne, or, sql, type SQL } from "drizzle-orm";
import { parseOrThrow, validation } from "../contracts/errors";
import { recoverInput, type RecoverInput, type RecoverStarted } from "../contracts/recover";
import { deliveryAttempts, destinations, events, jobs } from "../db/schema";
import type { Db } from "../db/db";
import { transaction } from "../db/transaction";
import { iso } from "../core/clock";
import { recordAudit } from "./audit";
import { requeueChain } from "./chainRequeue";
import type { Deps, Scope } from "./deps";
import { findDestinationRow } from "./destinations";
import { createJob, newJobRow, settleJobTotal, type JobRow } from "./jobs";

/**
 * Recovery by time (docs/delivery.md, "Recovering an outage"): every event
 * (an application endpoint's: every message) whose LATEST attempt at one
 * destination failed within [since, until) is sent there again, once, in
 * received order (received_at, then id), as a background job (trigger
 * `recover`, a fresh retry budget). A chain still retrying, one that
 * succeeded, and one whose last failure falls outside the window are left
 * alone. A destination's event is sent again through each connection whose
 * chain qualifies.
 *
 * When a failure happened is when its request was sent (sent_at; an attempt
 * that ended before sending: when it was attempted). The set is fixed when
 * the job starts: `until` is at most that moment, and every chain the job
 * starts is newer than the window, so walking the set twice sends nothing
 * twice. Replays (their own chains, never retried) are not recovered.
 *
 * Progress counts events: `succeeded` were queued again, `failed` could not
 * be (the destination is disabled). Rejected events (a forced delivery that
 * failed) are never sent again: the job counts them as `skipped`.
 */
export const RECOVER_BATCH = 100;
const CLOCK_SLACK_MS = 60_000;

export interface RecoverParams {
  destination_id: string;
  since: string;
  until: string;
}

/** What the walk is recovering, for the audit trail: the destination, or the endpoint behind it. */
export interface RecoverTarget {
  destination: typeof destinations.$inferSelect;
  resourceType: "destination" | "endpoint";
  resourceId: string;
}

const a = deliveryAttempts;

/**
 * Attempts that are the latest of their chain, failed, within the window.
 * The chain's later rows are looked up by the event index (attempts_event).
 */
function failedLatest(job: Pick<JobRow, "orgId" | "envId">, p: RecoverParams): SQL {
  const failedAt = sql`coalesce(${a.sentAt}, ${a.createdAt})`;
  const newer = sql`NOT EXISTS (SELECT 1 FROM delivery_attempts l WHERE l.event_id = ${a.eventId} AND l.destination_id = ${a.destinationId}
    AND (l.connection_id = ${a.connectionId} OR (l.connection_id IS NULL AND ${a.connectionId} IS NULL))
    AND coalesce(l.trigger_type, '') <> 'replay'
    AND (l.created_at > ${a.createdAt} OR (l.created_at = ${a.createdAt} AND l.id > ${a.id})))`;
  return and(
    eq(a.orgId, job.orgId),
    eq(a.envId, job.envId),
    eq(a.destinationId, p.destination_id),
    eq(a.status, "failed"),
    // A row is created before it is sent: this bound lets the destination index narrow the scan.
    lt(a.createdAt, p.until),
    gte(failedAt, p.since),
    lt(failedAt, p.until),
    or(sql`${a.triggerType} IS NULL`, ne(a.triggerType, "replay")),
    newer,
  )!;
}

async function countEvents(db: Db, job: Pick<JobRow, "orgId" | "envId">, p: RecoverParams, rejected: boolean): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`count(DISTINCT ${a.eventId})` })
    .from(a)
    .innerJoin(events, eq(events.id, a.eventId))
    .where(and(failedLatest(job, p), rejected ? eq(events.status, "rejected") : ne(events.status, "rejected")));
  return Number(row?.n ?? 0);
}

/** The window as given, checked: since within the retention period and not in the future, until at most now. */
export function recoveryWindow(deps: Deps, raw: RecoverInput): { since: string; until: string } {
  const input = parseOrThrow(recoverInput, raw, "Invalid recovery window");
  const now = deps.clock.now();
  const since = new Date(input.since);
  const oldest = new Date(now.getTime() - deps.settings.retentionDays * 86_400_000);
  if (since < oldest) {
    throw validation(`since must be within the retention period (${deps.settings.retentionDays} days): no earlier than ${iso(oldest)}`, [{ field: "body.since", message: `must not be before ${iso(oldest)}` }]);
  }
  if (since >= now) throw validation("since must be in the past", [{ field: "body.since", message: "must be in the past" }]);
  const until = input.until && new Date(input.until) < now ? new Date(input.until) : now;
  return { since: iso(since), until: iso(until) };
}

export async function startRecovery(deps: Deps, scope: Scope, target: RecoverTarget, raw: RecoverInput): Promise<RecoverStarted> {
  const window = recoveryWindow(deps, raw);
  const params: RecoverParams = { destination_id: target.destination.id, ...window };
  const total = await countEvents(deps.db, scope, params, false);
  const skipped = await countEvents(deps.db, scope, params, true);
  const job = newJobRow({ orgId: scope.orgId, envId: scope.envId, kind: "recover", params, total, skipped, now: deps.clock.now() });
  await transaction(deps.db, async () => {
    await createJob(deps, job);
    await recordAudit(deps, scope, { action: "recover", resourceType: target.resourceType, resourceId: target.resourceId, after: { job_id: job.id, since: params.since, until: params.until, total, skipped } });
  });
  return { job_id: job.id, total, skipped };
}

/** POST /v1/destinations/{id}/recover. */
export async function recoverDestination(deps: Deps, scope: Scope, rawId: string, input: RecoverInput): Promise<RecoverStarted> {
  const destination = await findDestinationRow(deps, scope, rawId);
  return startRecovery(deps, scope, { destination, resourceType: "destination", resourceId: destination.id }, input);
}

/** Sends the next batch of events again; returns true when the walk is over. */
export async function recoverStep(deps: Deps, job: JobRow): Promise<boolean> {
  const params = JSON.parse(job.params) as RecoverParams;
  const after = job.cursor ? (JSON.parse(job.cursor) as { t: string; id: string }) : null;
  const page = await deps.db
    .selectDistinct({ id: events.id, receivedAt: events.receivedAt })
    .from(a)
    .innerJoin(events, eq(events.id, a.eventId))
    .where(
      and(
        failedLatest(job, params),
        ne(events.status, "rejected"),
        after ? or(gt(events.receivedAt, after.t), and(eq(events.receivedAt, after.t), gt(events.id, after.id))) : undefined,
        // An attempt is made after its event is received: past the cursor's events, the destination index skips the attempts of those walked
        // (a minute early, for the clocks of nodes sharing a PostgreSQL database).
        after ? gte(a.createdAt, iso(new Date(Date.parse(after.t) - CLOCK_SLACK_MS))) : undefined,
      ),
    )
    .orderBy(asc(events.receivedAt), asc(events.id))
    .limit(RECOVER_BATCH);
  if (page.length === 0) {
    // Chains someone else started again meanwhile dropped out of the set: the job ends at what it walked.
    await settleJobTotal(deps, job.id);
    return true;
  }
  const chains = await deps.db
    .select({ eventId: a.eventId, connectionId: a.connectionId, orgId: a.orgId, envId: a.envId, destinationId: a.destinationId })
    .from(a)
    .where(and(failedLatest(job, params), inArray(a.eventId, page.map((e) => e.id))));
  const [target] = await deps.db
    .select({ url: destinations.url, method: destinations.httpMethod, status: destinations.status })
    .from(destinations)
    .where(eq(destinations.id, params.destination_id))
    .limit(1);
  const now = deps.clock.now();
  const last = page[page.length - 1]!;
  const cursor = JSON.stringify({ t: last.receivedAt, id: last.id });
  let succeeded = 0;
  await transaction(deps.db, async (tx) => {
    if (target && target.status !== "disabled") {
      // In received order: rows queued in this order are claimed in it (their ids sort by creation).
      for (const event of page) {
        let sent = false;
        for (const chain of chains.filter((c) => c.eventId === event.id)) {
          if ((await requeueChain(tx, chain, target, { triggerType: "recover", now, jobId: job.id })).queued) sent = true;
        }
        if (sent) succeeded++;
      }
    }
    await tx
      .update(jobs)
      .set({
        processed: sql`${jobs.processed} + ${page.length}`,
        succeeded: sql`${jobs.succeeded} + ${succeeded}`,
        failed: sql`${jobs.failed} + ${page.length - succeeded}`,
        cursor,
      })
      .where(eq(jobs.id, job.id));
  });
  if (succeeded > 0) deps.bus.publish({ type: "delivery.queued" });
  job.cursor = cursor;
  if (page.length < RECOVER_BATCH) {
    await settleJobTotal(deps, job.id);
    return true;
  }
  return false;
}
