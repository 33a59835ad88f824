import { and, eq, inArray, type SQL } from "drizzle-orm";
import type { ListAttemptsQuery } from "../contracts/deliveryAttempts";
import type { ListEventsQuery } from "../contracts/events";
import { normalizeIdOrNull } from "../contracts/ids";
import type { Db } from "../db/db";
import { sumOf } from "../db/portableSql";
import { attemptCounts, eventCounts } from "../db/schema";
import type { Scope } from "./deps";
import { inScope } from "./scope";

/**
 * `pagination.total` of the event and attempt lists from the counters the
 * database keeps as rows are written (src/db/schema/counts.ts), so a page
 * costs the same at a million stored events as at a thousand: a sum over
 * the few counter rows that match instead of a count of every matching row
 * (docs/performance.md, "Reads at scale"). The count is exact, as the spec's
 * `total` is. A filter the counters do not key on (a time range, a search,
 * an event id) answers null: the caller counts the matching rows, as
 * before, bounded by that filter's own index.
 */
export async function countedEvents(db: Db, scope: Scope, q: ListEventsQuery): Promise<number | null> {
  if (q.after || q.before || q.search) return null;
  if ((q.org_id && q.org_id !== scope.orgId) || (q.env_id && q.env_id !== scope.envId)) return 0;
  const conds: (SQL | undefined)[] = [];
  if (q.source_id) {
    const id = normalizeIdOrNull(q.source_id, "source");
    if (!id) return 0;
    conds.push(eq(eventCounts.sourceId, id));
  }
  if (q.status) conds.push(inArray(eventCounts.status, q.status));
  if (q.verification_status) conds.push(inArray(eventCounts.verificationStatus, q.verification_status));
  if (q.dedup_status) conds.push(inArray(eventCounts.dedupStatus, q.dedup_status));
  if (q.method) conds.push(inArray(eventCounts.method, q.method));
  const [row] = await db
    .select({ n: sumOf(eventCounts.n) })
    .from(eventCounts)
    .where(and(inScope(eventCounts, scope), ...conds));
  return row?.n ?? 0;
}

/** As countedEvents, for GET /v1/delivery-attempts (an event_id filter counts through attempts_event). */
export async function countedAttempts(db: Db, scope: Scope, q: ListAttemptsQuery): Promise<number | null> {
  if (q.event_id !== undefined) return null;
  const conds: (SQL | undefined)[] = [];
  if (q.destination_id !== undefined) {
    const id = normalizeIdOrNull(q.destination_id, "destination");
    if (!id) return 0;
    conds.push(eq(attemptCounts.destinationId, id));
  }
  if (q.connection_id !== undefined) {
    const id = normalizeIdOrNull(q.connection_id);
    if (!id) return 0;
    conds.push(eq(attemptCounts.connectionId, id));
  }
  if (q.status) conds.push(eq(attemptCounts.status, q.status));
  if (q.is_dlq !== undefined) conds.push(eq(attemptCounts.isDlq, q.is_dlq));
  if (q.trigger_type) conds.push(eq(attemptCounts.triggerType, q.trigger_type));
  const [row] = await db
    .select({ n: sumOf(attemptCounts.n) })
    .from(attemptCounts)
    .where(and(inScope(attemptCounts, scope), ...conds));
  return row?.n ?? 0;
}
