import { sqliteTable, text, integer, primaryKey } from "drizzle-orm/sqlite-core";

/**
 * Hourly rollups for GET /v1/stats (src/domain/stats.ts), so the dashboard
 * reads O(hours × destinations) rows instead of every event and attempt of
 * its 24-hour window (docs/decisions.md D25, docs/performance.md "Reads at
 * scale"). Kept by triggers in the migrations of both dialects
 * (src/db/migrations/0014_stats_rollup_triggers.sql,
 * src/db/pg/migrations/0005_stats_rollup_triggers.sql) in the writing
 * transaction, as the list counters of ./counts.ts are, so every path
 * (ingest, routing, outcomes, retention, cascades) keeps them. Derived data:
 * never exported or restored. `hour` is the first 13 characters of the ISO
 * time ("2026-03-10T07"); `shard` is as in ./counts.ts (0 on the one-file
 * store, the backend's pid on PostgreSQL); a figure is the sum over shards.
 */

/** Events per hour of received_at and current status. */
export const eventHours = sqliteTable(
  "event_hours",
  {
    orgId: text("org_id").notNull(),
    envId: text("env_id").notNull(),
    hour: text("hour").notNull(),
    status: text("status").notNull(),
    shard: integer("shard").notNull(),
    n: integer("n").notNull(),
  },
  (t) => [primaryKey({ name: "event_hours_pk", columns: [t.orgId, t.envId, t.hour, t.status, t.shard] })],
);

/**
 * Finished attempts (success or failed, with a sent_at) per hour of sent_at,
 * destination, outcome and duration bucket: the lower bound in ms of the
 * `duration_buckets` row the duration falls in, -1 for an attempt without a
 * duration. The buckets make the median's histogram; `sum_ms` the exact
 * average. `min_ms`/`max_ms` are the extremes seen in the row: a delete
 * cannot take them back, so after one they may be stale, but never outside
 * the row's bucket.
 */
export const attemptHours = sqliteTable(
  "attempt_hours",
  {
    orgId: text("org_id").notNull(),
    envId: text("env_id").notNull(),
    hour: text("hour").notNull(),
    destinationId: text("destination_id").notNull(),
    status: text("status").notNull(),
    bucket: integer("bucket").notNull(),
    shard: integer("shard").notNull(),
    n: integer("n").notNull(),
    sumMs: integer("sum_ms").notNull(),
    minMs: integer("min_ms"),
    maxMs: integer("max_ms"),
  },
  (t) => [primaryKey({ name: "attempt_hours_pk", columns: [t.orgId, t.envId, t.hour, t.destinationId, t.status, t.bucket, t.shard] })],
);

/**
 * The fixed log-scale duration histogram: one row per bucket, named by its
 * lower bound in ms; a bucket ends where the next begins. Every ms below 16
 * is a bucket of its own, then four a doubling up to 2^23 ms; the last is
 * open-ended. Written once by the migration, never changed (changing it
 * would mix bucket schemes in stored rollups).
 */
export const durationBuckets = sqliteTable("duration_buckets", {
  lowerMs: integer("lower_ms").primaryKey(),
});
