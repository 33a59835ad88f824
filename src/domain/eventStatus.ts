import type { Db } from "../db/open";
import { preparedFor, sqliteOf } from "../db/prepared";

export interface ChangedEvent {
  id: string;
  orgId: string;
  envId: string;
  sourceId: string;
  status: string;
}

/**
 * One statement for a whole batch of events: their non-replay attempts are
 * counted per event (attempts_event index) and every event whose deliveries
 * have all settled gets its new status, only where it changes.
 * SQLite dialect (UPDATE … FROM, json_each); a PostgreSQL build would pass
 * an array parameter instead.
 */
const refresh = preparedFor((db) =>
  sqliteOf(db).prepare<{ id: string; org_id: string; env_id: string; source_id: string; status: string }, [string]>(
    `UPDATE events SET status = s.next
       FROM (SELECT event_id,
                    CASE WHEN sum(is_dlq) > 0 THEN 'failed' WHEN sum(status = 'success') > 0 THEN 'delivered' END AS next,
                    sum(status IN ('queued', 'delivering')) AS outstanding
               FROM delivery_attempts
              WHERE event_id IN (SELECT value FROM json_each(?1)) AND coalesce(trigger_type, '') != 'replay'
              GROUP BY event_id) AS s
      WHERE events.id = s.event_id AND s.outstanding = 0 AND s.next IS NOT NULL AND events.status != s.next
      RETURNING events.id, events.org_id, events.env_id, events.source_id, events.status`,
  ),
);

/**
 * An event's status after its deliveries settle (contract §4):
 * `failed` while any of its deliveries sits in the DLQ, else `delivered`
 * once every delivery succeeded. While deliveries are outstanding the status
 * is left alone: `pending` for a new event, and unchanged for a retried one
 * (the spec's retry row keeps the event's status). Replays are side
 * deliveries to a chosen destination and never change it.
 *
 * Synchronous: runs inside the caller's writeTransaction (bun:sqlite has one
 * connection, so `db` is the transaction's).
 */
export function refreshEventStatuses(db: Db, eventIds: Iterable<string>): ChangedEvent[] {
  const ids = [...eventIds];
  if (ids.length === 0) return [];
  return refresh(db)
    .all(JSON.stringify(ids))
    .map((r) => ({ id: r.id, orgId: r.org_id, envId: r.env_id, sourceId: r.source_id, status: r.status }));
}
