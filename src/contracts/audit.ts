import { z } from "zod";

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
