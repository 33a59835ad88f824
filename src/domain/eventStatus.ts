import { and, eq, ne, or, isNull, sql } from "drizzle-orm";
import type { Db } from "../db/open";
import { ph, preparedFor } from "../db/prepared";
import { deliveryAttempts, events } from "../db/schema";

export interface ChangedEvent {
  id: string;
  orgId: string;
  envId: string;
  sourceId: string;
  status: string;
}

const statements = preparedFor((db) => ({
  counts: db
    .select({
      outstanding: sql<number>`coalesce(sum(case when ${deliveryAttempts.status} in ('queued', 'delivering') then 1 else 0 end), 0)`,
      dlq: sql<number>`coalesce(sum(${deliveryAttempts.isDlq}), 0)`,
      ok: sql<number>`coalesce(sum(case when ${deliveryAttempts.status} = 'success' then 1 else 0 end), 0)`,
    })
    .from(deliveryAttempts)
    .where(and(eq(deliveryAttempts.eventId, sql.placeholder("eventId")), or(isNull(deliveryAttempts.triggerType), ne(deliveryAttempts.triggerType, "replay"))))
    .prepare(),
  setStatus: db
    .update(events)
    .set({ status: ph("status") })
    .where(and(eq(events.id, sql.placeholder("eventId")), ne(events.status, sql.placeholder("status"))))
    .returning({ id: events.id, orgId: events.orgId, envId: events.envId, sourceId: events.sourceId, status: events.status })
    .prepare(),
}));

/**
 * An event's status after its deliveries settle (contract §4):
 * `failed` while any of its deliveries sits in the DLQ, else `delivered`
 * once every delivery succeeded. While deliveries are outstanding the status
 * is left alone: `pending` for a new event, and unchanged for a retried one
 * (the spec's retry row keeps the event's status). Replays are side
 * deliveries to a chosen destination and never change it.
 *
 * Synchronous, on prepared statements: runs inside the caller's
 * writeTransaction (bun:sqlite has one connection, so `db` is the transaction's).
 */
export function refreshEventStatuses(db: Db, eventIds: Iterable<string>): ChangedEvent[] {
  const s = statements(db);
  const changed: ChangedEvent[] = [];
  for (const eventId of eventIds) {
    const c = s.counts.get({ eventId });
    if (!c || c.outstanding > 0) continue;
    const status = c.dlq > 0 ? "failed" : c.ok > 0 ? "delivered" : null;
    if (!status) continue;
    const row = s.setStatus.get({ eventId, status });
    if (row) changed.push(row);
  }
  return changed;
}
