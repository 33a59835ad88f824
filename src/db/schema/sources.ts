import { sqliteTable, text, integer, index, uniqueIndex } from "drizzle-orm/sqlite-core";
import { organizations, environments } from "./tenancy";

export const sources = sqliteTable(
  "sources",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
    envId: text("env_id").notNull().references(() => environments.id, { onDelete: "cascade" }),
    slug: text("slug").notNull(),
    name: text("name").notNull(),
    description: text("description"),
    template: text("template"),
    verificationEnabled: integer("verification_enabled").notNull().default(0),
    verificationType: text("verification_type"),
    /** Encrypted at rest (domain/secrets). */
    verificationSecret: text("verification_secret"),
    verificationHeader: text("verification_header"),
    verificationConfig: text("verification_config"),
    dedupEnabled: integer("dedup_enabled").notNull().default(0),
    dedupStrategy: text("dedup_strategy"),
    dedupField: text("dedup_field"),
    dedupWindowSeconds: integer("dedup_window_seconds").notNull().default(3600),
    ipAllowlist: text("ip_allowlist"),
    ipDenylist: text("ip_denylist"),
    status: text("status").notNull().default("active"),
    eventCount: integer("event_count").notNull().default(0),
    /** Every request received, events or not: what request_limit counts. */
    requestCount: integer("request_count").notNull().default(0),
    lastEventAt: text("last_event_at"),
    isEphemeral: integer("is_ephemeral").notNull().default(0),
    expiresAt: text("expires_at"),
    requestLimit: integer("request_limit"),
    type: text("type").notNull().default("webhook"),
    sourceConfig: text("source_config"),
    schemaValidationEnabled: integer("schema_validation_enabled").notNull().default(0),
    jsonSchema: text("json_schema"),
    schemaAction: text("schema_action"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [index("sources_scope").on(t.orgId, t.envId, t.createdAt), uniqueIndex("sources_slug").on(t.orgId, t.envId, t.slug)],
);
