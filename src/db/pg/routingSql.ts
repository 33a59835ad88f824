import { sql } from "drizzle-orm";
import type { StoredRequestRow } from "../deliverySql";
import type { Db } from "../db";
import type { RoutingSql, SourceConnection, UnroutedEvent } from "../routingSql";
import { countConnectionsLater } from "./counters";
import { pgArray, pgRows } from "./rows";

/**
 * The routing SQL on PostgreSQL: each call is one statement for the whole
 * batch (a round trip costs more than the rows in it). Built per call, never
 * prepared on the root: a prepared statement would run on the pool, outside
 * the routing transaction.
 */
export function pgRoutingSql(db: Db): RoutingSql {
  return {
    pending: (limit) =>
      pgRows<UnroutedEvent>(
        db,
        sql`SELECT id, org_id AS "orgId", env_id AS "envId", source_id AS "sourceId", received_at AS "receivedAt"
              FROM events WHERE status = 'pending' AND routed_at IS NULL ORDER BY received_at LIMIT ${limit}`,
      ),

    async requests(eventIds) {
      const out = new Map<string, StoredRequestRow>();
      if (eventIds.length === 0) return out;
      const rows = await pgRows<StoredRequestRow & { id: string }>(
        db,
        sql`SELECT id, body, headers, query, method, path, content_type AS "contentType" FROM events WHERE id = ANY(${pgArray(eventIds)}::text[])`,
      );
      for (const { id, ...request } of rows) out.set(id, request);
      return out;
    },

    async markRouted(marks, at) {
      if (marks.length === 0) return new Set();
      const rows = await pgRows<{ id: string }>(
        db,
        sql`UPDATE events e SET routed_at = ${at}, status = m.status
              FROM unnest(${pgArray(marks.map((m) => m.id))}::text[], ${pgArray(marks.map((m) => m.status))}::text[]) AS m(id, status)
             WHERE e.id = m.id AND e.routed_at IS NULL AND e.status = 'pending'
            RETURNING e.id`,
      );
      return new Set(rows.map((r) => r.id));
    },

    // Not in the routing transaction: a busy connection's row would be one every node's batch waits on.
    // Written by this node's next counter flush, once the batch commits (src/db/pg/counters.ts).
    async countConnections(counts) {
      countConnectionsLater(db, new Map(counts.map((c) => [c.id, { events: c.count, last: c.last }])));
    },

    async connectionsOf(sourceIds) {
      if (sourceIds.length === 0) return [];
      return pgRows<SourceConnection>(
        db,
        sql`SELECT c.id, c.name, c.source_id AS "sourceId", c.destination_id AS "destinationId", c.enabled::int AS enabled,
                   c.filter_rules AS "filterRules", c.updated_at AS "updatedAt", d.url AS "destinationUrl",
                   d.http_method AS "destinationMethod", d.status AS "destinationStatus",
                   c.ordered::int AS ordered, c.ordering_key AS "orderingKey", c.on_dlq AS "onDlq"
              FROM connections c JOIN destinations d ON d.id = c.destination_id
             WHERE c.source_id = ANY(${pgArray(sourceIds)}::text[])
             ORDER BY c.created_at, c.id`,
      );
    },

    async insertAttempts(rows) {
      if (rows.length === 0) return;
      const column = <T>(pick: (r: (typeof rows)[number]) => T) => pgArray(rows.map(pick));
      await pgRows(
        db,
        sql`INSERT INTO delivery_attempts (id, org_id, env_id, event_id, connection_id, destination_id, request_url, request_method,
                                           status, attempt_number, trigger_type, scheduled_at, no_retry, job_id, created_at, forced,
                                           ordering_lane, ordering_key, ordering_hold)
            SELECT id, org_id, env_id, event_id, connection_id, destination_id, request_url, request_method,
                   status, attempt_number, trigger_type, scheduled_at, no_retry, job_id, created_at, forced,
                   ordering_lane, ordering_key, ordering_hold
              FROM unnest(${column((r) => r.id)}::text[], ${column((r) => r.orgId)}::text[], ${column((r) => r.envId)}::text[],
                          ${column((r) => r.eventId)}::text[], ${column((r) => r.connectionId ?? null)}::text[],
                          ${column((r) => r.destinationId)}::text[], ${column((r) => r.requestUrl)}::text[],
                          ${column((r) => r.requestMethod)}::text[], ${column((r) => r.attemptNumber ?? 1)}::int8[],
                          ${column((r) => r.triggerType ?? null)}::text[], ${column((r) => r.scheduledAt)}::text[],
                          ${column((r) => r.noRetry ?? 0)}::int8[], ${column((r) => r.jobId ?? null)}::text[],
                          ${column((r) => r.createdAt)}::text[], ${column((r) => r.forced ?? 0)}::int8[],
                          ${column((r) => r.status ?? "queued")}::text[], ${column((r) => r.orderingLane ?? null)}::text[],
                          ${column((r) => r.orderingKey ?? null)}::text[], ${column((r) => r.orderingHold ?? 0)}::int8[])
                AS a(id, org_id, env_id, event_id, connection_id, destination_id, request_url, request_method,
                     attempt_number, trigger_type, scheduled_at, no_retry, job_id, created_at, forced,
                     status, ordering_lane, ordering_key, ordering_hold)`,
      );
    },
  };
}
