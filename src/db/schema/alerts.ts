import { sqliteTable, text, integer, index, uniqueIndex } from "drizzle-orm/sqlite-core";
import { destinations } from "./delivery";
import { sources } from "./sources";

/**
 * Repeated delivery failures of one class to one destination (docs/decisions.md D8).
 * Kept current by the transaction that records delivery outcomes, so the
 * fingerprint is unique: a failure finds its issue by one index seek.
 */
export const issues = sqliteTable(
  "issues",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id").notNull(),
    envId: text("env_id").notNull(),
    destinationId: text("destination_id").notNull().references(() => destinations.id, { onDelete: "cascade" }),
    /** `<destination id>:<failure class>` (http_<status>, timeout, connection_error, transform_error). */
    fingerprint: text("fingerprint").notNull(),
    title: text("title").notNull(),
    status: text("status").notNull(),
    snoozedUntil: text("snoozed_until"),
    occurrenceCount: integer("occurrence_count").notNull().default(0),
    firstSeenAt: text("first_seen_at").notNull(),
    lastSeenAt: text("last_seen_at").notNull(),
    resolvedAt: text("resolved_at"),
    lastAttemptId: text("last_attempt_id"),
    lastEventId: text("last_event_id"),
    lastError: text("last_error"),
    lastStatusCode: integer("last_status_code"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("issues_fingerprint").on(t.fingerprint),
    // A success resolves its destination's unresolved issues: one seek per destination per recorded batch.
    index("issues_destination_status").on(t.destinationId, t.status),
    index("issues_scope_created").on(t.orgId, t.envId, t.createdAt, t.id),
    index("issues_scope_status").on(t.orgId, t.envId, t.status),
  ],
);

/** Secrets inside `config` (webhook secret, SMTP password, chat webhook tokens): the whole config is encrypted at rest. */
export const notificationChannels = sqliteTable(
  "notification_channels",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id").notNull(),
    envId: text("env_id").notNull(),
    name: text("name").notNull(),
    type: text("type").notNull(),
    /** The channel's config as JSON text, sealed by the secret box. */
    config: text("config").notNull(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [index("notification_channels_scope").on(t.orgId, t.envId, t.createdAt, t.id)],
);

/** A rule scoped to a source or destination goes when that source or destination is deleted. */
export const alertRules = sqliteTable(
  "alert_rules",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id").notNull(),
    envId: text("env_id").notNull(),
    name: text("name").notNull(),
    description: text("description"),
    enabled: integer("enabled").notNull().default(1),
    ruleType: text("rule_type").notNull(),
    /** JSON object, its shape per rule_type (docs/decisions.md D9), stored with defaults filled in. */
    ruleConfig: text("rule_config").notNull(),
    sourceId: text("source_id").references(() => sources.id, { onDelete: "cascade" }),
    destinationId: text("destination_id").references(() => destinations.id, { onDelete: "cascade" }),
    /** JSON array of `nc_` ids. */
    channelIds: text("channel_ids").notNull(),
    cooldownMinutes: integer("cooldown_minutes").notNull(),
    lastTriggeredAt: text("last_triggered_at"),
    triggerCount: integer("trigger_count").notNull().default(0),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
    /**
     * The alert task's state, kept here because the evaluating node may change
     * (docs/alerts.md, "Firing, resolved and what is counted"): when the
     * condition began to hold (null: not firing), and the high-water mark of
     * what the rule has reported (the last counted item's time and id), so
     * nothing is counted twice.
     */
    firingSince: text("firing_since"),
    reportedUntil: text("reported_until"),
    reportedUntilId: text("reported_until_id"),
  },
  (t) => [index("alert_rules_scope").on(t.orgId, t.envId, t.createdAt, t.id), index("alert_rules_enabled_type").on(t.enabled, t.ruleType)],
);

export const alertHistory = sqliteTable(
  "alert_history",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id").notNull(),
    envId: text("env_id").notNull(),
    alertRuleId: text("alert_rule_id")
      .notNull()
      .references(() => alertRules.id, { onDelete: "cascade" }),
    triggerReason: text("trigger_reason").notNull(),
    /** JSON object: the measured numbers. */
    triggerData: text("trigger_data").notNull(),
    /** JSON array: one entry per channel with its outcome. */
    channelsNotified: text("channels_notified").notNull(),
    createdAt: text("created_at").notNull(),
    /** `triggered` (the rule fired) or `resolved` (its condition cleared). */
    status: text("status").notNull().default("triggered"),
  },
  (t) => [index("alert_history_rule_created").on(t.alertRuleId, t.createdAt, t.id), index("alert_history_created").on(t.createdAt)],
);
