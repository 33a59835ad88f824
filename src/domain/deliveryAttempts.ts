import { inScope } from "./scope";
import { never } from "../db/portableSql";
import { and, count, eq, isNotNull, sql, type SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { ATTEMPT_STATUSES, type DeliveryAttempt, type ListAttemptsQuery } from "../contracts/deliveryAttempts";
import { normalizeIdOrNull } from "../contracts/ids";
import { connections, deliveryAttempts, destinations } from "../db/schema";
import type { Deps, Scope } from "./deps";
import { countedAttempts } from "./listTotals";
import { paginate } from "./paging";

type AttemptRow = typeof deliveryAttempts.$inferSelect;
type JoinedRow = { attempt: AttemptRow; connectionName: string | null; destinationName: string | null };

/** What a portal link is told when a delivery was refused by the guard or could not connect. */
export const PORTAL_UNREACHABLE_DETAIL = "the endpoint could not be reached: check that its URL names a public address that accepts connections";

/**
 * An attempt as a portal link sees it: a refused or unreachable target gets
 * one generic detail, so the texts (which address a name resolved to,
 * "connection refused" against "host unreachable") do not map the
 * operator's network (docs/outbound.md, "What a portal link can reach").
 */
export function attemptSerializerFor(scope: Scope): (row: JoinedRow) => DeliveryAttempt {
  if (!scope.portal) return serializeAttempt;
  return (row) => {
    const a = serializeAttempt(row);
    return a.error === "ssrf_blocked" || a.error === "connection_error" ? { ...a, error_detail: PORTAL_UNREACHABLE_DETAIL } : a;
  };
}

/** The one API shape of a delivery attempt (spec: Delivery attempt list item). */
export function serializeAttempt({ attempt: a, connectionName, destinationName }: JoinedRow): DeliveryAttempt {
  return {
    id: a.id,
    org_id: a.orgId,
    env_id: a.envId,
    event_id: a.eventId,
    connection_id: a.connectionId,
    destination_id: a.destinationId,
    request_url: a.requestUrl,
    request_method: a.requestMethod,
    request_headers: a.requestHeaders,
    request_body_size: a.requestBodySize,
    response_status: a.responseStatus,
    response_headers: a.responseHeaders,
    response_body: a.responseBody,
    duration_ms: a.durationMs,
    status: a.status,
    error: a.error,
    error_detail: a.errorDetail,
    created_at: a.createdAt,
    scheduled_at: a.scheduledAt,
    sent_at: a.sentAt,
    attempt_number: a.attemptNumber,
    next_retry_at: a.nextRetryAt,
    is_dlq: a.isDlq,
    dlq_at: a.dlqAt,
    trigger_type: a.triggerType,
    forced: a.forced,
    connection_name: connectionName,
    destination_name: destinationName,
  };
}

const NOTHING = never();

function filtersFor(scope: Scope, q: ListAttemptsQuery): SQL | undefined {
  const conds: (SQL | undefined)[] = [inScope(deliveryAttempts, scope)];
  // An id that cannot exist filters to nothing rather than failing the list.
  const byId = (raw: string | undefined, col: SQLiteColumn, kind?: "event" | "destination") => {
    if (raw === undefined) return;
    const id = normalizeIdOrNull(raw, kind);
    conds.push(id ? eq(col, id) : NOTHING);
  };
  byId(q.event_id, deliveryAttempts.eventId, "event");
  byId(q.destination_id, deliveryAttempts.destinationId, "destination");
  byId(q.connection_id, deliveryAttempts.connectionId);
  // A literal, as the partial indexes on status are written (attempts_scope_failed, attempts_due, attempts_leased),
  // so the planner sees they apply: the value is one of ATTEMPT_STATUSES (the contract's enum), never free text.
  if (q.status) conds.push(ATTEMPT_STATUSES.includes(q.status) ? sql`${deliveryAttempts.status} = ${sql.raw(`'${q.status}'`)}` : NOTHING);
  // Always true of live rows (a queued row has a due time, a delivering one a lease), and it lets the planner
  // read the queue's own indexes (attempts_due_time, attempts_leased) instead of every attempt of the environment.
  if (q.status === "queued") conds.push(sql`${deliveryAttempts.scheduledAt} > ''`);
  if (q.status === "delivering") conds.push(isNotNull(deliveryAttempts.leaseUntil));
  // A literal for the same reason (attempts_dlq_scope is partial on is_dlq = 1).
  if (q.is_dlq !== undefined) conds.push(sql`${deliveryAttempts.isDlq} = ${sql.raw(q.is_dlq === 1 ? "1" : "0")}`);
  if (q.trigger_type) conds.push(eq(deliveryAttempts.triggerType, q.trigger_type));
  return and(...conds);
}

/** Newest first, with offset or cursor pages (as GET /v1/events). */
export async function listAttempts({ db }: Deps, scope: Scope, query: ListAttemptsQuery) {
  const { rows, pagination } = await paginate({
    page: query,
    cols: { time: deliveryAttempts.createdAt, id: deliveryAttempts.id },
    filters: filtersFor(scope, query),
    select: (where, order, limit, offset) =>
      db
        .select({ attempt: deliveryAttempts, connectionName: connections.name, destinationName: destinations.name })
        .from(deliveryAttempts)
        .leftJoin(connections, eq(connections.id, deliveryAttempts.connectionId))
        .leftJoin(destinations, eq(destinations.id, deliveryAttempts.destinationId))
        .where(where)
        .orderBy(...order)
        .limit(limit)
        .offset(offset),
    total: async (where) => (await countedAttempts(db, scope, query)) ?? (await db.select({ n: count() }).from(deliveryAttempts).where(where))[0]?.n ?? 0,
    key: (r) => ({ t: r.attempt.createdAt, id: r.attempt.id }),
  });
  return { delivery_attempts: rows.map(serializeAttempt), pagination };
}
