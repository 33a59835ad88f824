import type { Db } from "../db/open";
import { deliverySql } from "../db/deliverySql";

export interface ChangedEvent {
  id: string;
  orgId: string;
  envId: string;
  sourceId: string;
  status: string;
}

/**
 * An event's status after its deliveries settle (contract §4):
 * `failed` while any of its deliveries sits in the DLQ, else `delivered`
 * once every delivery succeeded. While deliveries are outstanding the status
 * is left alone: `pending` for a new event, and unchanged for a retried one
 * (the spec's retry row keeps the event's status). Replays are side
 * deliveries to a chosen destination and never change it, and a `rejected`
 * event stays rejected even when an operator forced a delivery of it.
 *
 * Synchronous: runs inside the caller's writeTransaction (bun:sqlite has one
 * connection, so `db` is the transaction's).
 */
export function refreshEventStatuses(db: Db, eventIds: Iterable<string>): ChangedEvent[] {
  const ids = [...eventIds];
  if (ids.length === 0) return [];
  return deliverySql(db)
    .refreshEventStatuses.all(JSON.stringify(ids))
    .map((r) => ({ id: r.id, orgId: r.org_id, envId: r.env_id, sourceId: r.source_id, status: r.status }));
}
