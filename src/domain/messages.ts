import { never } from "../db/portableSql";
import { and, asc, desc, eq, inArray, lt, lte, or, sql, type SQL } from "drizzle-orm";
import { AppError, notFound, parseOrThrow } from "../contracts/errors";
import { hex32, idPrefix } from "../contracts/ids";
import {
  createMessageInput,
  listMessageAttemptsQuery,
  listMessagesQuery,
  resendInput,
  type CreateMessageInput,
  type ListMessageAttemptsQuery,
  type ListMessagesQuery,
  type MessageDto,
  type MessageStatus,
  type ResendInput,
} from "../contracts/messages";
import { decodeCursor, encodeCursor } from "../contracts/pagination";
import type { Db } from "../db/db";
import { preparedFor } from "../db/prepared";
import { applicationEndpoints, applications, connections, deliveryAttempts, destinations, events, messages, sources } from "../db/schema";
import { inWriteTurn } from "../db/writeTurn";
// Pure leaf shared with resend: which endpoints a message goes to.
import { admits, isExpired } from "../rules/fanout";
import { findApplication } from "./applications";
import { iso } from "../core/clock";
import { insertQueuedAttempt, newQueuedAttempt } from "./deliveries";
import { attemptSerializerFor } from "./deliveryAttempts";
import type { Deps, Scope } from "./deps";
import type { ChangedEvent } from "./eventStatus";
import { isUniqueViolation, validatePayloadForEventType } from "./eventTypes";

/**
 * Messages (docs/decisions.md D10, docs/outbound.md). A message is stored as an event
 * (`evt_<message id>`) of its environment's outbound source, and fanned out
 * in the same write transaction: one queued delivery (trigger `initial`, no
 * connection) per endpoint that admits it. From there the delivery engine
 * takes over: claims, retries, the DLQ, issues. Its status is kept by
 * counters (settleMessages), not by aggregating its attempts.
 */

type MessageRow = typeof messages.$inferSelect;

/** The source every message of an environment is stored on: listed among the sources with this type, never ingested into. */
export const OUTBOUND_SOURCE_TYPE = "outbound";

const decoder = new TextDecoder();

export function serializeMessage(row: MessageRow, body: Uint8Array): MessageDto {
  return {
    id: row.id,
    org_id: row.orgId,
    env_id: row.envId,
    application_id: row.applicationId,
    event_type: row.eventType,
    payload: decoder.decode(body),
    status: row.status,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

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
  const taken = new Set((await deps.db.select({ slug: sources.slug }).from(sources).where(and(eq(sources.orgId, orgId), eq(sources.envId, envId)))).map((r) => r.slug));
  let slug = "outbound";
  for (let n = 2; taken.has(slug); n++) slug = `outbound-${n}`;
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

/** A message of the application by its id, or by the idempotency key it was created with. */
async function findMessage({ db }: Pick<Deps, "db">, applicationId: string, idOrKey: string): Promise<{ row: MessageRow; body: Uint8Array }> {
  const byId = /^[0-9a-f]{32}$/.test(idOrKey) ? eq(messages.id, idOrKey) : undefined;
  const rows = await db
    .select({ row: messages, body: events.body })
    .from(messages)
    .innerJoin(events, eq(events.id, messages.eventId))
    .where(and(eq(messages.applicationId, applicationId), byId ? or(byId, eq(messages.idempotencyKey, idOrKey)) : eq(messages.idempotencyKey, idOrKey)))
    .limit(2);
  const found = rows.find((r) => r.row.id === idOrKey) ?? rows[0];
  if (!found) throw notFound("Message");
  return found;
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
    status: targets.length > 0 ? "pending" : "ignored",
    outstanding: targets.length,
    failed: 0,
    createdAt: at,
    updatedAt: at,
  };
  const { db } = deps;
  // The turn's write transaction (shared with ingest and the delivery pump): the message, its event
  // and its deliveries commit together. The idempotency check inside it is not raced on SQLite (one
  // writer); on PostgreSQL another turn or node may store the key first: its unique index says so.
  const stored = await inWriteTurn(db, async () => {
    if (key) {
      const [existing] = await db
        .select({ row: messages, body: events.body })
        .from(messages)
        .innerJoin(events, eq(events.id, messages.eventId))
        .where(and(eq(messages.applicationId, app.id), eq(messages.idempotencyKey, key)))
        .limit(1);
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
        headers: JSON.stringify({ "content-type": "application/json" }),
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
    for (const t of targets) {
      await insertQueuedAttempt(
        db,
        newQueuedAttempt({ orgId: row.orgId, envId: row.envId, eventId: row.eventId, connectionId: null, destinationId: t.destinationId, requestUrl: t.url, requestMethod: t.method, triggerType: "initial", now }),
      );
    }
    await db
      .update(sources)
      .set({ eventCount: sql`${sources.eventCount} + 1`, lastEventAt: at })
      .where(eq(sources.id, sourceId));
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

/** Newest first, in pages of `limit`; `cursor` continues after the last page without repeats or gaps. */
export async function listMessages(deps: Deps, scope: Scope, appId: string, raw: ListMessagesQuery = {}) {
  const query = parseOrThrow(listMessagesQuery, raw ?? {}, "Invalid query", ["query"]);
  const app = await findApplication(deps, scope, appId);
  const conds: (SQL | undefined)[] = [eq(messages.applicationId, app.id)];
  if (query.event_type) conds.push(eq(messages.eventType, query.event_type));
  if (query.cursor) {
    const c = decodeCursor(query.cursor, "next");
    // The plain `<=` lets the index (application_id[, event_type], created_at, id) seek to the cursor.
    conds.push(lte(messages.createdAt, c.t), or(lt(messages.createdAt, c.t), lt(messages.id, c.id)));
  }
  const rows = await deps.db
    .select({ row: messages, body: events.body })
    .from(messages)
    .innerJoin(events, eq(events.id, messages.eventId))
    .where(and(...conds))
    .orderBy(desc(messages.createdAt), desc(messages.id))
    .limit(query.limit + 1);
  const page = rows.slice(0, query.limit);
  const last = page[page.length - 1];
  return {
    messages: page.map((r) => serializeMessage(r.row, r.body)),
    cursor: rows.length > query.limit && last ? encodeCursor({ t: last.row.createdAt, id: last.row.id }, "next") : null,
  };
}

export async function getMessage(deps: Deps, scope: Scope, appId: string, idOrKey: string) {
  const app = await findApplication(deps, scope, appId);
  const { row, body } = await findMessage(deps, app.id, idOrKey);
  return { message: serializeMessage(row, body) };
}

const attemptColumns = { attempt: deliveryAttempts, connectionName: connections.name, destinationName: destinations.name };

/** The message's delivery attempts to every endpoint (or one), retries included, newest first. */
export async function listMessageAttempts(deps: Deps, scope: Scope, appId: string, idOrKey: string, raw: ListMessageAttemptsQuery = {}) {
  const query = parseOrThrow(listMessageAttemptsQuery, raw ?? {}, "Invalid query", ["query"]);
  const app = await findApplication(deps, scope, appId);
  const { row } = await findMessage(deps, app.id, idOrKey);
  const conds: (SQL | undefined)[] = [eq(deliveryAttempts.eventId, row.eventId)];
  if (query.endpoint_id !== undefined) {
    // An endpoint that cannot exist filters to nothing rather than failing the list.
    conds.push(/^[0-9a-f]{32}$/.test(query.endpoint_id) ? eq(deliveryAttempts.destinationId, idPrefix.destination + query.endpoint_id) : never());
  }
  const rows = await deps.db
    .select(attemptColumns)
    .from(deliveryAttempts)
    .leftJoin(connections, eq(connections.id, deliveryAttempts.connectionId))
    .leftJoin(destinations, eq(destinations.id, deliveryAttempts.destinationId))
    .where(and(...conds))
    .orderBy(desc(deliveryAttempts.createdAt), desc(deliveryAttempts.id))
    .limit(query.limit);
  return { attempts: rows.map(attemptSerializerFor(scope)) };
}

/** Resends a portal link may ask for per application and minute unless HOOKRELAY_PORTAL_RESENDS_PER_MINUTE says otherwise. */
export const DEFAULT_PORTAL_RESENDS_PER_MINUTE = 10;
const RESEND_WINDOW_MS = 60_000;

/**
 * Counts one portal resend against the application's window, or refuses it
 * (429, details.retry_after_seconds). One conditional UPDATE on the
 * application's row, so nodes sharing the database share the count and two
 * resends at once cannot both take the last place. Without it a portal user
 * could make the relay send as fast as they can click.
 */
async function takePortalResend(deps: Deps, applicationId: string, now: Date) {
  const limit = deps.settings.portalResendsPerMinute ?? DEFAULT_PORTAL_RESENDS_PER_MINUTE;
  const a = applications;
  const opened = iso(new Date(now.getTime() - RESEND_WINDOW_MS));
  const current = sql`(${a.portalResendWindow} IS NOT NULL AND ${a.portalResendWindow} > ${opened})`;
  const taken = await deps.db
    .update(a)
    .set({
      portalResendCount: sql`CASE WHEN ${current} THEN ${a.portalResendCount} + 1 ELSE 1 END`,
      portalResendWindow: sql`CASE WHEN ${current} THEN ${a.portalResendWindow} ELSE ${iso(now)} END`,
    })
    .where(and(eq(a.id, applicationId), sql`NOT (${current} AND ${a.portalResendCount} >= ${limit})`))
    .returning({ id: a.id });
  if (taken.length > 0) return;
  const [row] = await deps.db.select({ window: a.portalResendWindow }).from(a).where(eq(a.id, applicationId)).limit(1);
  const wait = row?.window ? Math.max(1, Math.ceil((Date.parse(row.window) + RESEND_WINDOW_MS - now.getTime()) / 1000)) : 1;
  throw new AppError("rate_limited", `Too many resends through portal links of this application: at most ${limit} a minute; try again in ${wait} s`, { retry_after_seconds: wait });
}

/**
 * Sends the message to one of the application's endpoints again (202): a
 * new delivery chain (trigger `manual`, a fresh retry budget) that takes the
 * earlier one out of the DLQ, whether or not the endpoint's filter_types
 * admit the message (resending is an explicit choice). A delivery to that
 * endpoint still outstanding is not doubled: it is made due now and answered.
 * A disabled or expired endpoint → 409.
 */
export async function resendMessage(deps: Deps, scope: Scope, appId: string, idOrKey: string, raw: ResendInput) {
  const input = parseOrThrow(resendInput, raw, "Invalid resend request");
  const app = await findApplication(deps, scope, appId);
  const { row } = await findMessage(deps, app.id, idOrKey);
  const endpointId = input.endpoint_id;
  const [target] = /^[0-9a-f]{32}$/.test(endpointId)
    ? await deps.db
        .select({ destination: destinations, expiresAt: applicationEndpoints.expiresAt })
        .from(applicationEndpoints)
        .innerJoin(destinations, eq(destinations.id, applicationEndpoints.destinationId))
        .where(and(eq(applicationEndpoints.id, endpointId), eq(applicationEndpoints.applicationId, app.id)))
        .limit(1)
    : [];
  if (!target) throw notFound("Endpoint");
  const now = deps.clock.now();
  if (target.destination.status !== "active") throw new AppError("conflict", `Endpoint ${endpointId} is ${target.destination.status}; enable it to resend`, { endpoint_id: endpointId, status: target.destination.status });
  if (isExpired(target, now)) throw new AppError("conflict", `Endpoint ${endpointId} expired at ${target.expiresAt}`, { endpoint_id: endpointId, expires_at: target.expiresAt });

  if (scope.portal) await takePortalResend(deps, app.id, now);

  const { db } = deps;
  const at = iso(now);
  const chain = and(eq(deliveryAttempts.eventId, row.eventId), eq(deliveryAttempts.destinationId, target.destination.id));
  const result = await inWriteTurn(db, async () => {
    const [outstanding] = await db
      .select({ id: deliveryAttempts.id, status: deliveryAttempts.status, scheduledAt: deliveryAttempts.scheduledAt })
      .from(deliveryAttempts)
      .where(and(chain, inArray(deliveryAttempts.status, ["queued", "delivering"])))
      .limit(1);
    if (outstanding) {
      if (outstanding.status === "queued" && outstanding.scheduledAt > at) await db.update(deliveryAttempts).set({ scheduledAt: at }).where(eq(deliveryAttempts.id, outstanding.id));
      return { attemptId: outstanding.id, changed: null };
    }
    const leftDlq = (
      await db
        .update(deliveryAttempts)
        .set({ isDlq: 0 })
        .where(and(chain, eq(deliveryAttempts.isDlq, 1)))
        .returning({ id: deliveryAttempts.id })
    ).length;
    const attempt = newQueuedAttempt({
      orgId: row.orgId,
      envId: row.envId,
      eventId: row.eventId,
      connectionId: null,
      destinationId: target.destination.id,
      requestUrl: target.destination.url,
      requestMethod: target.destination.httpMethod,
      triggerType: "manual",
      now,
    });
    await insertQueuedAttempt(db, attempt);
    await db
      .update(messages)
      .set({
        outstanding: sql`${messages.outstanding} + 1`,
        failed: sql`CASE WHEN ${messages.failed} > ${leftDlq} THEN ${messages.failed} - ${leftDlq} ELSE 0 END`,
        status: "pending",
        updatedAt: at,
      })
      .where(eq(messages.id, row.id));
    const [changed] = await db.update(events).set({ status: "pending" }).where(eq(events.id, row.eventId)).returning({ sourceId: events.sourceId });
    return { attemptId: attempt.id!, changed: changed ?? null };
  });
  deps.bus.publish({ type: "delivery.queued" });
  if (result.changed) deps.bus.publish({ type: "event.updated", orgId: row.orgId, envId: row.envId, eventId: row.eventId, sourceId: result.changed.sourceId });
  const [attempt] = await db
    .select(attemptColumns)
    .from(deliveryAttempts)
    .leftJoin(connections, eq(connections.id, deliveryAttempts.connectionId))
    .leftJoin(destinations, eq(destinations.id, deliveryAttempts.destinationId))
    .where(eq(deliveryAttempts.id, result.attemptId))
    .limit(1);
  if (!attempt) throw notFound("Attempt");
  return { attempt: attemptSerializerFor(scope)(attempt) };
}

// ---------------------------------------------------------------- bookkeeping, inside the recording transaction

/** Delivery chains of one message that ended in a recorded batch, `dlq` of them in the DLQ. */
export interface MessageSettlement {
  settled: number;
  dlq: number;
}

const ph = (name: string) => sql`${sql.placeholder(name)}`;

/** Prepared once per SQLite database, built per call on PostgreSQL (src/db/prepared.ts): they run in the delivery pump's write transaction. */
const settleStatements = preparedFor((db: Db) => {
  const m = messages;
  const stillOutstanding = sql`${m.outstanding} > ${ph("settled")}`;
  return {
    settle: db
      .update(m)
      .set({
        outstanding: sql`CASE WHEN ${stillOutstanding} THEN ${m.outstanding} - ${ph("settled")} ELSE 0 END`,
        failed: sql`${m.failed} + ${ph("dlq")}`,
        status: sql`CASE WHEN ${stillOutstanding} THEN ${m.status} WHEN ${m.failed} + ${ph("dlq")} > 0 THEN 'failed' ELSE 'delivered' END`,
        updatedAt: sql`CASE WHEN ${stillOutstanding} THEN ${m.updatedAt} ELSE ${ph("now")} END`,
      })
      .where(eq(m.eventId, ph("eventId")))
      .returning({ outstanding: m.outstanding, status: m.status, orgId: m.orgId, envId: m.envId })
      .prepare(),
    eventStatus: db.update(events).set({ status: ph("status") }).where(eq(events.id, ph("id"))).returning({ sourceId: events.sourceId }).prepare(),
  };
});

/**
 * Counts settled delivery chains against their messages: one UPDATE per
 * message per recorded batch, however many endpoints it went to. A message
 * with nothing outstanding left becomes `failed` (a chain in the DLQ) or
 * `delivered`, and its event takes the same status. Events that are no
 * message's come back in `unknown`: their status is the engine's to refresh.
 */
export async function settleMessages(db: Db, settlements: ReadonlyMap<string, MessageSettlement>, now: Date): Promise<{ changed: ChangedEvent[]; unknown: string[] }> {
  const changed: ChangedEvent[] = [];
  const unknown: string[] = [];
  if (settlements.size === 0) return { changed, unknown };
  const s = settleStatements(db);
  const at = iso(now);
  for (const [eventId, { settled, dlq }] of settlements) {
    const [m] = await s.settle.execute({ eventId, settled, dlq, now: at });
    if (!m) {
      unknown.push(eventId);
      continue;
    }
    if (m.outstanding > 0) continue;
    const [e] = await s.eventStatus.execute({ id: eventId, status: m.status });
    if (e) changed.push({ id: eventId, orgId: m.orgId, envId: m.envId, sourceId: e.sourceId, status: m.status as MessageStatus });
  }
  return { changed, unknown };
}
