import { inScope } from "./scope";
import type { Db } from "../db/db";
import { never } from "../db/portableSql";
import { and, asc, count, desc, eq, gte, inArray, lt, sql, type SQL } from "drizzle-orm";
import { deliveryAttempts, events, sources } from "../db/schema";
import { notFound } from "../contracts/errors";
import type { EventDetail, EventListItem, ListEventsQuery } from "../contracts/events";
import { normalizeId, normalizeIdOrNull } from "../contracts/ids";
import { REDACTED_HEADER_VALUE, secretRequestHeaders } from "../contracts/sources";
import { utf8OrNull } from "../rules/json";
import type { Deps, Scope } from "./deps";
import { searchCondition, searchWindow } from "./eventSearch";
import { countedEvents } from "./listTotals";
import { paginate, paginateKeys } from "./paging";

const listColumns = {
  id: events.id,
  sourceId: events.sourceId,
  orgId: events.orgId,
  envId: events.envId,
  method: events.method,
  contentType: events.contentType,
  sourceIp: events.sourceIp,
  payloadSize: events.payloadSize,
  verificationStatus: events.verificationStatus,
  dedupStatus: events.dedupStatus,
  status: events.status,
  eventType: events.eventType,
  receivedAt: events.receivedAt,
  sourceName: sources.name,
  sourceSlug: sources.slug,
};

interface ListRow {
  id: string;
  sourceId: string;
  orgId: string;
  envId: string;
  method: string;
  contentType: string | null;
  sourceIp: string | null;
  payloadSize: number;
  verificationStatus: string;
  dedupStatus: string;
  status: string;
  eventType: string | null;
  receivedAt: string;
  sourceName: string | null;
  sourceSlug: string | null;
}

/** The one list-item shape: GET /events, the SSE stream and the detail all start from it. */
export function serializeEventListItem(r: ListRow): EventListItem {
  return {
    id: r.id,
    source_id: r.sourceId,
    org_id: r.orgId,
    env_id: r.envId,
    method: r.method,
    content_type: r.contentType,
    source_ip: r.sourceIp,
    payload_size: r.payloadSize,
    verification_status: r.verificationStatus,
    dedup_status: r.dedupStatus,
    status: r.status,
    event_type: r.eventType,
    received_at: r.receivedAt,
    source_name: r.sourceName ?? null,
    source_slug: r.sourceSlug ?? null,
  };
}

const scoped = (scope: Scope) => [inScope(events, scope)];
const NOTHING = never();

function filtersFor(db: Db, scope: Scope, q: ListEventsQuery, searchWindow?: SQL): SQL | undefined {
  const conds: SQL[] = scoped(scope);
  // Another organization's or environment's events are absent, not forbidden.
  if ((q.org_id && q.org_id !== scope.orgId) || (q.env_id && q.env_id !== scope.envId)) conds.push(NOTHING);
  if (q.source_id) {
    const id = normalizeIdOrNull(q.source_id, "source");
    conds.push(id ? eq(events.sourceId, id) : NOTHING);
  }
  if (q.status) conds.push(inArray(events.status, q.status));
  // Written as events_scope_status_received is, so the planner sees the index applies (it does not look inside bound values).
  if (q.status && !q.status.includes("delivered")) conds.push(sql`${events.status} <> 'delivered'`);
  if (q.verification_status) conds.push(inArray(events.verificationStatus, q.verification_status));
  if (q.dedup_status) conds.push(inArray(events.dedupStatus, q.dedup_status));
  if (q.method) conds.push(inArray(events.method, q.method));
  if (q.after) conds.push(gte(events.receivedAt, new Date(q.after).toISOString()));
  if (q.before) conds.push(lt(events.receivedAt, new Date(q.before).toISOString()));
  if (q.search) {
    conds.push(searchCondition(db, q.search.trim()));
    if (searchWindow) conds.push(searchWindow);
  }
  return and(...conds);
}

/** Newest first, filtered as GET /events allows, with offset or cursor pages. */
export async function listEvents(deps: Deps, scope: Scope, query: ListEventsQuery) {
  if (query.search) return searchEvents(deps, scope, query);
  const { db } = deps;
  const { rows, pagination } = await paginate({
    page: query,
    cols: { time: events.receivedAt, id: events.id },
    filters: filtersFor(db, scope, query),
    select: (where, order, limit, offset) =>
      db
        .select(listColumns)
        .from(events)
        .leftJoin(sources, eq(sources.id, events.sourceId))
        .where(where)
        .orderBy(...order)
        .limit(limit)
        .offset(offset),
    total: async (where) => (await countedEvents(db, scope, query)) ?? (await db.select({ n: count() }).from(events).where(where))[0]?.n ?? 0,
    key: (r) => ({ t: r.receivedAt, id: r.id }),
  });
  return { events: rows.map(serializeEventListItem), pagination };
}

/**
 * A search reads bodies, only those of the newest events (src/domain/eventSearch.ts),
 * and only once: the keys of every match in the window (at most
 * SEARCH_WINDOW_EVENTS) give the total and the page, whose rows are then read by id.
 */
async function searchEvents({ db }: Deps, scope: Scope, query: ListEventsQuery) {
  const filters = filtersFor(db, scope, query, await searchWindow(db, scope, query));
  const keys = await db
    .select({ t: events.receivedAt, id: events.id })
    .from(events)
    .where(filters)
    .orderBy(desc(events.receivedAt), desc(events.id));
  const page = paginateKeys(keys, query);
  const rows =
    page.keys.length === 0
      ? []
      : await db
          .select(listColumns)
          .from(events)
          .leftJoin(sources, eq(sources.id, events.sourceId))
          .where(and(...scoped(scope), inArray(events.id, page.keys.map((k) => k.id))))
          .orderBy(desc(events.receivedAt), desc(events.id));
  return { events: rows.map(serializeEventListItem), pagination: page.pagination };
}

/** List items for the given ids within the caller's scope (the live stream looks them up as they arrive). */
export async function getEventListItems({ db }: Deps, scope: Scope, ids: string[]): Promise<EventListItem[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .select(listColumns)
    .from(events)
    .leftJoin(sources, eq(sources.id, events.sourceId))
    .where(and(...scoped(scope), inArray(events.id, ids)))
    .orderBy(asc(events.receivedAt), asc(events.id));
  return rows.map(serializeEventListItem);
}

function parseJson<T>(text: string | null, fallback: T): T {
  if (text === null) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

/**
 * Ingest stores a token source's secret header as [redacted] already
 * (docs/ingest.md "Redacted headers"); an event stored before it did is
 * redacted here, on the way out.
 */
function withSecretsRedacted(headers: Record<string, string>, names: string[]): Record<string, string> {
  for (const name of names) if (name in headers) headers[name] = REDACTED_HEADER_VALUE;
  return headers;
}

/** One event with its request as received and what happened to it. */
export async function getEvent({ db }: Deps, scope: Scope, rawId: string): Promise<EventDetail> {
  const id = normalizeId(rawId, "event", "Event");
  const [row] = await db
    .select({
      ...listColumns,
      path: events.path,
      query: events.query,
      headers: events.headers,
      body: events.body,
      verificationError: events.verificationError,
      dedupKey: events.dedupKey,
      duplicateOf: events.duplicateOf,
      schemaErrors: events.schemaErrors,
      routedAt: events.routedAt,
      verificationType: sources.verificationType,
      verificationHeader: sources.verificationHeader,
    })
    .from(events)
    .leftJoin(sources, eq(sources.id, events.sourceId))
    .where(and(...scoped(scope), eq(events.id, id)))
    .limit(1);
  if (!row) throw notFound("Event");

  const attempts = await db
    .select()
    .from(deliveryAttempts)
    .where(eq(deliveryAttempts.eventId, row.id))
    .orderBy(asc(deliveryAttempts.createdAt), asc(deliveryAttempts.id));

  const bytes = new Uint8Array(row.body);
  const text = utf8OrNull(bytes);
  return {
    ...serializeEventListItem(row),
    path: row.path,
    query: row.query,
    headers: withSecretsRedacted(parseJson<Record<string, string>>(row.headers, {}), secretRequestHeaders(row.verificationType, row.verificationHeader)),
    body: text ?? Buffer.from(bytes).toString("base64"),
    body_encoding: text === null ? "base64" : "utf8",
    verification_error: row.verificationError,
    dedup_key: row.dedupKey,
    duplicate_of: row.duplicateOf,
    schema_errors: parseJson(row.schemaErrors, null),
    routed_at: row.routedAt,
    delivery_attempts: attempts.map((a) => ({
      id: a.id,
      connection_id: a.connectionId,
      destination_id: a.destinationId,
      status: a.status,
      status_code: a.responseStatus,
      latency_ms: a.durationMs,
      attempt_number: a.attemptNumber,
      trigger_type: a.triggerType,
      error: a.error,
      is_dlq: a.isDlq,
      forced: a.forced,
      attempted_at: a.sentAt,
      scheduled_at: a.scheduledAt,
    })),
  };
}
