import { pendingConnectionCounts } from "../db/pg/counters";
import { and, desc, eq, inArray, isNotNull, isNull, ne, or, type SQL } from "drizzle-orm";
import { connections, deliveryAttempts, destinations, events, sources } from "../db/schema";
import { transaction } from "../db/transaction";
import type { Connection, CreateConnectionInput, FilterRule, ListConnectionsQuery, TestTransformInput, UpdateConnectionInput } from "../contracts/connections";
import { AppError, notFound } from "../contracts/errors";
import { hex32, normalizeId, normalizeIdOrNull } from "../contracts/ids";
// Pure leaf modules shared with the workers: the preview and the save-time
// check run expressions with exactly the code that later runs them.
import { eventView } from "../rules/eventView";
import { applyTransform, DEFAULT_TRANSFORM_TIMEOUT_MS, TransformError } from "../rules/transform";
import { iso } from "../core/clock";
import { recordAudit } from "./audit";
import type { Deps, Scope } from "./deps";
import { findDestinationRow } from "./destinations";
import { failEventsLeftPending, refreshEventStatuses } from "./eventStatus";
import { createScope, inScope } from "./scope";
import { findSourceRef } from "./sourceRef";
import { checkTransformInput } from "./transformInput";

type ConnectionRow = typeof connections.$inferSelect;
type JoinedRow = { connection: ConnectionRow; sourceName: string | null; destinationName: string | null };

/** enabled is the switch; status says the same in words (`active` / `disabled`). */
const statusFor = (enabled: number) => (enabled ? "active" : "disabled");

export function serializeConnection({ connection: row, sourceName, destinationName }: JoinedRow): Connection {
  const pending = pendingConnectionCounts(row.id);
  return {
    id: row.id,
    org_id: row.orgId,
    env_id: row.envId,
    source_id: row.sourceId,
    destination_id: row.destinationId,
    name: row.name,
    description: row.description,
    enabled: row.enabled,
    filter_rules: row.filterRules,
    status: row.status,
    // On PostgreSQL this node's counts not yet flushed are added (src/db/pg/counters.ts); none on SQLite.
    event_count: row.eventCount + pending.events,
    last_event_at: pending.last > (row.lastEventAt ?? "") ? pending.last : row.lastEventAt,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
    transform_enabled: row.transformEnabled,
    transform_expression: row.transformExpression,
    source_name: sourceName,
    destination_name: destinationName,
    ordered: row.ordered === 1,
    ordering_key: row.orderingKey,
    on_dlq: row.onDlq as Connection["on_dlq"],
  };
}

/**
 * The transform pair as stored. Giving an expression without saying
 * otherwise turns the transform on; turning it on needs an expression.
 */
function resolveTransform(enabled: boolean | undefined, expression: string | null | undefined, current: { enabled: number; expression: string | null }) {
  const expr = expression === undefined ? current.expression : expression === null || expression.trim() === "" ? null : expression;
  const on = enabled ?? (expression === undefined ? Boolean(current.enabled) : expr !== null);
  if (on && expr === null) {
    throw new AppError("validation_error", "transform_expression is required when transform_enabled is true", [
      { field: "body.transform_expression", message: "required when transform_enabled is true" },
    ]);
  }
  if (expr !== null) checkTransformInput(expr);
  return { transformEnabled: on ? 1 : 0, transformExpression: expr };
}

const rulesText = (rules: FilterRule[] | null | undefined) => (rules === null || rules === undefined ? null : JSON.stringify(rules));

function joinedQuery({ db }: Deps, where: SQL | undefined) {
  return db
    .select({ connection: connections, sourceName: sources.name, destinationName: destinations.name })
    .from(connections)
    .leftJoin(sources, eq(sources.id, connections.sourceId))
    .leftJoin(destinations, eq(destinations.id, connections.destinationId))
    .where(where)
    .orderBy(desc(connections.createdAt), desc(connections.id));
}


export async function createConnection(deps: Deps, scope: Scope, input: CreateConnectionInput) {
  const { orgId, envId } = createScope(scope, input);
  const source = await findSourceRef(deps, scope, input.source_id);
  const destination = await findDestinationRow(deps, scope, input.destination_id);
  const transform = resolveTransform(input.transform_enabled, input.transform_expression, { enabled: 0, expression: null });
  const enabled = input.enabled === false ? 0 : 1;
  const now = iso(deps.clock.now());
  const row: ConnectionRow = {
    id: hex32(),
    orgId,
    envId,
    sourceId: source.id,
    destinationId: destination.id,
    name: input.name,
    description: input.description ?? null,
    enabled,
    filterRules: rulesText(input.filter_rules),
    status: statusFor(enabled),
    eventCount: 0,
    lastEventAt: null,
    ...transform,
    ordered: input.ordered ? 1 : 0,
    orderingKey: input.ordering_key ?? null,
    onDlq: input.on_dlq ?? "continue",
    createdAt: now,
    updatedAt: now,
  };
  const connection = serializeConnection({ connection: row, sourceName: source.name, destinationName: destination.name });
  await transaction(deps.db, async () => {
    await deps.db.insert(connections).values(row);
    await recordAudit(deps, scope, { action: "create", resourceType: "connection", resourceId: row.id, after: connection, envId: row.envId });
  });
  return { connection };
}

/** The caller's connections, newest first; filters by source, destination and enabled. */
export async function listConnections(deps: Deps, scope: Scope, query: ListConnectionsQuery = {}) {
  const filters: (SQL | undefined)[] = [inScope(connections, scope)];
  for (const [raw, kind, column] of [
    [query.source_id, "source", connections.sourceId],
    [query.destination_id, "destination", connections.destinationId],
  ] as const) {
    if (raw === undefined) continue;
    const id = normalizeIdOrNull(raw, kind);
    // An id that cannot exist matches nothing.
    if (id === null) return { connections: [] };
    filters.push(eq(column, id));
  }
  if (query.enabled !== undefined) filters.push(eq(connections.enabled, query.enabled ? 1 : 0));
  const rows = await joinedQuery(deps, and(...filters));
  return { connections: rows.map(serializeConnection) };
}

async function findConnection(deps: Deps, scope: Scope, rawId: string): Promise<JoinedRow> {
  const id = normalizeId(rawId, undefined, "Connection");
  const [row] = await joinedQuery(deps, and(eq(connections.id, id), inScope(connections, scope))).limit(1);
  if (!row) throw notFound("Connection");
  return row;
}

export async function getConnection(deps: Deps, scope: Scope, rawId: string) {
  return { connection: serializeConnection(await findConnection(deps, scope, rawId)) };
}

export async function updateConnection(deps: Deps, scope: Scope, rawId: string, input: UpdateConnectionInput) {
  return transaction(deps.db, () => updateConnectionIn(deps, scope, rawId, input));
}

async function updateConnectionIn(deps: Deps, scope: Scope, rawId: string, input: UpdateConnectionInput) {
  const current = await findConnection(deps, scope, rawId);
  const next: JoinedRow = { ...current, connection: { ...current.connection } };
  const row = next.connection;
  if (input.source_id !== undefined) {
    const source = await findSourceRef(deps, scope, input.source_id);
    row.sourceId = source.id;
    next.sourceName = source.name;
  }
  if (input.destination_id !== undefined) {
    const destination = await findDestinationRow(deps, scope, input.destination_id);
    row.destinationId = destination.id;
    next.destinationName = destination.name;
  }
  if (input.name !== undefined) row.name = input.name;
  if (input.description !== undefined) row.description = input.description;
  if (input.filter_rules !== undefined) row.filterRules = rulesText(input.filter_rules);
  if (input.enabled !== undefined) {
    row.enabled = input.enabled ? 1 : 0;
    row.status = statusFor(row.enabled);
  }
  if (input.transform_enabled !== undefined || input.transform_expression !== undefined) {
    Object.assign(row, resolveTransform(input.transform_enabled, input.transform_expression, { enabled: row.transformEnabled, expression: row.transformExpression }));
  }
  if (input.ordered !== undefined) row.ordered = input.ordered ? 1 : 0;
  if (input.ordering_key !== undefined) row.orderingKey = input.ordering_key;
  if (input.on_dlq !== undefined) row.onDlq = input.on_dlq;
  row.updatedAt = iso(deps.clock.now());
  const { id, orgId, envId, createdAt, eventCount, lastEventAt, ...changes } = row;
  await deps.db
    .update(connections)
    .set(changes)
    .where(and(eq(connections.id, id), eq(connections.orgId, orgId), eq(connections.envId, envId)));
  deps.bus.publish({ type: "connection.updated", connectionId: id });
  const connection = serializeConnection(next);
  await recordAudit(deps, scope, { action: "update", resourceType: "connection", resourceId: id, before: serializeConnection(current), after: connection });
  return { connection };
}

/**
 * Deletes a connection and cancels what it still had queued (retries waiting
 * for their time, or first deliveries not yet claimed): each such attempt
 * ends `failed` with error `connection_deleted`, never sent, not in the DLQ
 * (there is no route left to redrive it through). An event left with no
 * delivery outstanding and none that succeeded becomes `failed`. A delivery
 * in flight finishes; a retry it asks for is cancelled by the worker.
 * Replays are left alone: they go to the destination, the connection only
 * lent its transform. docs/delivery.md, "Deleting a connection".
 */
export async function deleteConnection(deps: Deps, scope: Scope, rawId: string) {
  const id = normalizeId(rawId, undefined, "Connection");
  const now = iso(deps.clock.now());
  const changed = await transaction(deps.db, async (tx) => {
    const before = await findConnection(deps, scope, id);
    await tx.delete(connections).where(and(eq(connections.id, id), inScope(connections, scope)));
    await recordAudit(deps, scope, { action: "delete", resourceType: "connection", resourceId: id, before: serializeConnection(before) });
    const cancelled = await tx
      .update(deliveryAttempts)
      .set({ status: "failed", error: "connection_deleted", errorDetail: CANCELLED_DETAIL, sentAt: now, nextRetryAt: null, leaseUntil: null, claimedBy: null })
      .where(and(eq(deliveryAttempts.connectionId, id), inArray(deliveryAttempts.status, ["queued", "held"]), notReplay))
      .returning({ eventId: deliveryAttempts.eventId });
    // The failed attempts before them no longer announce a retry.
    await tx
      .update(deliveryAttempts)
      .set({ nextRetryAt: null })
      .where(and(eq(deliveryAttempts.connectionId, id), eq(deliveryAttempts.status, "failed"), isNotNull(deliveryAttempts.nextRetryAt)));
    const eventIds = [...new Set(cancelled.map((c) => c.eventId))];
    if (eventIds.length === 0) return [];
    const refreshed = await refreshEventStatuses(tx, eventIds);
    const failed = await failEventsLeftPending(tx, eventIds);
    return [...refreshed, ...failed];
  });
  deps.bus.publish({ type: "connection.updated", connectionId: id });
  for (const e of changed) deps.bus.publish({ type: "event.updated", orgId: e.orgId, envId: e.envId, eventId: e.id, sourceId: e.sourceId });
  return { success: true as const };
}

export const CANCELLED_DETAIL = "the connection was deleted before this delivery was sent";
const notReplay = or(isNull(deliveryAttempts.triggerType), ne(deliveryAttempts.triggerType, "replay"));

/**
 * The transform preview: runs an expression against a stored event of the
 * caller's scope (or a given body and headers) exactly as a worker would.
 * Syntax and evaluation errors are 400s with JSONata's message; a transform
 * stopped by its time or memory limit is a 422 saying which.
 */
export async function testTransform(deps: Deps, scope: Scope, input: TestTransformInput) {
  checkTransformInput(input.transform_expression);
  let view;
  if (input.event_id !== undefined) {
    const id = normalizeId(input.event_id, "event", "Event");
    const [event] = await deps.db
      .select({ body: events.body, headers: events.headers, query: events.query, method: events.method, path: events.path, contentType: events.contentType })
      .from(events)
      .where(and(eq(events.id, id), inScope(events, scope)))
      .limit(1);
    if (!event) throw notFound("Event");
    view = eventView(event);
  } else {
    const headers = Object.fromEntries(Object.entries(input.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
    view = { body: input.body ?? null, headers, query: input.query ?? {}, method: (input.method ?? "POST").toUpperCase(), path: "" };
  }
  try {
    const result = await applyTransform(input.transform_expression, view, { timeoutMs: DEFAULT_TRANSFORM_TIMEOUT_MS });
    return { result };
  } catch (e) {
    if (e instanceof TransformError && e.limit) {
      throw new AppError("transform_limit_exceeded", e.message, [{ field: "body.transform_expression", message: e.message, limit: e.limit, code: e.jsonataCode }]);
    }
    if (e instanceof TransformError) {
      throw new AppError("validation_error", e.message, [{ field: "body.transform_expression", message: e.message, code: e.jsonataCode, position: e.position }]);
    }
    throw e;
  }
}
