import { and, desc, eq, gte, lt, lte, or, type SQL } from "drizzle-orm";
import { auditLog } from "../db/schema";
import { listAuditQuery, type AuditEntryDto, type ListAuditQuery } from "../contracts/audit";
import { parseOrThrow } from "../contracts/errors";
import { decodeCursor, encodeCursor } from "../contracts/pagination";
import type { Deps, Scope } from "./deps";

/** Reading the audit trail (docs/audit.md): the caller's organization, every environment of it, newest first. */

type AuditRow = typeof auditLog.$inferSelect;

export function serializeAuditEntry(row: AuditRow): AuditEntryDto {
  return {
    id: row.id,
    org_id: row.orgId,
    env_id: row.envId,
    actor_type: row.actorType as AuditEntryDto["actor_type"],
    actor_id: row.actorId,
    actor_name: row.actorName,
    action: row.action,
    resource_type: row.resourceType,
    resource_id: row.resourceId,
    changes: row.changes,
    ip: row.ip,
    created_at: row.createdAt,
  };
}

export async function listAuditLog({ db }: Pick<Deps, "db">, scope: Pick<Scope, "orgId">, raw: ListAuditQuery = {}) {
  const query = parseOrThrow(listAuditQuery, raw ?? {}, "Invalid audit log query", ["query"]);
  const conds: (SQL | undefined)[] = [eq(auditLog.orgId, scope.orgId)];
  if (query.actor_id) conds.push(eq(auditLog.actorId, query.actor_id));
  if (query.resource_type) conds.push(eq(auditLog.resourceType, query.resource_type));
  if (query.resource_id) conds.push(eq(auditLog.resourceId, query.resource_id));
  if (query.action) conds.push(eq(auditLog.action, query.action));
  if (query.after) conds.push(gte(auditLog.createdAt, new Date(query.after).toISOString()));
  if (query.before) conds.push(lt(auditLog.createdAt, new Date(query.before).toISOString()));
  if (query.cursor) {
    const c = decodeCursor(query.cursor, "next");
    // The plain `<=` lets the index (org_id, created_at, id) seek to the cursor.
    conds.push(lte(auditLog.createdAt, c.t), or(lt(auditLog.createdAt, c.t), lt(auditLog.id, c.id)));
  }
  const rows = await db
    .select()
    .from(auditLog)
    .where(and(...conds))
    .orderBy(desc(auditLog.createdAt), desc(auditLog.id))
    .limit(query.limit + 1);
  const page = rows.slice(0, query.limit);
  const last = page[page.length - 1];
  const hasMore = rows.length > query.limit;
  return { entries: page.map(serializeAuditEntry), has_more: hasMore, next_cursor: hasMore && last ? encodeCursor({ t: last.createdAt, id: last.id }, "next") : null };
}
