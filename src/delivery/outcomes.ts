import { eq, sql } from "drizzle-orm";
import type { Db } from "../db/db";
import { jobs } from "../db/schema";
import type { AttemptRow } from "../db/deliverySql";
import type { AttemptResult } from "../db/queueStore";
import { queueStoreOf } from "../db/statements";
import { newId } from "../contracts/ids";
import { insertQueuedAttempts, type AttemptInsert } from "../domain/deliveries";
import { iso } from "../core/clock";
import type { AttemptTrace } from "./attemptSpan";
import { failEventsLeftPending, refreshEventStatuses, type ChangedEvent } from "../domain/eventStatus";
import { recordIssueOutcomes, type OpenedIssue } from "../domain/issues";
import { recordEndpointHealth } from "../domain/endpointHealth";
import { moveLinesOn } from "../domain/ordering";
import type { HeadClaim } from "../db/orderingLanes";
import { settleMessages, type MessageSettlement } from "../domain/messageSettlement";

/**
 * What one delivery came to: the store's result (src/db/queueStore.ts) with
 * the whole claimed row, and times as dates.
 */
export interface AttemptOutcome extends AttemptResult {
  attempt: AttemptRow;
  /** When the request started (or, when nothing was sent, when it was attempted). */
  sentAt: Date;
  /** A failure that will be tried again at this time. */
  retryAt: Date | null;
  /** A failure that ends the chain in the DLQ. */
  dlq: boolean;
  /** The attempt's span when traced: the log line of its failure carries these ids (docs/observability.md). */
  trace?: AttemptTrace;
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
  /** Ordered deliveries queued because the head before them settled (src/domain/ordering.ts). */
  promoted: number;
  /** With RecordOptions.claimNext: the next heads of settled lines, claimed for the caller (not counted in `promoted`). */
  claimedHeads: AttemptRow[];
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
  /**
   * The worker's claim: the next row of each ordered line whose head settled is claimed for it here,
   * in this transaction, instead of being queued for its next claim (src/db/orderingLanes.ts, claimNextHeads).
   */
  claimNext?: HeadClaim;
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
  const settledLanes = new Set<string>();
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
        // The next try stays its line's head (docs/delivery.md, "Ordered delivery").
        orderingLane: a.orderingLane,
        orderingKey: a.orderingKey,
        orderingHold: a.orderingHold,
        createdAt: nowIso,
      });
      continue;
    }
    if (a.orderingLane !== null && !(o.dlq && a.orderingHold === 1)) settledLanes.add(a.orderingLane);
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
  // Settled heads: the next row of each line is queued, in this same transaction.
  const lines = await moveLinesOn(db, settledLanes, nowIso, opts.claimNext);
  for (const [id, c] of jobCounts) await countJobDeliveries(db, id, c);
  const messages = await settleMessages(db, settledMessages, now);
  for (const id of messages.unknown) settledEvents.add(id);
  // A retry cancelled because its connection was deleted meanwhile (deliver.ts) may leave its event with nothing to wait for.
  const cancelled = recorded.filter((o) => o.error === "connection_deleted").map((o) => o.attempt.eventId);
  const changedEvents = [...(await refreshEventStatuses(db, settledEvents)), ...(await failEventsLeftPending(db, cancelled)), ...messages.changed];
  const health = await recordEndpointHealth(db, recorded, now, opts.endpointDisableAfterMs);
  const openedIssues = [...(await recordIssueOutcomes(db, recorded, now)), ...health.opened];
  return {
    changedEvents,
    settledJobIds: [...jobCounts.keys()],
    stale,
    retriesQueued: retries.length,
    promoted: lines.queued,
    claimedHeads: lines.claimed,
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
