import { and, asc, eq, or } from "drizzle-orm";
import { environments, memberships, organizations, users } from "../db/schema";
import { notFound } from "../contracts/errors";
import type { Role } from "../contracts/roles";
import type { Deps } from "./deps";

/**
 * Where a user acts: `users.org_id` and `users.env_id`, the organization and
 * environment last used (docs/decisions.md D19, D21). A session acts there
 * only while the user's membership of that organization is active; these
 * functions move the user when they switch, sign in, or lose the
 * organization.
 */
interface Placed {
  orgId: string;
  envId: string;
}

/** The organization's first environment (every organization keeps one). */
export async function firstEnvironmentId({ db }: Pick<Deps, "db">, orgId: string): Promise<string | null> {
  const [env] = await db.select({ id: environments.id }).from(environments).where(eq(environments.orgId, orgId)).orderBy(asc(environments.createdAt), asc(environments.id)).limit(1);
  return env?.id ?? null;
}

/** The user's memberships, active ones first, then oldest first. */
async function membershipsOf({ db }: Pick<Deps, "db">, userId: string) {
  const rows = await db
    .select({ orgId: memberships.orgId, role: memberships.role, status: memberships.status, envId: memberships.envId, createdAt: memberships.createdAt })
    .from(memberships)
    .where(eq(memberships.userId, userId))
    .orderBy(asc(memberships.createdAt), asc(memberships.id));
  return [...rows.filter((m) => m.status === "active"), ...rows.filter((m) => m.status !== "active")];
}

/** Where a membership returns the user to: the environment last used there, else the organization's first. */
async function placeIn(deps: Pick<Deps, "db">, m: { orgId: string; envId: string | null }): Promise<Placed | null> {
  const envId = m.envId ?? (await firstEnvironmentId(deps, m.orgId));
  return envId ? { orgId: m.orgId, envId } : null;
}

/**
 * The organization a session acts in when its request names one
 * (`X-Hookrelay-Org`: an id or slug): only one where the user is an active
 * member; any other, existing or not, answers 404 so that nobody learns
 * which organizations exist. The choice is remembered on the user, as the
 * environment header's is; the environment becomes the one last used there.
 */
export async function chooseSessionOrganization<U extends { id: string; orgId: string; envId: string; role: Role }>(deps: Pick<Deps, "db">, user: U, ref: string): Promise<U> {
  const [m] = await deps.db
    .select({ orgId: memberships.orgId, role: memberships.role, envId: memberships.envId })
    .from(memberships)
    .innerJoin(organizations, eq(organizations.id, memberships.orgId))
    .where(and(eq(memberships.userId, user.id), eq(memberships.status, "active"), or(eq(organizations.id, ref), eq(organizations.slug, ref.toLowerCase()))))
    .limit(1);
  if (!m) throw notFound("Organization");
  if (m.orgId === user.orgId) return user;
  const placed = await placeIn(deps, m);
  if (!placed) throw notFound("Organization");
  await deps.db.update(users).set(placed).where(eq(users.id, user.id));
  return { ...user, ...placed, role: m.role as Role };
}

/**
 * Where a user signing in acts: their current organization while their
 * membership there is active, else their first active membership's. Null
 * when they have no active membership: such a user cannot sign in.
 */
export async function settleSignIn(deps: Pick<Deps, "db">, user: { id: string; orgId: string; envId: string }): Promise<Placed | null> {
  const active = (await membershipsOf(deps, user.id)).filter((m) => m.status === "active");
  if (active.some((m) => m.orgId === user.orgId)) return { orgId: user.orgId, envId: user.envId };
  for (const m of active) {
    const placed = await placeIn(deps, m);
    if (!placed) continue;
    await deps.db.update(users).set(placed).where(eq(users.id, user.id));
    return placed;
  }
  return null;
}

/**
 * Inside the transaction deleting organization `orgId`: its users' current
 * organization would take them with it by cascade, so each moves to another
 * of their memberships (an active one first), or, with none left, to
 * `fallback` (the deleting caller's), where no membership lets them in until
 * someone adds them: the account itself is kept.
 */
export async function moveUsersOut(deps: Pick<Deps, "db">, orgId: string, envIds: string[], fallback: Placed) {
  const affected = await deps.db
    .select({ id: users.id, orgId: users.orgId, envId: users.envId })
    .from(users)
    .where(or(eq(users.orgId, orgId), ...envIds.map((e) => eq(users.envId, e))));
  for (const u of affected) {
    let placed: Placed | null = null;
    for (const m of (await membershipsOf(deps, u.id)).filter((x) => x.orgId !== orgId)) {
      placed = await placeIn(deps, m);
      if (placed) break;
    }
    await deps.db
      .update(users)
      .set(placed ?? fallback)
      .where(eq(users.id, u.id));
  }
}
