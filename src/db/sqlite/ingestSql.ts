import { newEventId, storedAs, type BatchTime, type EventRouting, type EventWrite, type IngestSourceRow, type IngestSql, type WriteResult } from "../ingestBatch";
import type { Db } from "../db";
import { preparedFor, sqliteOf } from "../prepared";

/**
 * Ingest's statements on SQLite, prepared once on bun:sqlite: on one local
 * connection a statement per event costs microseconds, less than building
 * anything larger. The batch runs inside the turn's write transaction (the
 * one writer), so nobody else writes between reading a source's budget and
 * moving its counters.
 */
export const sqliteIngestSql = preparedFor((db: Db): IngestSql => {
  const sqlite = sqliteOf(db);
  const findSource = sqlite.prepare<IngestSourceRow, [string]>(
    `SELECT id, org_id, env_id, status, type, template, verification_enabled, verification_type, verification_secret,
            verification_header, verification_config, dedup_enabled, dedup_strategy, dedup_field, dedup_window_seconds,
            ip_allowlist, ip_denylist, request_count, expires_at, request_limit, schema_validation_enabled, json_schema,
            schema_action, updated_at
       FROM sources WHERE id = ?`,
  );
  // The request_limit check and the counting are one statement, so concurrent requests cannot overshoot.
  const countRequest = sqlite.prepare<{ status: string }, [string]>(
    `UPDATE sources SET request_count = request_count + 1
      WHERE id = ? AND (request_limit IS NULL OR request_count < request_limit) RETURNING status`,
  );
  const sourceState = sqlite.prepare<{ status: string; request_count: number; request_limit: number | null }, [string]>(
    `SELECT status, request_count, request_limit FROM sources WHERE id = ?`,
  );
  // SQL increments: exact whatever else writes the row (another batch, the CLI in local mode).
  const countEvents = sqlite.prepare<never, [number, number, string, string]>(
    `UPDATE sources SET request_count = request_count + ?, event_count = event_count + ?, last_event_at = ? WHERE id = ?`,
  );
  const findOriginal = sqlite.prepare<{ id: string }, [string, string, string]>(
    `SELECT id FROM events
      WHERE source_id = ? AND dedup_key = ? AND received_at >= ? AND dedup_status = 'unique'
      ORDER BY received_at LIMIT 1`,
  );
  const insertEvent = sqlite.prepare(
    `INSERT INTO events (id, org_id, env_id, source_id, method, path, query, content_type, source_ip, headers, body,
                         payload_size, verification_status, verification_error, dedup_status, dedup_key, duplicate_of,
                         status, schema_errors, event_type, received_at, routed_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const dataVersion = sqlite.prepare<{ data_version: number }, []>(`PRAGMA data_version`);
  const unroute = sqlite.prepare<never, [string]>(`UPDATE events SET routed_at = NULL, status = 'pending' WHERE id IN (SELECT value FROM json_each(?))`);

  /** One event, inserted at once: a later event of the batch with the same dedup key finds it. */
  function insertOne(w: EventWrite, sourceStatus: string, at: BatchTime, routing: EventRouting): WriteResult {
    let dedupStatus: string = w.dedupStatus;
    let duplicateOf: string | null = null;
    if (w.dedupStatus === "unique" && w.dedupKey !== null) {
      const since = new Date(at.ms - w.dedupWindowSeconds * 1000).toISOString();
      const original = findOriginal.get(w.sourceId, w.dedupKey, since);
      if (original) {
        dedupStatus = "duplicate";
        duplicateOf = original.id;
      }
    }
    const id = newEventId(at.ms);
    const { status, routedAt } = storedAs(w, { id, sourceStatus, duplicateOf, receivedAt: at.receivedAt }, routing);
    insertEvent.run(
      id,
      w.orgId,
      w.envId,
      w.sourceId,
      w.method,
      w.path,
      w.query,
      w.contentType,
      w.sourceIp,
      w.headers,
      w.body,
      w.body.byteLength,
      w.verificationStatus,
      w.verificationError,
      dedupStatus,
      w.dedupKey,
      duplicateOf,
      status,
      w.schemaErrors,
      w.eventType,
      at.receivedAt,
      routedAt,
    );
    return { kind: "stored", id, receivedAt: at.receivedAt, status, dedupStatus, duplicateOf };
  }

  return {
    findSource: (id) => Promise.resolve(findSource.get(id) ?? null),
    changeMark: () => dataVersion.get()!.data_version,
    countRequest: (sourceId) => Promise.resolve(countRequest.get(sourceId) !== null),
    async writeBatch(writes, at, routing) {
      const sources = new Map<string, { status: string; budget: number; stored: number } | null>();
      const results = writes.map((w): WriteResult => {
        let source = sources.get(w.sourceId);
        if (source === undefined) {
          const row = sourceState.get(w.sourceId);
          source = row && { status: row.status, budget: row.request_limit === null ? Infinity : row.request_limit - row.request_count, stored: 0 };
          sources.set(w.sourceId, source);
        }
        if (!source) return { kind: "source_gone" };
        if (source.stored >= source.budget) return { kind: "limit_reached" };
        source.stored++;
        return insertOne(w, source.status, at, routing);
      });
      for (const [id, source] of sources) {
        if (source && source.stored > 0) countEvents.run(source.stored, source.stored, at.receivedAt, id);
      }
      return results;
    },
    async unroute(eventIds) {
      unroute.run(JSON.stringify(eventIds));
    },
  };
});
