import { and, asc, count, eq, ne, or } from "drizzle-orm";
import { environments, memberships, organizations } from "../db/schema";
import { isUniqueViolation } from "../db/errors";
import { transaction } from "../db/transaction";
import type { CreateOrganizationInput, OrganizationDto, UpdateOrganizationInput } from "../contracts/organizations";
import { createOrganizationInput, updateOrganizationInput } from "../contracts/organizations";
import { AppError, notFound, parseOrThrow } from "../contracts/errors";
import { hex32 } from "../contracts/ids";
import { can, needs, type Permission, type Role } from "../contracts/roles";
import { iso } from "../core/clock";
import { recordAudit } from "./audit";
import { moveUsersOut } from "./currentOrganization";
import type { Deps, Scope } from "./deps";
import { clearEnvironment, environmentContents, forgetContents, holdings } from "./environments";
import { instanceOwnerId, isInstanceOwner } from "./instanceOwner";
import { slugify } from "./slugs";

/**
 * Organizations (docs/teams.md, "Organizations"): the instance's owner
 * creates them; their admins rename them, their owners delete them. A
 * caller sees those they are an active member of; the instance's owner sees
 * every one. An API key knows only its own.
 */
type OrganizationRow = typeof organizations.$inferSelect;

export function serializeOrganization(row: OrganizationRow, role: Role | null): OrganizationDto {
  return { id: row.id, name: row.name, slug: row.slug, created_at: row.createdAt, updated_at: row.updatedAt || row.createdAt, role };
}

/** Oldest first, as the organizations were made. */
const byAge = [asc(organizations.createdAt), asc(organizations.id)] as const;

export async function listOrganizations(deps: Deps, scope: Scope) {
  const { db } = deps;
  if (scope.via !== "session" && scope.via !== "local") {
    const [own] = await db.select().from(organizations).where(eq(organizations.id, scope.orgId)).limit(1);
    return { organizations: own ? [serializeOrganization(own, scope.role)] : [] };
  }
  // Local mode is the operator on the machine, an owner wherever it acts (src/domain/deps.ts).
  if (scope.via === "local") return { organizations: (await db.select().from(organizations).orderBy(...byAge)).map((o) => serializeOrganization(o, "owner")) };
  const mine = await db
    .select({ org: organizations, role: memberships.role })
    .from(memberships)
    .innerJoin(organizations, eq(organizations.id, memberships.orgId))
    .where(and(eq(memberships.userId, scope.userId!), eq(memberships.status, "active")))
    .orderBy(...byAge);
  if (!(await isInstanceOwner(deps, scope))) return { organizations: mine.map((m) => serializeOrganization(m.org, m.role as Role)) };
  const roleIn = new Map(mine.map((m) => [m.org.id, m.role as Role]));
  const all = await db.select().from(organizations).orderBy(...byAge);
  return { organizations: all.map((o) => serializeOrganization(o, roleIn.get(o.id) ?? null)) };
}

/**
 * The organization `id` as the caller reaches it, with their role there
 * (null: the instance's owner, who is no member of it). A key reaches only
 * its own organization, a session those it is an active member of (the
 * instance's owner: every one); any other answers 404, as if it did not
 * exist.
 */
async function reach(deps: Deps, scope: Scope, id: string): Promise<{ row: OrganizationRow; role: Role | null; instanceOwner: boolean }> {
  const [row] = await deps.db.select().from(organizations).where(eq(organizations.id, id)).limit(1);
  if (!row) throw notFound("Organization");
  if (scope.via === "local") return { row, role: "owner", instanceOwner: true };
  if (scope.via !== "session") {
    if (row.id !== scope.orgId) throw notFound("Organization");
    return { row, role: scope.role, instanceOwner: false };
  }
  const [m] = await deps.db
    .select({ role: memberships.role })
    .from(memberships)
    .where(and(eq(memberships.orgId, row.id), eq(memberships.userId, scope.userId!), eq(memberships.status, "active")))
    .limit(1);
  const instanceOwner = await isInstanceOwner(deps, scope);
  if (!m && !instanceOwner) throw notFound("Organization");
  return { row, role: (m?.role as Role | undefined) ?? null, instanceOwner };
}

/** The caller's role in the organization must allow `permission`, unless they act for the instance's owner. */
function mustBeAllowed(reached: { role: Role | null; instanceOwner: boolean }, permission: Permission) {
  if (reached.instanceOwner || (reached.role !== null && can(reached.role, permission))) return;
  throw new AppError("forbidden", `This needs the ${needs[permission]} role in the organization or higher; yours there is ${reached.role}`);
}

/** The first of `base`, `base-2` … that no organization has (slugs are unique in the instance). */
async function freeOrganizationSlug({ db }: Deps, base: string): Promise<string> {
  const taken = new Set((await db.select({ slug: organizations.slug }).from(organizations)).map((r) => r.slug));
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`;
}

const slugTaken = (slug: string) =>
  new AppError("conflict", `An organization with slug "${slug}" already exists`, [{ field: "body.slug", message: "must be unique in the instance (it defaults to the name)" }]);

/**
 * Creates an organization with its first environment, `production`, and
 * makes the creator its active owner (local CLI mode: the instance's owner).
 * Only the instance's owner gets here (instanceOwnerOnly on the route).
 */
export async function createOrganization(deps: Deps, scope: Scope, raw: CreateOrganizationInput) {
  const input = parseOrThrow(createOrganizationInput, raw, "Invalid organization");
  const creator = scope.userId ?? (scope.via === "local" ? await instanceOwnerId(deps.db) : null);
  if (!creator) throw new AppError("forbidden", "Only the instance's owner may create organizations");
  const slug = input.slug ?? (await freeOrganizationSlug(deps, slugify(input.name, "organization")));
  const now = iso(deps.clock.now());
  const row: OrganizationRow = { id: hex32(), name: input.name, slug, createdAt: now, updatedAt: now };
  const envId = hex32();
  try {
    await transaction(deps.db, async (tx) => {
      await tx.insert(organizations).values(row);
      await tx.insert(environments).values({ id: envId, orgId: row.id, name: "production", slug: "production", createdAt: now, updatedAt: now });
      await tx.insert(memberships).values({ id: hex32(), orgId: row.id, userId: creator, role: "owner", status: "active", envId, createdAt: now, updatedAt: now });
      // The new organization's trail starts with its making.
      await recordAudit(deps, { ...scope, orgId: row.id }, { action: "create", resourceType: "organization", resourceId: row.id, after: serializeOrganization(row, null), envId: null });
    });
  } catch (e) {
    if (isUniqueViolation(e)) throw slugTaken(slug);
    throw e;
  }
  return { organization: serializeOrganization(row, "owner") };
}

/** Renames an organization or changes its slug: its admins and owners, or the instance's owner. */
export async function updateOrganization(deps: Deps, scope: Scope, id: string, raw: UpdateOrganizationInput) {
  const input = parseOrThrow(updateOrganizationInput, raw, "Invalid organization");
  const reached = await reach(deps, scope, id);
  mustBeAllowed(reached, "administer");
  const { row } = reached;
  const next: OrganizationRow = { ...row, name: input.name ?? row.name, slug: input.slug ?? row.slug, updatedAt: iso(deps.clock.now()) };
  try {
    await transaction(deps.db, async (tx) => {
      await tx.update(organizations).set({ name: next.name, slug: next.slug, updatedAt: next.updatedAt }).where(eq(organizations.id, row.id));
      await recordAudit(deps, { ...scope, orgId: row.id }, { action: "update", resourceType: "organization", resourceId: row.id, before: serializeOrganization(row, null), after: serializeOrganization(next, null), envId: null });
    });
  } catch (e) {
    if (isUniqueViolation(e)) throw slugTaken(next.slug);
    throw e;
  }
  return { organization: serializeOrganization(next, reached.role) };
}

/**
 * Deletes an organization: its owners, or the instance's owner. The one the
 * caller acts in and the instance's last are refused; one whose
 * environments hold resources is refused unless `force`, which deletes them
 * with it, environment by environment as deleting each one does, all in one
 * transaction (docs/decisions.md D20).
 */
export async function deleteOrganization(deps: Deps, scope: Scope, id: string, opts: { force?: boolean } = {}) {
  const reached = await reach(deps, scope, id);
  mustBeAllowed(reached, "own");
  const { row } = reached;
  if (row.id === scope.orgId) throw new AppError("conflict", "This is the organization you are acting in: switch to another one before deleting it");
  const [others] = await deps.db.select({ n: count() }).from(organizations).where(ne(organizations.id, row.id));
  if (Number(others?.n ?? 0) === 0) throw new AppError("conflict", "The instance keeps at least one organization: this is its last");
  const envs = await deps.db.select({ id: environments.id, slug: environments.slug }).from(environments).where(eq(environments.orgId, row.id)).orderBy(asc(environments.createdAt));
  const held = [];
  for (const env of envs) {
    const h = await holdings(deps, row.id, env.id);
    if (h.length > 0) held.push({ env: env.slug, what: h.map((x) => `${x.count} ${x.kind}`).join(", ") });
  }
  if (held.length > 0 && !opts.force) {
    const what = held.map((h) => `environment "${h.env}" holds ${h.what}`).join("; ");
    throw new AppError("conflict", `Organization "${row.slug}" still holds resources (${what}): delete them first, or pass force=true to delete them with it`, held.map((h) => ({ field: h.env, message: h.what })));
  }
  const gone = [];
  for (const env of envs) gone.push(await environmentContents(deps, { orgId: row.id, envId: env.id }));
  await transaction(deps.db, async (tx) => {
    for (const env of envs) await clearEnvironment(tx, { orgId: row.id, envId: env.id });
    await moveUsersOut(deps, row.id, envs.map((e) => e.id), { orgId: scope.orgId, envId: scope.envId });
    // Its own trail goes with it; the caller's organization keeps the record of the deletion.
    await recordAudit(deps, scope, { action: "delete", resourceType: "organization", resourceId: row.id, before: serializeOrganization(row, null), envId: null });
    await tx.delete(organizations).where(eq(organizations.id, row.id));
  });
  for (const g of gone) forgetContents(deps, g);
  return { success: true as const };
}

/** Whether `ref` (an id or a slug) names the organization `orgId`: how a key's X-Hookrelay-Org is checked without telling whether another exists. */
export async function organizationNamed({ db }: Pick<Deps, "db">, orgId: string, ref: string): Promise<boolean> {
  if (ref === orgId) return true;
  const [row] = await db.select({ slug: organizations.slug }).from(organizations).where(eq(organizations.id, orgId)).limit(1);
  return row?.slug === ref.toLowerCase();
}

/** An organization by id or slug, whoever asks: for local CLI mode, the operator on the machine (`--org`). */
export async function organizationByRef({ db }: Pick<Deps, "db">, ref: string): Promise<OrganizationRow | null> {
  const rows = await db
    .select()
    .from(organizations)
    .where(or(eq(organizations.id, ref), eq(organizations.slug, ref.trim().toLowerCase())))
    .limit(2);
  return rows.find((r) => r.id === ref) ?? rows[0] ?? null;
}
