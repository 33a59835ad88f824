import { sqliteTable, text, index } from "drizzle-orm/sqlite-core";
import { organizations } from "./tenancy";

/**
 * Who changed what, when and from where: one row per change, written in the
 * change's own transaction (docs/audit.md). `env_id` has no foreign key: an
 * entry outlives the environment it was made in; it goes with its organization.
 */
export const auditLog = sqliteTable(
  "audit_log",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
    envId: text("env_id"),
    /** `user`, `api_key`, `portal` or `system`. */
    actorType: text("actor_type").notNull(),
    actorId: text("actor_id"),
    actorName: text("actor_name"),
    action: text("action").notNull(),
    resourceType: text("resource_type").notNull(),
    resourceId: text("resource_id"),
    /** JSON `{field: {before, after}}`, secrets masked; null when nothing field-like changed. */
    changes: text("changes"),
    ip: text("ip"),
    createdAt: text("created_at").notNull(),
  },
  (t) => [index("audit_log_org_time").on(t.orgId, t.createdAt, t.id), index("audit_log_created").on(t.createdAt)],
);
