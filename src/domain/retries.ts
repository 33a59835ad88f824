import { inScope } from "./scope";
import { and, eq, inArray, isNull, ne, or } from "drizzle-orm";
import { AppError, notFound } from "../contracts/errors";
import { normalizeId } from "../contracts/ids";
import { deliveryAttempts, events } from "../db/schema";
import { transaction, type Tx } from "../db/transaction";
import { eventView } from "../rules/eventView";
import { iso } from "../core/clock";
import { clearedDlqColumns, resumeLine } from "./ordering";
import { connectionsBySource, FilterRuleCache, filterVerdicts, newQueuedAttemptThrough, type SourceConnection } from "./deliveries";
import { recordAudit } from "./audit";
import type { Deps, Scope } from "./deps";

/**
 * Retrying an event: every connection of its source gets a delivery again
 * (spec: POST /events/:id/retry). The event's status is left as it is until
 * those deliveries settle (spec: "unchanged").
 *
 * Per connection:
 * - a delivery already outstanding is not doubled: a queued one waiting for
 *   its retry time is made due now, and reported as `queued`;
 * - otherwise the chain leaves the DLQ (is_dlq 0; dlq_at stays as history)
 *   and a new queued row starts it again, with a fresh retry budget;
 * - a disabled connection or destination, or a filter the event does not
 *   pass, is reported in `errors` instead.
 *
 * A rejected event (failed signature, schema_action reject) is never
 * delivered by a retry: it may be forged. An operator who has checked its
 * payload may force one event through (`force: true`); those deliveries are
 * marked `forced` and the event stays `rejected` (eventStatus.ts).
 */
export type RetryTrigger = "manual" | "bulk_retry";

export interface RetriedItem {
  destination_id: string;
  connection_id: string;
  attempt_id: string;
  status: "queued";
}

export interface RetryErrorItem {
  destination_id: string;
  connection_id: string;
  code: "connection_disabled" | "destination_disabled" | "filter_not_matched";
  message: string;
}

export interface RetryResult {
  retried: RetriedItem[];
  errors: RetryErrorItem[];
}

export type RetryEventRow = Pick<
  typeof events.$inferSelect,
  "id" | "orgId" | "envId" | "sourceId" | "status" | "verificationStatus" | "routedAt" | "body" | "headers" | "query" | "method" | "path" | "contentType"
>;

const notReplay = or(isNull(deliveryAttempts.triggerType), ne(deliveryAttempts.triggerType, "replay"));

/** Queues the retries of one event inside the caller's write transaction. */
export async function queueEventRetries(
  tx: Tx,
  args: {
    event: RetryEventRow;
    connections: SourceConnection[];
    trigger: RetryTrigger;
    now: Date;
    jobId?: string;
    /** Whether the event passes a connection's filter, decided before the transaction (filterVerdicts). */
    passes: (eventId: string, connectionId: string) => boolean;
    force?: boolean;
  },
): Promise<RetryResult> {
  const { event, now } = args;
  if (event.status === "rejected" && !args.force) throw rejectedConflict(event);
  const forced = event.status === "rejected";
  const nowIso = iso(now);
  const result: RetryResult = { retried: [], errors: [] };
  for (const c of args.connections) {
    const ids = { destination_id: c.destinationId, connection_id: c.id };
    if (c.enabled !== 1) {
      result.errors.push({ ...ids, code: "connection_disabled", message: `connection ${c.name} is disabled` });
      continue;
    }
    if (c.destinationStatus === "disabled") {
      result.errors.push({ ...ids, code: "destination_disabled", message: "the destination is disabled" });
      continue;
    }
    if (!args.passes(event.id, c.id)) {
      result.errors.push({ ...ids, code: "filter_not_matched", message: `the event does not pass the filter of connection ${c.name}` });
      continue;
    }
    const chain = and(eq(deliveryAttempts.eventId, event.id), eq(deliveryAttempts.connectionId, c.id), notReplay);
    const [outstanding] = await tx
      .select({ id: deliveryAttempts.id, status: deliveryAttempts.status, scheduledAt: deliveryAttempts.scheduledAt })
      .from(deliveryAttempts)
      .where(and(chain, inArray(deliveryAttempts.status, ["queued", "delivering"])))
      .limit(1);
    if (outstanding) {
      if (outstanding.status === "queued" && outstanding.scheduledAt > nowIso) {
        await tx.update(deliveryAttempts).set({ scheduledAt: nowIso }).where(eq(deliveryAttempts.id, outstanding.id));
      }
      result.retried.push({ ...ids, attempt_id: outstanding.id, status: "queued" });
      continue;
    }
    const cleared = await tx
      .update(deliveryAttempts)
      .set({ isDlq: 0 })
      .where(and(chain, eq(deliveryAttempts.isDlq, 1)))
      .returning(clearedDlqColumns);
    const row = newQueuedAttemptThrough(event, c, { triggerType: args.trigger, now, jobId: args.jobId, forced });
    await resumeLine(tx, cleared, row, nowIso);
    await tx.insert(deliveryAttempts).values(row);
    result.retried.push({ ...ids, attempt_id: row.id!, status: "queued" });
  }
  // Routed now: the router must not fan out a still-pending event a second time.
  if (result.retried.length > 0 && event.routedAt === null) {
    await tx.update(events).set({ routedAt: nowIso }).where(and(eq(events.id, event.id), isNull(events.routedAt)));
  }
  return result;
}

/** Full event rows (what filters need) for the given ids, within one scope. */
export async function loadRetryEvents(deps: Deps, scope: Pick<Scope, "orgId" | "envId">, ids: string[]): Promise<RetryEventRow[]> {
  if (ids.length === 0) return [];
  return deps.db
    .select({
      id: events.id,
      orgId: events.orgId,
      envId: events.envId,
      sourceId: events.sourceId,
      status: events.status,
      verificationStatus: events.verificationStatus,
      routedAt: events.routedAt,
      body: events.body,
      headers: events.headers,
      query: events.query,
      method: events.method,
      path: events.path,
      contentType: events.contentType,
    })
    .from(events)
    .where(and(inScope(events, scope), inArray(events.id, ids)));
}

/** Why a rejected event is not delivered, for people. */
export function rejectionReason(event: Pick<RetryEventRow, "verificationStatus">): string {
  return event.verificationStatus === "failed" ? "signature verification failed" : "its body failed the source's JSON Schema (schema_action reject)";
}

function rejectedConflict(event: Pick<RetryEventRow, "id" | "verificationStatus">): AppError {
  return new AppError("conflict", `event ${event.id} was rejected (${rejectionReason(event)}); it is never delivered unless retried with force: true`, {
    event_id: event.id,
    status: "rejected",
  });
}

/** POST /v1/events/{id}/retry; `force` delivers a rejected event too. */
export async function retryEvent(deps: Deps, scope: Scope, rawId: string, opts: { force?: boolean } = {}): Promise<RetryResult> {
  const id = normalizeId(rawId, "event", "Event");
  const [event] = await loadRetryEvents(deps, scope, [id]);
  if (!event) throw notFound("Event");
  if (event.status === "rejected" && !opts.force) throw rejectedConflict(event);
  const connections = (await connectionsBySource(deps.db, [event.sourceId])).get(event.sourceId) ?? [];
  const passes = await filterVerdicts([{ event, connections, view: () => eventView(event) }], new FilterRuleCache());
  const result = await transaction(deps.db, async (tx) => {
    const result = await queueEventRetries(tx, {
      event,
      connections,
      trigger: "manual",
      now: deps.clock.now(),
      passes,
      force: opts.force,
    });
    await recordAudit(deps, scope, { action: "retry", resourceType: "event", resourceId: event.id, after: { force: Boolean(opts.force), retried: result.retried.length } });
    return result;
  });
  if (result.retried.length > 0) deps.bus.publish({ type: "delivery.queued" });
  return result;
}
