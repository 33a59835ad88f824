import { auditLog } from "../db/schema";
import { hex32 } from "../contracts/ids";
import { iso } from "../core/clock";
import type { Deps, Scope } from "./deps";

/**
 * The audit trail (docs/audit.md): one entry per change, written with
 * `deps.db` so that inside a transaction it commits or rolls back with the
 * change it records. A change is never without its entry.
 */
export interface AuditChange {
  action: string;
  resourceType: string;
  resourceId: string | null;
  /** The resource as the API shows it, before and after; only fields that differ are kept, secrets masked. */
  before?: Record<string, unknown> | null;
  after?: Record<string, unknown> | null;
  /** Default: the caller's environment; null for what belongs to the organization (members, environments). */
  envId?: string | null;
}

const MASKED = "[masked]";
/** Field names whose values are secrets: never written to the trail. */
const SECRET_FIELD = /secret|password|passphrase|token|api_?key|^key$|authorization|auth_config|signing|private_?key|cookie|credential/i;

export async function recordAudit({ db, clock }: Pick<Deps, "db" | "clock">, scope: Scope, change: AuditChange): Promise<void> {
  await db.insert(auditLog).values({
    id: hex32(),
    orgId: scope.orgId,
    envId: change.envId === undefined ? scope.envId : change.envId,
    ...actorOf(scope),
    action: change.action,
    resourceType: change.resourceType,
    resourceId: change.resourceId,
    changes: changesOf(change.before ?? null, change.after ?? null),
    ip: scope.ip ?? null,
    createdAt: iso(clock.now()),
  });
}

function actorOf(scope: Scope): { actorType: string; actorId: string | null; actorName: string | null } {
  switch (scope.via) {
    case "session":
      return { actorType: "user", actorId: scope.userId, actorName: scope.actorName ?? null };
    case "api_key":
      return { actorType: "api_key", actorId: scope.apiKeyId ?? null, actorName: scope.actorName ?? null };
    case "portal":
      return { actorType: "portal", actorId: scope.portal?.applicationId ?? null, actorName: scope.actorName ?? "portal link" };
    case "local":
      return { actorType: "system", actorId: null, actorName: scope.actorName ?? "local CLI" };
  }
}

/** `{field: {before, after}}` for the fields that differ, secrets masked; null when nothing field-like is known. */
export function changesOf(before: Record<string, unknown> | null, after: Record<string, unknown> | null): string | null {
  if (!before && !after) return null;
  const out: Record<string, { before: unknown; after: unknown }> = {};
  for (const field of new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})])) {
    const b = before?.[field];
    const a = after?.[field];
    // Absent and null are the same to a reader: a create with an empty field shows nothing for it.
    if (JSON.stringify(b ?? null) === JSON.stringify(a ?? null)) continue;
    out[field] = SECRET_FIELD.test(field) ? { before: b == null ? null : MASKED, after: a == null ? null : MASKED } : { before: masked(b ?? null), after: masked(a ?? null) };
  }
  return JSON.stringify(out);
}

/**
 * A value with every secret-looking field inside it masked, at any depth: in
 * objects and arrays, and in strings that hold a JSON object (headers,
 * verification and source configs are stored as JSON text).
 */
function masked(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(masked);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, SECRET_FIELD.test(k) && v != null ? MASKED : masked(v)]));
  }
  if (typeof value === "string" && value.startsWith("{")) {
    try {
      const parsed: unknown = JSON.parse(value);
      if (parsed !== null && typeof parsed === "object") return JSON.stringify(masked(parsed));
    } catch {
      // Not JSON: an ordinary string.
    }
  }
  return value;
}
