import { ilike, likePattern } from "../db/portableSql";
import { and, desc, eq, inArray, lt, lte, or, sql, type SQL } from "drizzle-orm";
import {
  createApplicationInput,
  listApplicationsQuery,
  updateApplicationInput,
  type ApplicationDto,
  type ApplicationListItem,
  type CreateApplicationInput,
  type ListApplicationsQuery,
  type UpdateApplicationInput,
} from "../contracts/applications";
import { jsonText, toFlag } from "../contracts/common";
import { AppError, notFound, parseOrThrow } from "../contracts/errors";
import { hex32 } from "../contracts/ids";
import { decodeCursor, encodeCursor } from "../contracts/pagination";
import { applicationEndpoints, applications, destinations, events, messages } from "../db/schema";
import { transaction } from "../db/transaction";
import { iso } from "../core/clock";
import { recordAudit } from "../domain/audit";
import type { Deps, Scope } from "../domain/deps";
import { listEventTypes } from "../domain/eventTypes";
import { isUniqueViolation } from "../db/errors";
import { createScope, inScope } from "../domain/scope";

/** Applications (docs/decisions.md D10, docs/outbound.md): CRUD and the cursor list; their portal links are in portalLinks.ts. */

type ApplicationRow = typeof applications.$inferSelect;

export function serializeApplication(row: ApplicationRow): ApplicationDto {
  return {
    id: row.id,
    org_id: row.orgId,
    env_id: row.envId,
    name: row.name,
    uid: row.uid,
    description: row.description,
    metadata: row.metadata,
    status: row.status,
    rate_limit: row.rateLimit,
    allow_private_endpoints: row.allowPrivateEndpoints,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

/**
 * The application `{appId}` names in the caller's scope: its id or its uid.
 * A portal link sees only its own application; any other is absent (404).
 */
export async function findApplication({ db }: Pick<Deps, "db">, scope: Scope, appId: string): Promise<ApplicationRow> {
  const byId = /^[0-9a-f]{32}$/.test(appId);
  const [row] = await db
    .select()
    .from(applications)
    .where(and(inScope(applications, scope), byId ? eq(applications.id, appId) : eq(applications.uid, appId)))
    .limit(1);
  if (!row || (scope.portal && scope.portal.applicationId !== row.id)) throw notFound("Application");
  return row;
}

function uidConflict(uid: string) {
  return new AppError("conflict", `An application with uid "${uid}" already exists`, [{ field: "body.uid", message: "must be unique in the environment" }]);
}

export async function createApplication(deps: Deps, scope: Scope, raw: CreateApplicationInput) {
  const input = parseOrThrow(createApplicationInput, raw, "Invalid application");
  const { orgId, envId } = createScope(scope, input);
  const now = iso(deps.clock.now());
  const id = hex32();
  const row: ApplicationRow = {
    id,
    orgId,
    envId,
    name: input.name,
    // Without one, the id serves: every application has a uid its paths accept.
    uid: input.uid ?? id,
    description: input.description ?? null,
    metadata: jsonText(input.metadata),
    status: input.status ?? "active",
    rateLimit: input.rate_limit ?? null,
    allowPrivateEndpoints: toFlag(input.allow_private_endpoints),
    portalGeneration: 0,
    portalResendWindow: null,
    portalResendCount: 0,
    createdAt: now,
    updatedAt: now,
  };
  const application = serializeApplication(row);
  await transaction(deps.db, async () => {
    try {
      await deps.db.insert(applications).values(row);
    } catch (err) {
      if (isUniqueViolation(err)) throw uidConflict(row.uid);
      throw err;
    }
    await recordAudit(deps, scope, { action: "create", resourceType: "application", resourceId: row.id, after: application, envId: row.envId });
  });
  return { application };
}

/**
 * Newest first, in pages of `limit`: `cursor` is the last page's position
 * (created_at, id), so pages neither repeat nor skip while applications are
 * added. endpoint_count and message_count are counted per listed application.
 */
export async function listApplications(deps: Deps, scope: Scope, raw: ListApplicationsQuery = {}) {
  const query = parseOrThrow(listApplicationsQuery, raw ?? {}, "Invalid query", ["query"]);
  if ((query.org_id && query.org_id !== scope.orgId) || (query.env_id && query.env_id !== scope.envId)) return { applications: [], cursor: null };
  const conds: (SQL | undefined)[] = [inScope(applications, scope)];
  if (scope.portal) conds.push(eq(applications.id, scope.portal.applicationId));
  const term = query.search?.trim();
  if (term) {
    const pattern = likePattern(term);
    conds.push(or(ilike(applications.name, pattern), ilike(applications.uid, pattern)));
  }
  if (query.cursor) {
    const c = decodeCursor(query.cursor, "next");
    // The plain `<=` lets the index (org_id, env_id, created_at, id) seek to the cursor.
    conds.push(lte(applications.createdAt, c.t), or(lt(applications.createdAt, c.t), lt(applications.id, c.id)));
  }
  const rows = await deps.db
    .select({
      app: applications,
      endpointCount: deps.db.$count(applicationEndpoints, eq(applicationEndpoints.applicationId, applications.id)),
      messageCount: deps.db.$count(messages, eq(messages.applicationId, applications.id)),
    })
    .from(applications)
    .where(and(...conds))
    .orderBy(desc(applications.createdAt), desc(applications.id))
    .limit(query.limit + 1);
  const page = rows.slice(0, query.limit);
  const last = page[page.length - 1];
  const items: ApplicationListItem[] = page.map((r) => ({ ...serializeApplication(r.app), endpoint_count: Number(r.endpointCount), message_count: Number(r.messageCount) }));
  return { applications: items, cursor: rows.length > query.limit && last ? encodeCursor({ t: last.app.createdAt, id: last.app.id }, "next") : null };
}

export async function getApplication(deps: Deps, scope: Scope, appId: string) {
  return { application: serializeApplication(await findApplication(deps, scope, appId)) };
}

export async function updateApplication(deps: Deps, scope: Scope, appId: string, raw: UpdateApplicationInput) {
  const input = parseOrThrow(updateApplicationInput, raw, "Invalid application");
  return transaction(deps.db, () => updateApplicationIn(deps, scope, appId, input));
}

async function updateApplicationIn(deps: Deps, scope: Scope, appId: string, input: UpdateApplicationInput) {
  const row = await findApplication(deps, scope, appId);
  const next: ApplicationRow = { ...row };
  if (input.name !== undefined) next.name = input.name;
  if (input.uid !== undefined) next.uid = input.uid;
  if (input.description !== undefined) next.description = input.description;
  if (input.metadata !== undefined) next.metadata = jsonText(input.metadata);
  if (input.rate_limit !== undefined) next.rateLimit = input.rate_limit;
  if (input.status !== undefined) next.status = input.status;
  if (input.allow_private_endpoints !== undefined) next.allowPrivateEndpoints = toFlag(input.allow_private_endpoints);
  next.updatedAt = iso(deps.clock.now());
  // The portal columns are never written from a copy read earlier: a revocation in between would be undone.
  const { id, orgId, envId, createdAt, portalGeneration, portalResendWindow, portalResendCount, ...changes } = next;
  // Disabling revokes every portal link issued so far (docs/outbound.md, "Revoking links").
  const disabling = next.status === "disabled" && row.status !== "disabled";
  let updated: ApplicationRow | undefined;
  try {
    [updated] = await deps.db
      .update(applications)
      .set(disabling ? { ...changes, portalGeneration: sql`${applications.portalGeneration} + 1` } : changes)
      .where(eq(applications.id, id))
      .returning();
  } catch (err) {
    if (isUniqueViolation(err)) throw uidConflict(next.uid);
    throw err;
  }
  if (!updated) throw notFound("Application");
  // Deliveries through the application's endpoints read its rate limit and opt-in with their destination.
  if (next.rateLimit !== row.rateLimit || next.allowPrivateEndpoints !== row.allowPrivateEndpoints) {
    const owned = await deps.db.select({ id: destinations.id }).from(destinations).where(eq(destinations.applicationId, id));
    for (const d of owned) deps.bus.publish({ type: "destination.updated", destinationId: d.id });
  }
  const application = serializeApplication(updated);
  await recordAudit(deps, scope, { action: "update", resourceType: "application", resourceId: id, before: serializeApplication(row), after: application });
  return { application };
}

/**
 * Deletes the application with everything it owns, in one transaction: its
 * messages (their events, and with them their attempts), its endpoints (their
 * destinations, and with them their issues).
 */
export async function deleteApplication(deps: Deps, scope: Scope, appId: string) {
  const row = await findApplication(deps, scope, appId);
  await transaction(deps.db, async (tx) => {
    const ownEvents = tx.select({ id: messages.eventId }).from(messages).where(eq(messages.applicationId, row.id));
    await tx.delete(events).where(inArray(events.id, ownEvents));
    await tx.delete(destinations).where(eq(destinations.applicationId, row.id));
    await tx.delete(applications).where(eq(applications.id, row.id));
    await recordAudit(deps, scope, { action: "delete", resourceType: "application", resourceId: row.id, before: serializeApplication(row) });
  });
  return { success: true as const };
}

/** The environment's event types, as an application's endpoints may subscribe to them (the portal's choice of filter_types). */
export async function listApplicationEventTypes(deps: Deps, scope: Scope, appId: string) {
  await findApplication(deps, scope, appId);
  return listEventTypes(deps, scope, {});
}
