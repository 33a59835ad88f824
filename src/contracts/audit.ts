import { z } from "zod";
import { queryLimit } from "./applications";
import { isoDate } from "./common";

/** The audit log: who changed what, when and from where (docs/audit.md). */

export const actorType = z.enum(["user", "api_key", "portal", "system"]);

export const auditEntry = z.object({
  id: z.string(),
  org_id: z.string(),
  env_id: z.string().nullable(),
  actor_type: actorType,
  actor_id: z.string().nullable(),
  actor_name: z.string().nullable(),
  action: z.string(),
  resource_type: z.string(),
  resource_id: z.string().nullable(),
  /** JSON `{field: {before, after}}` with secrets masked, or null. */
  changes: z.string().nullable(),
  ip: z.string().nullable(),
  created_at: z.string(),
});
export type AuditEntryDto = z.infer<typeof auditEntry>;

export const auditList = z.object({ entries: z.array(auditEntry), has_more: z.boolean(), next_cursor: z.string().nullable() });

/** GET /v1/audit-log: filters (all optional) and a cursor; newest first. */
export const listAuditQuery = z.object({
  actor_id: z.string().min(1).max(200).optional(),
  resource_type: z.string().regex(/^[a-z_]{1,50}$/, "must be a resource type such as source or api_key").optional(),
  resource_id: z.string().min(1).max(200).optional(),
  action: z.string().regex(/^[a-z_]{1,50}$/, "must be an action such as create or login_failed").optional(),
  /** Entries made at or after this time. */
  after: isoDate.optional(),
  /** Entries made before this time. */
  before: isoDate.optional(),
  cursor: z.string().max(2000).optional(),
  limit: queryLimit(100),
});
export type ListAuditQuery = z.input<typeof listAuditQuery>;

