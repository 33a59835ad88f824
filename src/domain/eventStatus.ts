import { and, eq, inArray, isNull, ne, notExists, or, sql } from "drizzle-orm";
import type { Db } from "../db/db";
import { queueStoreOf } from "../db/statements";
import { deliveryAttempts, events } from "../db/schema";

export interface ChangedEvent {
  id: string;
  orgId: string;
  envId: string;
  sourceId: string;
  status: string;
}

/**
 * An event's status after its deliveries settle (docs/decisions.md D5):
 * `failed` while any of its deliveries sits in the DLQ, else `delivered`
 * once every delivery succeeded. While deliveries are outstanding the status
 * is left alone: `pending` for a new event, and unchanged for a retried one
 * (the spec's retry row keeps the event's status). Replays are side
 * deliveries to a chosen destination and never change it, and a `rejected`
 * event stays rejected even when an operator forced a delivery of it.
 *
 * One statement for the whole batch, in the caller's transaction (the
 * recording one): per dialect in src/db (queueStore.ts).
 */
export async function refreshEventStatuses(db: Db, eventIds: Iterable<string>): Promise<ChangedEvent[]> {
  const ids = [...eventIds];
  if (ids.length === 0) return [];
  return queueStoreOf(db).refreshEventStatuses(ids);
}

/**
 * Events whose deliveries were cancelled because their connection was
 * deleted (docs/delivery.md, "Deleting a connection"): one still `pending`
 * with nothing outstanding will never be delivered, so it is `failed`.
 * (refreshEventStatuses leaves it alone: no success, nothing in the DLQ.)
 */
export async function failEventsLeftPending(db: Db, eventIds: Iterable<string>): Promise<ChangedEvent[]> {
  const ids = [...new Set(eventIds)];
  if (ids.length === 0) return [];
  const notReplay = or(isNull(deliveryAttempts.triggerType), ne(deliveryAttempts.triggerType, "replay"));
  const outstanding = db
    .select({ one: sql`1` })
    .from(deliveryAttempts)
    .where(and(eq(deliveryAttempts.eventId, events.id), inArray(deliveryAttempts.status, ["queued", "delivering", "held"]), notReplay));
  return db
    .update(events)
    .set({ status: "failed" })
    .where(and(inArray(events.id, ids), eq(events.status, "pending"), notExists(outstanding)))
    .returning({ id: events.id, orgId: events.orgId, envId: events.envId, sourceId: events.sourceId, status: events.status });
}
