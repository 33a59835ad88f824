import { and, count, eq, gte, inArray, lt, type SQL } from "drizzle-orm";
import type { ListAttemptsQuery } from "../contracts/deliveryAttempts";
import type { ListEventsQuery } from "../contracts/events";
import { normalizeIdOrNull } from "../contracts/ids";
import type { Db } from "../db/db";
import { sumOf } from "../db/portableSql";
import { attemptCounts, eventCounts, eventHours, events } from "../db/schema";
import type { Scope } from "./deps";
import { inScope } from "./scope";

/**
 * `pagination.total` of the event and attempt lists from the counters the
 * database keeps as rows are written (src/db/schema/counts.ts), so a page
 * costs the same at a million stored events as at a thousand: a sum over
 * the few counter rows that match instead of a count of every matching row
 * (docs/performance.md, "Reads at scale"). The count is exact, as the spec's
 * `total` is. A time range (`after`/`before`, with `status` or nothing else)
 * is counted from the hourly rollup of events (src/db/schema/rollups.ts) for
 * its whole hours and from the rows of the hours cut at its ends. A filter
 * neither keys on (a search, a time range with another filter, an event id)
 * answers null: the caller counts the matching rows, as before, bounded by
 * that filter's own index.
 */
export async function countedEvents(db: Db, scope: Scope, q: ListEventsQuery): Promise<number | null> {
  if (q.search) return null;
  if (q.after || q.before) return countedEventsInRange(db, scope, q);
  if (otherScope(scope, q)) return 0;
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

/** An org_id or env_id filter naming another scope than the caller's: nothing of it is visible. */
const otherScope = (scope: Scope, q: ListEventsQuery) => (!!q.org_id && q.org_id !== scope.orgId) || (!!q.env_id && q.env_id !== scope.envId);

const HOUR_MS = 3600_000;
/** The rollup's hour key: the first 13 characters of the ISO time ("2026-03-10T07"). */
const hourKey = (ms: number) => new Date(ms).toISOString().slice(0, 13);

/**
 * Events received in [after, before) (either end open), of the given
 * statuses: the rollup's rows for the hours wholly inside, plus a count of
 * the rows in the part-hours at either end (at most two hours of rows,
 * through events_scope_received). Null when another filter applies, or when
 * the range holds no whole hour (its rows are few to count).
 */
async function countedEventsInRange(db: Db, scope: Scope, q: ListEventsQuery): Promise<number | null> {
  if (q.source_id || q.verification_status || q.dedup_status || q.method) return null;
  if (otherScope(scope, q)) return 0;
  const after = q.after ? Date.parse(q.after) : null;
  const before = q.before ? Date.parse(q.before) : null;
  // The whole hours: from the first hour starting at or after `after` to the last ending at or before `before`.
  const firstWhole = after === null ? null : Math.ceil(after / HOUR_MS) * HOUR_MS;
  const wholeEnd = before === null ? null : Math.floor(before / HOUR_MS) * HOUR_MS;
  if (firstWhole !== null && wholeEnd !== null && firstWhole >= wholeEnd) return null;
  const statuses = q.status ? inArray(eventHours.status, q.status) : undefined;
  const [whole] = await db
    .select({ n: sumOf(eventHours.n) })
    .from(eventHours)
    .where(
      and(
        inScope(eventHours, scope),
        firstWhole === null ? undefined : gte(eventHours.hour, hourKey(firstWhole)),
        wholeEnd === null ? undefined : lt(eventHours.hour, hourKey(wholeEnd)),
        statuses,
      ),
    );
  const rowsIn = async (from: number, to: number) => {
    if (from >= to) return 0;
    const [row] = await db
      .select({ n: count() })
      .from(events)
      .where(inScope(events, scope, gte(events.receivedAt, new Date(from).toISOString()), lt(events.receivedAt, new Date(to).toISOString()), q.status ? inArray(events.status, q.status) : undefined));
    return row?.n ?? 0;
  };
  const head = after !== null && firstWhole !== null ? await rowsIn(after, firstWhole) : 0;
  const tail = before !== null && wholeEnd !== null ? await rowsIn(wholeEnd, before) : 0;
  return (whole?.n ?? 0) + head + tail;
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
