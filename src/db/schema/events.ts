import { sql } from "drizzle-orm";
import { sqliteTable, text, integer, blob, index } from "drizzle-orm/sqlite-core";
import { sources } from "./sources";

export const events = sqliteTable(
  "events",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id").notNull(),
    envId: text("env_id").notNull(),
    sourceId: text("source_id").notNull().references(() => sources.id, { onDelete: "cascade" }),
    method: text("method").notNull(),
    path: text("path"),
    query: text("query"),
    contentType: text("content_type"),
    sourceIp: text("source_ip"),
    /** JSON object of the request headers, names lower-cased. */
    headers: text("headers").notNull(),
    /** The raw body, byte-exact. */
    body: blob("body", { mode: "buffer" }).notNull(),
    payloadSize: integer("payload_size").notNull(),
    verificationStatus: text("verification_status").notNull(),
    verificationError: text("verification_error"),
    dedupStatus: text("dedup_status").notNull(),
    dedupKey: text("dedup_key"),
    /** For a duplicate: the unique event it repeats. */
    duplicateOf: text("duplicate_of"),
    status: text("status").notNull(),
    schemaErrors: text("schema_errors"),
    eventType: text("event_type"),
    receivedAt: text("received_at").notNull(),
    /** Set once the delivery router has fanned the event out to its connections. */
    routedAt: text("routed_at"),
  },
  (t) => [
    index("events_scope_received").on(t.orgId, t.envId, t.receivedAt, t.id),
    index("events_source_received").on(t.sourceId, t.receivedAt, t.id),
    // Partial indexes: most events carry no dedup key, and only unrouted events are looked up by status.
    index("events_dedup").on(t.sourceId, t.dedupKey, t.receivedAt).where(sql`${t.dedupKey} IS NOT NULL`),
    index("events_received").on(t.receivedAt),
    index("events_unrouted").on(t.status, t.routedAt).where(sql`${t.routedAt} IS NULL`),
    // GET /v1/events?status=…: the statuses other than delivered are rare among stored events, so a list of
    // them walks this index instead of every event (src/domain/events.ts repeats the condition). An event
    // enters it at ingest and leaves it once delivered: one entry, not one per status change.
    index("events_scope_status_received").on(t.orgId, t.envId, t.status, t.receivedAt, t.id).where(sql.raw("status <> 'delivered'")),
  ],
);
