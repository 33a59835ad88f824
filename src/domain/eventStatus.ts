import type { Db } from "../db/open";
import { queueStoreOf } from "../db/queueStore";

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
 * One statement for the whole batch, in the caller's transaction (the
 * recording one): per dialect in src/db (queueStore.ts).
 */
export async function refreshEventStatuses(db: Db, eventIds: Iterable<string>): Promise<ChangedEvent[]> {
  const ids = [...eventIds];
  if (ids.length === 0) return [];
  return queueStoreOf(db).refreshEventStatuses(ids);
}
