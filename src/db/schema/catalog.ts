import { sqliteTable, text, integer, index, uniqueIndex } from "drizzle-orm/sqlite-core";
import { organizations, environments } from "./tenancy";
import { sources } from "./sources";

/** A topic publishes onto a source of its own (type `topic`): deleting that source deletes the topic. */
export const topics = sqliteTable(
  "topics",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
    envId: text("env_id").notNull().references(() => environments.id, { onDelete: "cascade" }),
    sourceId: text("source_id").notNull().references(() => sources.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    slug: text("slug").notNull(),
    description: text("description"),
    /** JSON Schema text. */
    schema: text("schema"),
    status: text("status").notNull().default("active"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [uniqueIndex("topics_slug").on(t.orgId, t.envId, t.slug), index("topics_scope").on(t.orgId, t.envId, t.createdAt), index("topics_source").on(t.sourceId)],
);

export const eventTypes = sqliteTable(
  "event_types",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
    envId: text("env_id").notNull().references(() => environments.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    description: text("description"),
    /** JSON Schema text. */
    jsonSchema: text("json_schema"),
    status: text("status").notNull().default("active"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [uniqueIndex("event_types_name").on(t.orgId, t.envId, t.name), index("event_types_scope").on(t.orgId, t.envId, t.createdAt)],
);

/**
 * A collection's definition and its builder's state. The builder's position
 * (the last event handled, in the events' (received_at, id) order) is
 * written in the same transaction as the records and changelog entries it
 * led to, so a crash replays from there without doubling anything.
 */
export const collections = sqliteTable(
  "collections",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
    envId: text("env_id").notNull().references(() => environments.id, { onDelete: "cascade" }),
    sourceId: text("source_id").notNull().references(() => sources.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    description: text("description"),
    /** JSON array of event type names, or null for every type. */
    eventTypes: text("event_types"),
    eventTypePath: text("event_type_path").notNull().default("type"),
    keyPath: text("key_path").notNull(),
    transformExpression: text("transform_expression"),
    /** JSON array of event type names that remove a record, or null. */
    deleteEventTypes: text("delete_event_types"),
    /** Bumped when the way records are built changes: a builder pass begun before it is discarded. */
    generation: integer("generation").notNull().default(0),
    recordCount: integer("record_count").notNull().default(0),
    positionAt: text("position_at"),
    positionEventId: text("position_event_id"),
    eventsProcessed: integer("events_processed").notNull().default(0),
    eventsIgnored: integer("events_ignored").notNull().default(0),
    eventsMissingKey: integer("events_missing_key").notNull().default(0),
    eventsTransformFailed: integer("events_transform_failed").notNull().default(0),
    lastError: text("last_error"),
    lastErrorEventId: text("last_error_event_id"),
    lastErrorAt: text("last_error_at"),
    /** The backlog at creation (or rebuild): how many stored events, up to which one. */
    backfillTotal: integer("backfill_total").notNull().default(0),
    backfillProcessed: integer("backfill_processed").notNull().default(0),
    backfillUntilAt: text("backfill_until_at"),
    backfillUntilId: text("backfill_until_id"),
    backfillCompletedAt: text("backfill_completed_at"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [index("collections_scope").on(t.orgId, t.envId, t.createdAt), index("collections_source").on(t.sourceId)],
);

export const collectionRecords = sqliteTable(
  "collection_records",
  {
    id: text("id").primaryKey(),
    collectionId: text("collection_id").notNull().references(() => collections.id, { onDelete: "cascade" }),
    orgId: text("org_id").notNull(),
    envId: text("env_id").notNull(),
    recordKey: text("record_key").notNull(),
    data: text("data").notNull(),
    eventType: text("event_type"),
    sourceEventId: text("source_event_id").notNull(),
    sourceEventAt: text("source_event_at").notNull(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [uniqueIndex("collection_records_key").on(t.collectionId, t.recordKey), index("collection_records_created").on(t.collectionId, t.createdAt, t.id)],
);

/** Keyed by (collection, record_key), not by the record row: a deleted record's history stays readable. */
export const recordChangelog = sqliteTable(
  "record_changelog",
  {
    id: text("id").primaryKey(),
    collectionId: text("collection_id").notNull().references(() => collections.id, { onDelete: "cascade" }),
    recordId: text("record_id").notNull(),
    recordKey: text("record_key").notNull(),
    changeType: text("change_type").notNull(),
    beforeData: text("before_data"),
    afterData: text("after_data").notNull(),
    eventId: text("event_id").notNull(),
    eventType: text("event_type"),
    createdAt: text("created_at").notNull(),
  },
  (t) => [index("record_changelog_key").on(t.collectionId, t.recordKey, t.createdAt, t.id)],
);
