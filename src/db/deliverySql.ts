import type { StoredRequest } from "../rules/eventView";
import type { Db } from "./db";
import { preparedFor, sqliteOf } from "./prepared";
import type { deliveryAttempts, destinations } from "./schema";

/**
 * The delivery hot path's SQL, SQLite dialect (as ingestStore.ts is for
 * ingest): routing, claiming, loading, recording and settling run these for
 * every batch, so they are plain statements prepared once on bun:sqlite
 * (drizzle's result mapping cost more than the statements themselves,
 * measured), with positional parameters and json_each for lists. The queue's
 * statements are used through src/db/sqlite/queue.ts; PostgreSQL's are in
 * src/db/pg/queue.ts (arrays instead of json_each, FOR UPDATE SKIP LOCKED
 * in the claim).
 */

/**
 * What a worker needs of a claimed row (fewer columns: less to read back per
 * claim). On SQLite also its rowid: the claim and the outcome find the row by
 * it, one b-tree search instead of two (the id's index, then the table); only
 * SQLite's statements here read it, and PostgreSQL's claim leaves it out.
 */
export type AttemptRow = Pick<
  typeof deliveryAttempts.$inferSelect,
  "id" | "orgId" | "envId" | "eventId" | "connectionId" | "destinationId" | "requestUrl" | "requestMethod" | "attemptNumber" | "triggerType" | "noRetry" | "forced" | "jobId" | "leaseUntil" | "orderingLane" | "orderingKey" | "orderingHold"
> & { rowId?: number };

/** The columns of a stored request that filters, transforms and sending read. */
export type StoredRequestRow = StoredRequest;

/** A claimed row's event. */
export interface ClaimedEvent extends StoredRequestRow {
  id: string;
  sourceId: string;
}

/** A destination as stored (drizzle's names), with what an application endpoint delivering through it adds (null for the operator's). */
export type DestinationForDelivery = typeof destinations.$inferSelect & {
  endpointId: string | null;
  endpointExpiresAt: string | null;
  previousSecret: string | null;
  previousUntil: string | null;
  applicationRateLimit: number | null;
  /** 1: the endpoint's URL was set through a portal link (src/domain/endpointDelivery.ts, portalHeldBlocksPrivate). */
  portalHeld: number | null;
  /** 1: the application lets such endpoints reach private addresses. */
  allowPrivateEndpoints: number | null;
};

/** AttemptRow's columns in SQL, named as AttemptRow names them (bun:sqlite returns plain objects). */
export const CLAIMED_COLUMNS = `rowid AS rowId, id, org_id AS orgId, env_id AS envId, event_id AS eventId, connection_id AS connectionId,
  destination_id AS destinationId, request_url AS requestUrl, request_method AS requestMethod,
  attempt_number AS attemptNumber, trigger_type AS triggerType, no_retry AS noRetry, forced, job_id AS jobId, lease_until AS leaseUntil,
  ordering_lane AS orderingLane, ordering_key AS orderingKey, ordering_hold AS orderingHold`;

export const deliverySql = preparedFor((db: Db) => {
  const sqlite = sqliteOf(db);
  return {
    // --- Claiming (src/delivery/queue.ts). Each query spells `status = 'queued'` so SQLite can use the partial
    // indexes attempts_due (destination_id, scheduled_at) and attempts_due_time (scheduled_at, destination_id);
    // INDEXED BY keeps each on the one its cost was measured with, whatever ANALYZE later thinks of them.

    /** The oldest due rows, by rowid and destination only (attempts_due_time covers them): one range read. */
    dueByTime: sqlite.prepare<{ rowId: number; destinationId: string }, [string, number]>(
      `SELECT rowid AS rowId, destination_id AS destinationId FROM delivery_attempts INDEXED BY attempts_due_time
        WHERE status = 'queued' AND scheduled_at <= ?1 ORDER BY scheduled_at LIMIT ?2`,
    ),
    /**
     * A loose index scan over attempts_due: the next destination with queued
     * rows after ?1 (or the first, for ''), with its oldest queued row, in one
     * seek. The row is claimable when its scheduled_at has come.
     */
    firstRowAfter: sqlite.prepare<AttemptRow & { scheduledAt: string }, [string]>(
      `SELECT ${CLAIMED_COLUMNS}, scheduled_at AS scheduledAt FROM delivery_attempts INDEXED BY attempts_due
        WHERE status = 'queued' AND destination_id > ?1 ORDER BY destination_id, scheduled_at LIMIT 1`,
    ),
    /** Paused destinations are few: the partial index destinations_paused holds only them. */
    pausedDestinations: sqlite.prepare<{ id: string }, []>(`SELECT id FROM destinations INDEXED BY destinations_paused WHERE status = 'paused'`),
    /** A destination's due rows, oldest first, from the `skip`-th on. */
    dueOf: sqlite.prepare<AttemptRow, [string, string, number, number]>(
      `SELECT ${CLAIMED_COLUMNS} FROM delivery_attempts INDEXED BY attempts_due
        WHERE status = 'queued' AND destination_id = ?1 AND scheduled_at <= ?2
        ORDER BY scheduled_at LIMIT ?3 OFFSET ?4`,
    ),
    /** Rows picked from dueByTime, in full (a JSON array of rowids). */
    rowsByRowId: sqlite.prepare<AttemptRow, [string]>(`SELECT ${CLAIMED_COLUMNS} FROM delivery_attempts WHERE rowid IN (SELECT value FROM json_each(?1))`),
    /** When the next row not yet due becomes due: one seek on attempts_due_time. */
    nextScheduled: sqlite.prepare<{ at: string | null }, [string]>(
      `SELECT min(scheduled_at) AS at FROM delivery_attempts INDEXED BY attempts_due_time WHERE status = 'queued' AND scheduled_at > ?1`,
    ),
    /** The oldest queued row's due time (paused destinations' included): one seek. */
    oldestQueued: sqlite.prepare<{ at: string | null }, []>(`SELECT min(scheduled_at) AS at FROM delivery_attempts INDEXED BY attempts_due_time WHERE status = 'queued'`),
    leaseExpired: sqlite.prepare<AttemptRow, [string, number]>(
      `SELECT ${CLAIMED_COLUMNS} FROM delivery_attempts WHERE status = 'delivering' AND lease_until < ?1 LIMIT ?2`,
    ),
    /** The whole batch (a JSON array of rowids) in one statement: its rows were just read in this same write transaction. */
    claim: sqlite.prepare<never, [string, string, string | null]>(
      `UPDATE delivery_attempts SET status = 'delivering', lease_until = ?2, claimed_by = ?3 WHERE rowid IN (SELECT value FROM json_each(?1))`,
    ),
    /** Hands a claimed row back, only while this claim holds it. */
    release: sqlite.prepare<never, [string, string | null]>(
      `UPDATE delivery_attempts SET status = 'queued', lease_until = NULL, claimed_by = NULL WHERE id = ?1 AND status = 'delivering' AND lease_until = ?2`,
    ),
    /** Start-up of the one serve process: every claim left is a previous run's. */
    releaseOrphaned: sqlite.prepare<{ id: string }, []>(
      `UPDATE delivery_attempts SET status = 'queued', lease_until = NULL, claimed_by = NULL WHERE status = 'delivering' RETURNING id`,
    ),
    /** The events of a claimed batch (a JSON array of ids), in one statement. */
    loadEvents: sqlite.prepare<ClaimedEvent, [string]>(
      `SELECT id, source_id AS sourceId, headers, body, method, path, query, content_type AS contentType
         FROM events WHERE id IN (SELECT value FROM json_each(?1))`,
    ),

    /**
     * A destination as the worker sends with it, with its endpoint's and
     * application's settings when an application endpoint delivers through it.
     * Prepared once: with thousands of endpoints nearly every delivery goes to
     * a destination not loaded in the last second, and building the query
     * through drizzle for each cost more than sending (docs/performance.md,
     * "Outbound fan-out").
     */
    destinationForDelivery: sqlite.prepare<DestinationForDelivery, [string]>(
      `SELECT d.id, d.org_id AS orgId, d.env_id AS envId, d.name, d.url, d.http_method AS httpMethod, d.headers, d.auth_type AS authType,
              d.auth_config AS authConfig, d.timeout_ms AS timeoutMs, d.rate_limit_per_second AS rateLimitPerSecond, d.max_retries AS maxRetries,
              d.retry_strategy AS retryStrategy, d.retry_interval_seconds AS retryIntervalSeconds,
              d.retry_schedule AS retrySchedule, d.signing_secret AS signingSecret, d.status,
              d.application_id AS applicationId, d.created_at AS createdAt, d.updated_at AS updatedAt,
              e.id AS endpointId, e.expires_at AS endpointExpiresAt, e.previous_secret AS previousSecret,
              e.previous_secret_expires_at AS previousUntil, a.rate_limit AS applicationRateLimit,
              e.portal_held AS portalHeld, a.allow_private_endpoints AS allowPrivateEndpoints
         FROM destinations d
         LEFT JOIN application_endpoints e ON e.destination_id = d.id
         LEFT JOIN applications a ON a.id = e.application_id
        WHERE d.id = ?1`,
    ),

    // --- Recording and settling (src/delivery/queue.ts, src/domain/eventStatus.ts)

    /**
     * Records one outcome; only the claim that holds the lease may record: a
     * row re-claimed after its lease ran out belongs to the new claim. One
     * prepared statement per row with bound values: measured against a single
     * UPDATE … FROM json_each for the whole batch, it costs about 6 µs per row
     * instead of 16 (extracting 16 fields with `->>` re-parses the JSON). The
     * unary `+`s keep the planner on the rowid: once ANALYZE has seen
     * attempts_leased nearly empty, it would otherwise scan that index. The
     * id is checked too: a rowid is only stable until a VACUUM.
     * Recorded or not is told by `changes`: RETURNING made SQLite buffer the
     * result in a temporary table on every run (2–4 µs a row, measured).
     */
    complete: sqlite.prepare<
      never,
      [number, string, string, string, string | null, number, number | null, string | null, string | null, number | null, string | null, string | null, string | null, number, string | null, string | null, string, string]
    >(
      `UPDATE delivery_attempts
          SET status = ?2, request_url = ?3, request_method = ?4, request_headers = ?5, request_body_size = ?6,
              response_status = ?7, response_headers = ?8, response_body = ?9, duration_ms = ?10, error = ?11,
              error_detail = ?12, next_retry_at = ?13, is_dlq = ?14, dlq_at = ?15, sent_at = ?18, lease_until = NULL
        WHERE rowid = ?1 AND +id = ?17 AND +status = 'delivering' AND +lease_until = ?16`,
    ),
    /**
     * One statement for a whole batch of events (a JSON array of ids): their
     * non-replay attempts are counted per event (attempts_event index) and
     * every event whose deliveries have all settled gets its new status, only
     * where it changes. A rejected event stays rejected, even once a forced
     * delivery of it settled.
     */
    refreshEventStatuses: sqlite.prepare<{ id: string; org_id: string; env_id: string; source_id: string; status: string }, [string]>(
      `UPDATE events SET status = s.next
         FROM (SELECT event_id,
                      CASE WHEN sum(is_dlq) > 0 THEN 'failed' WHEN sum(status = 'success') > 0 THEN 'delivered' END AS next,
                      sum(status IN ('queued', 'delivering', 'held')) AS outstanding
                 FROM delivery_attempts
                WHERE event_id IN (SELECT value FROM json_each(?1)) AND coalesce(trigger_type, '') != 'replay'
                GROUP BY event_id) AS s
        WHERE events.id = s.event_id AND s.outstanding = 0 AND s.next IS NOT NULL AND events.status != s.next AND events.status != 'rejected'
        RETURNING events.id, events.org_id, events.env_id, events.source_id, events.status`,
    ),
  };
});
