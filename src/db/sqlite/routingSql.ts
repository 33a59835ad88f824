import type { StoredRequestRow } from "../deliverySql";
import type { Db } from "../db";
import { preparedFor, sqliteOf } from "../prepared";
import type { RoutingSql, SourceConnection, UnroutedEvent } from "../routingSql";

/**
 * SQLite: every method runs its statements before it returns (and throws,
 * rather than rejects, when one fails), so a caller still inside a
 * synchronous writeTransaction writes within it.
 */
export const sqliteRoutingSql = preparedFor((db: Db): RoutingSql => {
  const sqlite = sqliteOf(db);
  const pending = sqlite.prepare<UnroutedEvent, [number]>(
    `SELECT id, org_id AS orgId, env_id AS envId, source_id AS sourceId, received_at AS receivedAt
       FROM events WHERE status = 'pending' AND routed_at IS NULL ORDER BY received_at LIMIT ?1`,
  );
  const request = sqlite.prepare<StoredRequestRow, [string]>(`SELECT body, headers, query, method, path, content_type AS contentType FROM events WHERE id = ?1`);
  const markRouted = sqlite.prepare<{ id: string }, [string, string, string]>(
    `UPDATE events SET routed_at = ?2, status = ?3 WHERE id = ?1 AND routed_at IS NULL AND status = 'pending' RETURNING id`,
  );
  const countConnection = sqlite.prepare<never, [string, number, string]>(
    `UPDATE connections SET event_count = event_count + ?2, last_event_at = max(coalesce(last_event_at, ''), ?3) WHERE id = ?1`,
  );
  const connectionsOf = sqlite.prepare<SourceConnection, [string]>(
    `SELECT c.id, c.name, c.source_id AS sourceId, c.destination_id AS destinationId, c.enabled, c.filter_rules AS filterRules,
            c.updated_at AS updatedAt, d.url AS destinationUrl, d.http_method AS destinationMethod, d.status AS destinationStatus,
            c.ordered, c.ordering_key AS orderingKey, c.on_dlq AS onDlq
       FROM connections c JOIN destinations d ON d.id = c.destination_id
      WHERE c.source_id IN (SELECT value FROM json_each(?1))
      ORDER BY c.created_at, c.id`,
  );
  const insertAttempt = sqlite.prepare<
    never,
    [string, string, string, string, string | null, string, string, string, number, string | null, string, number, string | null, string, number, string, string | null, string | null, number]
  >(
    `INSERT INTO delivery_attempts (id, org_id, env_id, event_id, connection_id, destination_id, request_url, request_method,
                                    status, attempt_number, trigger_type, scheduled_at, no_retry, job_id, created_at, forced,
                                    ordering_lane, ordering_key, ordering_hold)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?16, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?17, ?18, ?19)`,
  );
  return {
    pending: (limit) => Promise.resolve(pending.all(limit)),
    requests(eventIds) {
      const out = new Map<string, StoredRequestRow>();
      for (const id of eventIds) {
        const row = request.get(id);
        if (row) out.set(id, row);
      }
      return Promise.resolve(out);
    },
    markRouted(marks, at) {
      const marked = new Set<string>();
      for (const m of marks) if (markRouted.get(m.id, at, m.status)) marked.add(m.id);
      return Promise.resolve(marked);
    },
    countConnections(counts) {
      for (const c of counts) countConnection.run(c.id, c.count, c.last);
      return Promise.resolve();
    },
    connectionsOf: (sourceIds) => Promise.resolve(sourceIds.length === 0 ? [] : connectionsOf.all(JSON.stringify(sourceIds))),
    insertAttempts(rows) {
      for (const row of rows) {
        insertAttempt.run(
          row.id,
          row.orgId,
          row.envId,
          row.eventId,
          row.connectionId ?? null,
          row.destinationId,
          row.requestUrl,
          row.requestMethod,
          row.attemptNumber ?? 1,
          row.triggerType ?? null,
          row.scheduledAt,
          row.noRetry ?? 0,
          row.jobId ?? null,
          row.createdAt,
          row.forced ?? 0,
          row.status ?? "queued",
          row.orderingLane ?? null,
          row.orderingKey ?? null,
          row.orderingHold ?? 0,
        );
      }
      return Promise.resolve();
    },
  };
});
