import { and, asc, eq, sql } from "drizzle-orm";
import { AppError, parseOrThrow } from "../contracts/errors";
import { hex32, idPrefix } from "../contracts/ids";
import { createMessageInput, type CreateMessageInput, type MessageDto } from "../contracts/messages";
import type { Db } from "../db/db";
import { applicationEndpoints, destinations, events, messages, sources } from "../db/schema";
import { inWriteTurn } from "../db/writeTurn";
// Pure leaf shared with resend: which endpoints a message goes to.
import { admits } from "../rules/fanout";
import { iso } from "../core/clock";
import { insertQueuedAttempts, newQueuedAttempt } from "../domain/deliveries";
import { inLine, placeInLines } from "../domain/ordering";
import { orderingLane } from "../rules/orderingKey";
import { recordAudit } from "../domain/audit";
import type { Deps, Scope } from "../domain/deps";
import { validatePayloadForEventType } from "../domain/eventTypes";
import { isUniqueViolation } from "../db/errors";
import { freeSourceSlug } from "../domain/slugs";
import { findApplication } from "./applications";
import { serializeMessage } from "./messages";
import { STORED_TRACE_HEADER, traceparentToStore } from "../observability/traceContext";

/**
 * Sending a message (docs/decisions.md D10, docs/outbound.md). A message is stored as an event
 * (`evt_<message id>`) of its environment's outbound source, and fanned out
 * in the same write transaction: one queued delivery (trigger `initial`, no
 * connection) per endpoint that admits it. From there the delivery engine
 * takes over: claims, retries, the DLQ, issues. Its status is kept by
 * counters (src/domain/messageSettlement.ts), not by aggregating its attempts.
 */

type MessageRow = typeof messages.$inferSelect;

/** The source every message of an environment is stored on: listed among the sources with this type, never ingested into. */
export const OUTBOUND_SOURCE_TYPE = "outbound";

/** The environment's outbound source, created the first time a message is sent there. */
export async function outboundSourceId(deps: Pick<Deps, "db" | "clock">, orgId: string, envId: string): Promise<string> {
  const find = async () =>
    (
      await deps.db
        .select({ id: sources.id })
        .from(sources)
        .where(and(eq(sources.orgId, orgId), eq(sources.envId, envId), eq(sources.type, OUTBOUND_SOURCE_TYPE)))
        .orderBy(asc(sources.createdAt))
        .limit(1)
    )[0]?.id;
  const found = await find();
  if (found) return found;
  const slug = await freeSourceSlug(deps.db, orgId, envId, "outbound");
  const now = iso(deps.clock.now());
  const id = idPrefix.source + hex32();
  try {
    await deps.db.insert(sources).values({
      id,
      orgId,
      envId,
      slug,
      name: "Outbound messages",
      description: "Messages sent to applications' endpoints (docs/outbound.md); it receives nothing over its ingest URL",
      type: OUTBOUND_SOURCE_TYPE,
      createdAt: now,
      updatedAt: now,
    });
    return id;
  } catch (err) {
    // Another request created it meanwhile.
    if (isUniqueViolation(err)) return (await find()) ?? Promise.reject(err);
    throw err;
  }
}

/**
 * POST …/messages → the message (202). With an `id` (idempotency key) that
 * the application has seen, the message created then is returned and nothing
 * is sent again, whatever this request's event_type and payload.
 */
export async function createMessage(deps: Deps, scope: Scope, appId: string, raw: CreateMessageInput): Promise<{ message: MessageDto; created: boolean }> {
  const input = parseOrThrow(createMessageInput, raw, "Invalid message");
  const app = await findApplication(deps, scope, appId);
  const key = input.id ?? null;
  if (key) {
    const existing = await findByKey(deps.db, app.id, key);
    if (existing) return { message: serializeMessage(existing.row, existing.body), created: false };
  }
  if (app.status !== "active") throw new AppError("conflict", `Application "${app.uid}" is disabled; set its status to active to send messages`);
  await validatePayloadForEventType(deps, scope, input.event_type, input.payload);
  const sourceId = await outboundSourceId(deps, app.orgId, app.envId);
  const candidates = await deps.db
    .select({
      destinationId: destinations.id,
      url: destinations.url,
      method: destinations.httpMethod,
      status: destinations.status,
      filterTypes: applicationEndpoints.filterTypes,
      expiresAt: applicationEndpoints.expiresAt,
      ordered: applicationEndpoints.ordered,
      onDlq: applicationEndpoints.onDlq,
    })
    .from(applicationEndpoints)
    .innerJoin(destinations, eq(destinations.id, applicationEndpoints.destinationId))
    .where(eq(applicationEndpoints.applicationId, app.id));

  const now = deps.clock.now();
  const at = iso(now);
  const targets = candidates.filter((c) => admits(c, input.event_type, now));
  const id = hex32();
  const body = Buffer.from(JSON.stringify(input.payload));
  const row: MessageRow = {
    id,
    orgId: app.orgId,
    envId: app.envId,
    applicationId: app.id,
    eventId: idPrefix.event + id,
    eventType: input.event_type,
    idempotencyKey: key,
    orderingKey: input.ordering_key ?? null,
    status: targets.length > 0 ? "pending" : "ignored",
    outstanding: targets.length,
    failed: 0,
    createdAt: at,
    updatedAt: at,
  };
  const { db } = deps;
  // Taken here: the write turn may run its work outside this request's async context.
  const storedHeaders = JSON.stringify(messageHeaders());
  // The turn's write transaction (shared with ingest and the delivery pump): the message, its event
  // and its deliveries commit together. The idempotency check inside it is not raced on SQLite (one
  // writer); on PostgreSQL another turn or node may store the key first: its unique index says so.
  const stored = await inWriteTurn(db, async () => {
    if (key) {
      const existing = await findByKey(db, app.id, key);
      if (existing) return existing;
    }
    await db
      .insert(events)
      .values({
        id: row.eventId,
        orgId: row.orgId,
        envId: row.envId,
        sourceId,
        method: "POST",
        path: `/v1/applications/${app.id}/messages`,
        query: null,
        contentType: "application/json",
        sourceIp: null,
        headers: storedHeaders,
        body,
        payloadSize: body.byteLength,
        verificationStatus: "skipped",
        verificationError: null,
        dedupStatus: "skipped",
        dedupKey: null,
        duplicateOf: null,
        status: row.status,
        schemaErrors: null,
        eventType: row.eventType,
        receivedAt: at,
        routedAt: at,
      });
    await db.insert(messages).values(row);
    const attempts = targets.map((t) => {
      const attempt = newQueuedAttempt({ orgId: row.orgId, envId: row.envId, eventId: row.eventId, connectionId: null, destinationId: t.destinationId, requestUrl: t.url, requestMethod: t.method, triggerType: "initial", now });
      if (t.ordered === 1) inLine(attempt, { lane: orderingLane(t.destinationId, row.orderingKey), key: row.orderingKey, block: t.onDlq === "block", receivedAt: at });
      return attempt;
    });
    await placeInLines(db, attempts);
    await insertQueuedAttempts(db, attempts);
    await db
      .update(sources)
      .set({ eventCount: sql`${sources.eventCount} + 1`, lastEventAt: at })
      .where(eq(sources.id, sourceId));
    // The payload is the application's data, not a setting: the trail names the message, not its content.
    await recordAudit(deps, scope, { action: "create", resourceType: "message", resourceId: row.id, after: { application_id: row.applicationId, event_type: row.eventType, status: row.status, idempotency_key: row.idempotencyKey }, envId: row.envId });
    return null;
  }).catch(async (err) => {
    const first = key && isUniqueViolation(err) ? await findByKey(db, app.id, key) : null;
    if (!first) throw err;
    return first;
  });
  if (stored) return { message: serializeMessage(stored.row, stored.body), created: false };
  deps.bus.publish({ type: "event.created", orgId: row.orgId, envId: row.envId, eventId: row.eventId, sourceId });
  if (targets.length > 0) deps.bus.publish({ type: "delivery.queued" });
  return { message: serializeMessage(row, body), created: true };
}

async function findByKey(db: Db, applicationId: string, key: string) {
  const [found] = await db
    .select({ row: messages, body: events.body })
    .from(messages)
    .innerJoin(events, eq(events.id, messages.eventId))
    .where(and(eq(messages.applicationId, applicationId), eq(messages.idempotencyKey, key)))
    .limit(1);
  return found ?? null;
}

/**
 * A message's stored headers: its content type, and with tracing on the
 * `POST …/messages` span's context, so each endpoint attempt joins its trace
 * (src/observability/traceContext.ts, STORED_TRACE_HEADER).
 */
function messageHeaders(): Record<string, string> {
  const parent = traceparentToStore();
  return parent ? { "content-type": "application/json", [STORED_TRACE_HEADER]: parent } : { "content-type": "application/json" };
}
