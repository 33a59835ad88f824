import { and, asc, count, eq, ne, or } from "drizzle-orm";
import {
  alertRules,
  apiKeys,
  applications,
  collections,
  connections,
  deliveryAttempts,
  destinations,
  environments,
  eventTypes,
  issues,
  jobs,
  memberships,
  notificationChannels,
  sources,
  topics,
  users,
} from "../db/schema";
import { isUniqueViolation } from "../db/errors";
import { transaction } from "../db/transaction";
import type { CreateEnvironmentInput, EnvironmentDto, UpdateEnvironmentInput } from "../contracts/environments";
import { createEnvironmentInput, updateEnvironmentInput } from "../contracts/environments";
import { AppError, notFound, parseOrThrow } from "../contracts/errors";
import { hex32 } from "../contracts/ids";
import { iso } from "../core/clock";
import { apiKeyCredential } from "./credentials";
import { recordAudit } from "./audit";
import type { Deps, Scope } from "./deps";
import { inScope } from "./scope";
import { slugify } from "./slugs";

type EnvironmentRow = typeof environments.$inferSelect;

export function serializeEnvironment(row: EnvironmentRow): EnvironmentDto {
  return { id: row.id, org_id: row.orgId, name: row.name, slug: row.slug, created_at: row.createdAt, updated_at: row.updatedAt };
}

/** An environment of the organization by id or slug; any other (another organization's too) answers 404. */
export async function findEnvironment({ db }: Pick<Deps, "db">, orgId: string, idOrSlug: string): Promise<EnvironmentRow> {
  const rows = await db
    .select()
    .from(environments)
    .where(and(eq(environments.orgId, orgId), or(eq(environments.id, idOrSlug), eq(environments.slug, idOrSlug.trim().toLowerCase()))))
    .limit(2);
  const row = rows.find((r) => r.id === idOrSlug) ?? rows[0];
  if (!row) throw notFound("Environment");
  return row;
}

export async function listEnvironments({ db }: Deps, scope: Scope) {
  const rows = await db.select().from(environments).where(eq(environments.orgId, scope.orgId)).orderBy(asc(environments.createdAt), asc(environments.id));
  return { environments: rows.map(serializeEnvironment) };
}

/** The first of `base`, `base-2` … that no environment of the organization has. */
async function freeEnvironmentSlug({ db }: Deps, orgId: string, base: string): Promise<string> {
  const taken = new Set((await db.select({ slug: environments.slug }).from(environments).where(eq(environments.orgId, orgId))).map((r) => r.slug));
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`;
}

/** Which of name and slug a unique violation is about (both are unique in the organization). */
async function uniqueConflict({ db }: Deps, orgId: string, name: string | undefined, slug: string | undefined, exceptId?: string) {
  const others = (cond: ReturnType<typeof eq>) =>
    db
      .select({ id: environments.id })
      .from(environments)
      .where(and(eq(environments.orgId, orgId), cond, exceptId ? ne(environments.id, exceptId) : undefined))
      .limit(1);
  if (slug !== undefined && (await others(eq(environments.slug, slug))).length > 0) {
    return new AppError("conflict", `An environment with slug "${slug}" already exists`, [{ field: "body.slug", message: "must be unique in the organization (it defaults to the name)" }]);
  }
  return new AppError("conflict", `An environment named "${name}" already exists`, [{ field: "body.name", message: "must be unique in the organization" }]);
}

export async function createEnvironment(deps: Deps, scope: Scope, raw: CreateEnvironmentInput) {
  const input = parseOrThrow(createEnvironmentInput, raw, "Invalid environment");
  const slug = input.slug ?? (await freeEnvironmentSlug(deps, scope.orgId, slugify(input.name, "environment")));
  const now = iso(deps.clock.now());
  const row: EnvironmentRow = { id: hex32(), orgId: scope.orgId, name: input.name, slug, createdAt: now, updatedAt: now };
  try {
    await transaction(deps.db, async () => {
      await deps.db.insert(environments).values(row);
      // An environment belongs to the organization: its entries have no environment (docs/audit.md).
      await recordAudit(deps, scope, { action: "create", resourceType: "environment", resourceId: row.id, after: serializeEnvironment(row), envId: null });
    });
  } catch (e) {
    if (isUniqueViolation(e)) throw await uniqueConflict(deps, scope.orgId, input.name, input.slug);
    throw e;
  }
  return { environment: serializeEnvironment(row) };
}

export async function updateEnvironment(deps: Deps, scope: Scope, id: string, raw: UpdateEnvironmentInput) {
  const input = parseOrThrow(updateEnvironmentInput, raw, "Invalid environment");
  try {
    return await transaction(deps.db, async () => {
      const row = await findById(deps, scope, id);
      const next: EnvironmentRow = { ...row, name: input.name ?? row.name, slug: input.slug ?? row.slug, updatedAt: iso(deps.clock.now()) };
      await deps.db.update(environments).set({ name: next.name, slug: next.slug, updatedAt: next.updatedAt }).where(eq(environments.id, row.id));
      await recordAudit(deps, scope, { action: "update", resourceType: "environment", resourceId: row.id, before: serializeEnvironment(row), after: serializeEnvironment(next), envId: null });
      return { environment: serializeEnvironment(next) };
    });
  } catch (e) {
    if (isUniqueViolation(e)) throw await uniqueConflict(deps, scope.orgId, input.name, input.slug, id);
    throw e;
  }
}

/**
 * The environment `id` as the caller may change it. An API key belongs to one
 * environment and acts only there (docs/decisions.md D19): any other is
 * answered as unknown, so a leaked key of a test environment cannot rename
 * or force-delete production. Sessions reach every environment of their
 * organization.
 */
async function findById({ db }: Deps, scope: Scope, id: string): Promise<EnvironmentRow> {
  if (scope.via !== "session" && scope.via !== "local" && id !== scope.envId) throw notFound("Environment");
  const [row] = await db
    .select()
    .from(environments)
    .where(and(eq(environments.orgId, scope.orgId), eq(environments.id, id)))
    .limit(1);
  if (!row) throw notFound("Environment");
  return row;
}

/** What an environment holds, by kind, in the words of the refusal; kinds it holds none of are left out. */
const HOLDINGS = [
  ["sources", sources],
  ["destinations", destinations],
  ["connections", connections],
  ["applications", applications],
  ["topics", topics],
  ["event types", eventTypes],
  ["collections", collections],
  ["alert rules", alertRules],
  ["notification channels", notificationChannels],
  ["API keys", apiKeys],
] as const;

/** What an environment holds (kinds it holds none of left out); deleting an organization asks it of each of its environments. */
export async function holdings({ db }: Pick<Deps, "db">, orgId: string, envId: string) {
  const held: { kind: string; count: number }[] = [];
  for (const [kind, table] of HOLDINGS) {
    const [row] = await db
      .select({ n: count() })
      .from(table)
      .where(and(eq(table.orgId, orgId), eq(table.envId, envId)));
    const n = Number(row?.n ?? 0);
    if (n > 0) held.push({ kind, count: n });
  }
  return held;
}

/**
 * Deletes an environment. The one the caller acts in and an organization's
 * last are refused; one still holding resources is refused unless `force`,
 * which deletes them with it (docs/decisions.md D20).
 */
export async function deleteEnvironment(deps: Deps, scope: Scope, id: string, opts: { force?: boolean } = {}) {
  const row = await findById(deps, scope, id);
  if (row.id === scope.envId) throw new AppError("conflict", "This is the environment you are acting in: switch to another one before deleting it");
  const [others] = await deps.db
    .select({ n: count() })
    .from(environments)
    .where(and(eq(environments.orgId, scope.orgId), ne(environments.id, row.id)));
  if (Number(others?.n ?? 0) === 0) throw new AppError("conflict", "An organization keeps at least one environment: this is its last");
  const held = await holdings(deps, row.orgId, row.id);
  if (held.length > 0 && !opts.force) {
    const what = held.map((h) => `${h.count} ${h.kind}`).join(", ");
    throw new AppError("conflict", `Environment "${row.slug}" still holds ${what}: delete them first, or pass force=true to delete them with it`, held.map((h) => ({ field: h.kind, message: String(h.count) })));
  }
  const where = { orgId: row.orgId, envId: row.id };
  const gone = await environmentContents(deps, where);
  await transaction(deps.db, async (tx) => {
    await clearEnvironment(tx, where);
    // A user's last used environment must outlive this one: the cascade would delete the user.
    await tx.update(users).set({ envId: scope.envId }).where(eq(users.envId, row.id));
    await tx.delete(environments).where(eq(environments.id, row.id));
    await recordAudit(deps, scope, { action: "delete", resourceType: "environment", resourceId: row.id, before: { ...serializeEnvironment(row), force: Boolean(opts.force) }, envId: null });
  });
  forgetContents(deps, gone);
  return { success: true as const };
}

/** What deleting an environment takes with it that other nodes may hold open or cached: its keys, sources, destinations, connections. */
export async function environmentContents({ db }: Pick<Deps, "db">, where: { orgId: string; envId: string }) {
  return {
    keys: await db.select({ id: apiKeys.id }).from(apiKeys).where(inScope(apiKeys, where)),
    sources: await db.select({ id: sources.id }).from(sources).where(inScope(sources, where)),
    destinations: await db.select({ id: destinations.id }).from(destinations).where(inScope(destinations, where)),
    connections: await db.select({ id: connections.id }).from(connections).where(inScope(connections, where)),
  };
}

/**
 * Inside the deleting transaction: the environment's rows whose env_id
 * carries no foreign key go first; the rest (sources and what hangs on them,
 * topics, event types, collections, applications, API keys) follow the
 * environment by cascade (docs/decisions.md D20).
 */
export async function clearEnvironment(tx: Deps["db"], where: { orgId: string; envId: string }) {
  await tx.delete(alertRules).where(inScope(alertRules, where));
  await tx.delete(notificationChannels).where(inScope(notificationChannels, where));
  await tx.delete(jobs).where(inScope(jobs, where));
  await tx.delete(issues).where(inScope(issues, where));
  await tx.delete(connections).where(inScope(connections, where));
  await tx.delete(deliveryAttempts).where(inScope(deliveryAttempts, where));
  await tx.delete(destinations).where(inScope(destinations, where));
}

/** Once the delete has committed: live streams held open with the keys end, on every node, and every node forgets what it cached of the rest (as deleting each one alone does). */
export function forgetContents({ bus }: Pick<Deps, "bus">, gone: Awaited<ReturnType<typeof environmentContents>>) {
  for (const k of gone.keys) bus.publish({ type: "credential.revoked", credential: apiKeyCredential(k.id) });
  for (const r of gone.sources) bus.publish({ type: "source.updated", sourceId: r.id });
  for (const r of gone.destinations) bus.publish({ type: "destination.updated", destinationId: r.id });
  for (const r of gone.connections) bus.publish({ type: "connection.updated", connectionId: r.id });
}

/**
 * The environment a session acts in when its request names one (by id or
 * slug, in the user's organization; unknown answers 404): it becomes the
 * user's last used, which the next request without one acts in, and their
 * membership's, which switching back to the organization returns to
 * (docs/decisions.md D19).
 */
export async function chooseSessionEnvironment(deps: Deps, user: { id: string; orgId: string; envId: string }, ref: string, opts: { remember: boolean }): Promise<string> {
  const env = await findEnvironment(deps, user.orgId, ref);
  if (opts.remember && env.id !== user.envId) await rememberEnvironment(deps, user, env.id);
  return env.id;
}

/** The user's last used environment, on the user and on their membership of its organization. */
export async function rememberEnvironment({ db }: Pick<Deps, "db">, user: { id: string; orgId: string }, envId: string) {
  await transaction(db, async (tx) => {
    await tx.update(users).set({ orgId: user.orgId, envId }).where(eq(users.id, user.id));
    await tx.update(memberships).set({ envId }).where(and(eq(memberships.userId, user.id), eq(memberships.orgId, user.orgId)));
  });
}
