import { sqliteTable, text, integer, primaryKey } from "drizzle-orm/sqlite-core";

/**
 * How many events and attempts there are per combination of the columns the
 * lists filter on, so a list's `pagination.total` is a sum over a few rows
 * instead of a count of every matching row (docs/performance.md, "Reads at
 * scale"). Kept by triggers in the migrations of both dialects
 * (src/db/migrations/0012_list_count_triggers.sql,
 * src/db/pg/migrations/0003_list_count_triggers.sql), so every write counts,
 * whichever code path makes it (ingest, routing, outcomes, retention,
 * cascades). Derived data: never export or restore these rows, the triggers
 * rebuild them as events and attempts are written.
 *
 * `shard` spreads one combination over several rows on PostgreSQL, where
 * concurrent transactions of several nodes would otherwise wait on one hot
 * row (the backend's pid picks the row); the one-file store (one writer) always writes
 * shard 0. A count is the sum over the shards. Nullable filter columns are
 * kept as "" so the key is unique on both stores.
 */
export const eventCounts = sqliteTable(
  "event_counts",
  {
    orgId: text("org_id").notNull(),
    envId: text("env_id").notNull(),
    sourceId: text("source_id").notNull(),
    status: text("status").notNull(),
    verificationStatus: text("verification_status").notNull(),
    dedupStatus: text("dedup_status").notNull(),
    method: text("method").notNull(),
    shard: integer("shard").notNull(),
    n: integer("n").notNull(),
  },
  (t) => [primaryKey({ name: "event_counts_pk", columns: [t.orgId, t.envId, t.sourceId, t.status, t.verificationStatus, t.dedupStatus, t.method, t.shard] })],
);

export const attemptCounts = sqliteTable(
  "attempt_counts",
  {
    orgId: text("org_id").notNull(),
    envId: text("env_id").notNull(),
    destinationId: text("destination_id").notNull(),
    /** "" for an attempt without a connection (replays, application endpoints). */
    connectionId: text("connection_id").notNull(),
    status: text("status").notNull(),
    isDlq: integer("is_dlq").notNull(),
    /** "" for an attempt without a trigger type. */
    triggerType: text("trigger_type").notNull(),
    shard: integer("shard").notNull(),
    n: integer("n").notNull(),
  },
  (t) => [primaryKey({ name: "attempt_counts_pk", columns: [t.orgId, t.envId, t.destinationId, t.connectionId, t.status, t.isDlq, t.triggerType, t.shard] })],
);
