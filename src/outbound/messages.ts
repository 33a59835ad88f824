import { never } from "../db/portableSql";
import { and, desc, eq, lt, lte, or, type SQL } from "drizzle-orm";
import { notFound, parseOrThrow } from "../contracts/errors";
import { idPrefix } from "../contracts/ids";
import {
  listMessageAttemptsQuery,
  listMessagesQuery,
  type ListMessageAttemptsQuery,
  type ListMessagesQuery,
  type MessageDto,
} from "../contracts/messages";
import { decodeCursor, encodeCursor } from "../contracts/pagination";
import { connections, deliveryAttempts, destinations, events, messages } from "../db/schema";
import { findApplication } from "./applications";
import { attemptSerializerFor } from "../domain/deliveryAttempts";
import type { Deps, Scope } from "../domain/deps";

/**
 * Messages (docs/decisions.md D10, docs/outbound.md): reading them and their
 * attempts. Sending one is fanout.ts, resending one resend.ts; its status is
 * kept by src/domain/messageSettlement.ts.
 */

type MessageRow = typeof messages.$inferSelect;

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
    ordering_key: row.orderingKey,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

/** A message of the application by its id, or by the idempotency key it was created with. */
export async function findMessage({ db }: Pick<Deps, "db">, applicationId: string, idOrKey: string): Promise<{ row: MessageRow; body: Uint8Array }> {
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

export const attemptColumns = { attempt: deliveryAttempts, connectionName: connections.name, destinationName: destinations.name };

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

