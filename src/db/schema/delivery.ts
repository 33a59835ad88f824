import { sql } from "drizzle-orm";
import { sqliteTable, text, integer, index } from "drizzle-orm/sqlite-core";
import { sources } from "./sources";
import { events } from "./events";

export const destinations = sqliteTable(
  "destinations",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id").notNull(),
    envId: text("env_id").notNull(),
    name: text("name").notNull(),
    url: text("url").notNull(),
    httpMethod: text("http_method").notNull().default("POST"),
    headers: text("headers"),
    authType: text("auth_type").notNull().default("none"),
    /** Encrypted at rest. */
    authConfig: text("auth_config"),
    timeoutMs: integer("timeout_ms").notNull().default(30000),
    rateLimitPerSecond: integer("rate_limit_per_second"),
    maxRetries: integer("max_retries").notNull().default(8),
    retryStrategy: text("retry_strategy").notNull().default("exponential"),
    retryIntervalSeconds: integer("retry_interval_seconds").notNull().default(30),
    /** JSON array of durations (src/contracts/retrySchedule.ts); when set it replaces the three above. */
    retrySchedule: text("retry_schedule"),
    /** Encrypted at rest. */
    signingSecret: text("signing_secret").notNull(),
    /** hmac-sha256 (signing_secret is whsec_…) or ed25519 (whsk_…): an application endpoint's too. */
    signingAlgorithm: text("signing_algorithm").notNull().default("hmac-sha256"),
    status: text("status").notNull().default("active"),
    /**
     * Set on the destination an application endpoint delivers through
     * (src/db/schema/outbound.ts): hidden from the destinations API, removed
     * with the endpoint or its application.
     */
    applicationId: text("application_id"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    index("destinations_scope").on(t.orgId, t.envId, t.createdAt),
    index("destinations_application").on(t.applicationId),
    // Every claim leaves paused destinations out: read from an index that holds only them, not a scan of all.
    index("destinations_paused").on(t.id).where(sql.raw("status = 'paused'")),
  ],
);

export const connections = sqliteTable(
  "connections",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id").notNull(),
    envId: text("env_id").notNull(),
    sourceId: text("source_id").notNull().references(() => sources.id, { onDelete: "cascade" }),
    destinationId: text("destination_id").notNull().references(() => destinations.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    description: text("description"),
    enabled: integer("enabled").notNull().default(1),
    filterRules: text("filter_rules"),
    status: text("status").notNull().default("active"),
    eventCount: integer("event_count").notNull().default(0),
    lastEventAt: text("last_event_at"),
    transformEnabled: integer("transform_enabled").notNull().default(0),
    transformExpression: text("transform_expression"),
    /** 1: events are delivered one at a time per ordering key, in the order received (docs/delivery.md, "Ordered delivery"). */
    ordered: integer("ordered").notNull().default(0),
    /** A filter-rule field path (src/rules/filter.ts) giving each event's key; null: the whole connection is one line. */
    orderingKey: text("ordering_key"),
    /** `continue`: a key whose head reached the DLQ moves on; `block`: it waits for an operator (redrive or skip). */
    onDlq: text("on_dlq").notNull().default("continue"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [index("connections_source").on(t.sourceId), index("connections_scope").on(t.orgId, t.envId, t.createdAt)],
);

/**
 * One row per attempt. A row with status `queued` is also the unit of work:
 * workers claim due queued rows (or `delivering` rows whose lease expired).
 */
export const deliveryAttempts = sqliteTable(
  "delivery_attempts",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id").notNull(),
    envId: text("env_id").notNull(),
    eventId: text("event_id").notNull().references(() => events.id, { onDelete: "cascade" }),
    connectionId: text("connection_id"),
    destinationId: text("destination_id").notNull(),
    requestUrl: text("request_url").notNull(),
    requestMethod: text("request_method").notNull(),
    requestHeaders: text("request_headers"),
    requestBodySize: integer("request_body_size").notNull().default(0),
    responseStatus: integer("response_status"),
    responseHeaders: text("response_headers"),
    responseBody: text("response_body"),
    durationMs: integer("duration_ms"),
    status: text("status").notNull(),
    /** `error` holds the failure class (timeout, http_503, transform_error...); this the human detail. */
    error: text("error"),
    errorDetail: text("error_detail"),
    attemptNumber: integer("attempt_number"),
    nextRetryAt: text("next_retry_at"),
    isDlq: integer("is_dlq").notNull().default(0),
    dlqAt: text("dlq_at"),
    triggerType: text("trigger_type"),
    /** When a queued row becomes due. */
    scheduledAt: text("scheduled_at").notNull(),
    /**
     * When the worker started the request; for an attempt that ended before
     * sending (transform error, destination disabled or deleted), when it was
     * attempted. Null while queued. created_at is when the row was queued.
     */
    sentAt: text("sent_at"),
    /** While `delivering`: the claim expires then and the row is claimable again. */
    leaseUntil: text("lease_until"),
    /** The node (nodes.id) whose claim holds the lease; its rows go back to the queue when it dies. */
    claimedBy: text("claimed_by"),
    /** Replay deliveries are never retried automatically. */
    noRetry: integer("no_retry").notNull().default(0),
    /** 1: an operator forced the delivery of a rejected event (retry with force: true); its retries carry it on. */
    forced: integer("forced").notNull().default(0),
    jobId: text("job_id"),
    /**
     * Ordered delivery (docs/delivery.md, "Ordered delivery"): the line this
     * row waits in, `<connection or destination id>:<key>` (no `:`
     * and key: the null-key line); null for unordered rows, manual retries and
     * replays. A row of a line whose head is not settled is inserted `held`,
     * never claimed, and turned `queued` when the head settles.
     */
    orderingLane: text("ordering_lane"),
    /** The key as computed at routing (null: the path was missing, or the target has no key path). */
    orderingKey: text("ordering_key"),
    /** 1: the target's on_dlq is `block`: once this row is in the DLQ its line waits for an operator. */
    orderingHold: integer("ordering_hold").notNull().default(0),
    createdAt: text("created_at").notNull(),
  },
  (t) => [
    // Partial indexes: the queue indexes hold only live work, so they stay small however much
    // history accumulates, and finishing a delivery touches as few index entries as possible.
    // Per destination, so claims skip paused and rate-limited destinations by index seeks, not scans.
    index("attempts_due").on(t.destinationId, t.scheduledAt).where(sql.raw("status = 'queued'")),
    // The same rows by due time: a claim finds the oldest due rows, and the next row to come due, in one seek
    // however many destinations have rows waiting (src/delivery/queue.ts).
    index("attempts_due_time").on(t.scheduledAt, t.destinationId).where(sql.raw("status = 'queued'")),
    index("attempts_leased").on(t.leaseUntil).where(sql.raw("status = 'delivering'")),
    index("attempts_event").on(t.eventId),
    index("attempts_scope_created").on(t.orgId, t.envId, t.createdAt, t.id),
    index("attempts_destination").on(t.destinationId, t.createdAt),
    index("attempts_dlq").on(t.destinationId).where(sql.raw("is_dlq = 1")),
    index("attempts_job").on(t.jobId, t.status).where(sql.raw("job_id is not null")),
    // GET /v1/stats: DLQ size per environment (domain/stats.ts repeats the condition). Its queue depth reads
    // attempts_due and attempts_leased: an index keyed by status would be rewritten on every claim and completion.
    // Ordered lines: a line's live rows (its head, those held behind it, a DLQ head that blocks it), so
    // "is this line busy" and "its next row" are one seek each, however many keys wait.
    index("attempts_lane")
      .on(t.orderingLane, t.scheduledAt, t.eventId)
      .where(sql.raw("ordering_lane is not null and (status in ('queued', 'delivering', 'held') or (is_dlq = 1 and ordering_hold = 1))")),
    // A line's head alone (queued, delivering, or a DLQ head that blocks it): at most one row a line, so "does
    // this line have a head" is one seek, where attempts_lane would read every row held behind the head (a
    // one-key backlog of n rows made each promotion and each routed row cost O(n): docs/performance.md, "Ordered delivery").
    index("attempts_lane_head")
      .on(t.orderingLane)
      .where(sql.raw("ordering_lane is not null and (status in ('queued', 'delivering') or (is_dlq = 1 and ordering_hold = 1))")),
    // Also GET /v1/delivery-attempts?is_dlq=1: newest first from the index rather than every DLQ row sorted.
    index("attempts_dlq_scope").on(t.orgId, t.envId, t.createdAt, t.id).where(sql.raw("is_dlq = 1")),
    // GET /v1/delivery-attempts?status=failed: failures are rare and final, so this index costs one entry
    // per failed attempt and nothing on the queue's hot path (src/domain/deliveryAttempts.ts repeats it).
    index("attempts_scope_failed").on(t.orgId, t.envId, t.createdAt, t.id).where(sql.raw("status = 'failed'")),
  ],
);

/** Background jobs with visible progress: replay, bulk retry, DLQ redrive. */
export const jobs = sqliteTable(
  "jobs",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id").notNull(),
    envId: text("env_id").notNull(),
    kind: text("kind").notNull(),
    params: text("params").notNull(),
    status: text("status").notNull(),
    total: integer("total").notNull().default(0),
    processed: integer("processed").notNull().default(0),
    succeeded: integer("succeeded").notNull().default(0),
    failed: integer("failed").notNull().default(0),
    /** Items matching the job's filter that it leaves alone on purpose (rejected events are never retried or redriven). */
    skipped: integer("skipped").notNull().default(0),
    /** Where a resumed job continues: the last item handled. */
    cursor: text("cursor"),
    startedAt: text("started_at").notNull(),
    completedAt: text("completed_at"),
    expiresAt: text("expires_at").notNull(),
  },
  (t) => [index("jobs_status").on(t.status)],
);
