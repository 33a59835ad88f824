import { and, asc, eq, ne } from "drizzle-orm";
import { environments, memberships, organizations, users } from "../db/schema";
import { isUniqueViolation } from "../db/errors";
import { transaction } from "../db/transaction";
import type { OidcSettings } from "../config/oidc";
import { hex32 } from "../contracts/ids";
import { rank, type Role } from "../contracts/roles";
import { iso } from "../core/clock";
import { recordAudit } from "./audit";
import { openSession, type SignIn } from "./sessions";
import type { Deps, Scope } from "./deps";

/**
 * Signs in the person an OpenID Connect provider vouched for (docs/teams.md,
 * "Single sign-on"): the claims have been checked by the client
 * (src/outgoing/oidcClient.ts); here they must name a verified email of an
 * allowed domain that belongs to a user with an active membership, or one
 * the instance provisions. The role map is applied at every sign-in.
 */

/** A refusal: `message` is for the person at the browser, `reason` for the log. */
export class SignInRefused extends Error {
  constructor(
    message: string,
    readonly reason: string,
  ) {
    super(message);
  }
}

interface Found {
  id: string;
  email: string;
  orgId: string;
  envId: string;
}

export async function signInWithOidc(deps: Deps, settings: OidcSettings, claims: Record<string, unknown>, from: Omit<SignIn, "method">): Promise<{ token: string; userId: string; email: string }> {
  const email = typeof claims.email === "string" ? claims.email.trim().toLowerCase() : "";
  if (!email) throw new SignInRefused("The provider did not share your email address, so hookrelay cannot tell who you are.", `no email claim (sub ${String(claims.sub)}): is the email scope granted?`);
  let user = await userByEmail(deps, email);
  const refuse = async (message: string, reason: string): Promise<never> => {
    if (user) await recordFailure(deps, user, from.ip, reason);
    throw new SignInRefused(message, `${email}: ${reason}`);
  };

  // Some providers send the flag as a string ("true"); anything else is not a verified address.
  if (claims.email_verified !== true && claims.email_verified !== "true") await refuse(`The provider has not verified ${email}: verify it there, then sign in again.`, "email not verified");
  const domain = email.slice(email.lastIndexOf("@") + 1);
  if (settings.allowedDomains.length > 0 && !settings.allowedDomains.includes(domain)) await refuse(`Addresses of ${domain} may not sign in here.`, `domain ${domain} not allowed`);

  if (!user) {
    if (!settings.autoProvisionRole) await refuse(`There is no hookrelay account for ${email}: ask an administrator to invite you.`, "unknown user, auto-provisioning off");
    user = await provision(deps, email, typeof claims.name === "string" ? claims.name : null, settings.autoProvisionRole!);
    if (!user) await refuse("This hookrelay instance has no organization to join yet.", "no organization to provision into");
  }

  const signedIn = user!;
  const mapped = mappedRole(settings, claims);
  const result = await transaction(deps.db, async () => {
    const where = await activeMembership(deps, signedIn);
    if (!where) return null;
    const role = mapped ? await applyRoleMap(deps, signedIn, where.role, mapped, from.ip) : where.role;
    const token = await openSession(deps, signedIn.id, { method: "oidc", ...from });
    await recordAudit(deps, actorScope({ ...signedIn, ...where }, role, from.ip), { action: "login", resourceType: "user", resourceId: signedIn.id, after: { method: "oidc" }, envId: null });
    return token;
  });
  if (!result) await refuse(`Your hookrelay account (${email}) is not active in any organization: ask an administrator.`, "no active membership");
  return { token: result!, userId: signedIn.id, email };
}

function actorScope(u: Found, role: Role, ip: string | null): Scope {
  return { orgId: u.orgId, envId: u.envId, userId: u.id, via: "session", scopes: "*", role, actorName: u.email, ip };
}

async function userByEmail({ db }: Deps, email: string): Promise<Found | undefined> {
  // Stored lower-case (bootstrap, invites, provisioning): comparing the lower-cased claim is case-insensitive.
  const [user] = await db.select({ id: users.id, email: users.email, orgId: users.orgId, envId: users.envId }).from(users).where(eq(users.email, email)).limit(1);
  return user;
}

async function recordFailure(deps: Deps, user: Found, ip: string | null, reason: string) {
  const [member] = await deps.db.select({ role: memberships.role }).from(memberships).where(and(eq(memberships.userId, user.id), eq(memberships.orgId, user.orgId))).limit(1);
  await recordAudit(deps, actorScope(user, (member?.role as Role) ?? "viewer", ip), { action: "login_failed", resourceType: "user", resourceId: user.id, after: { method: "oidc", reason }, envId: null });
}

/** The organization provisioning and the role map act in: the instance's first. */
async function firstOrganization({ db }: Deps): Promise<{ orgId: string; envId: string } | undefined> {
  const [first] = await db
    .select({ orgId: organizations.id, envId: environments.id })
    .from(organizations)
    .innerJoin(environments, eq(environments.orgId, organizations.id))
    .orderBy(asc(organizations.createdAt), asc(organizations.id), asc(environments.createdAt), asc(environments.id))
    .limit(1);
  return first;
}

/** A user without a password (they sign in through the provider), an active member of the first organization. */
async function provision(deps: Deps, email: string, name: string | null, role: Role): Promise<Found | undefined> {
  const first = await firstOrganization(deps);
  if (!first) return undefined;
  const now = iso(deps.clock.now());
  const user: Found = { id: hex32(), email, ...first };
  try {
    await transaction(deps.db, async () => {
      await deps.db.insert(users).values({ ...user, passwordHash: "", name: name?.trim().slice(0, 200) || null, createdAt: now });
      await deps.db.insert(memberships).values({ id: hex32(), orgId: first.orgId, userId: user.id, role, status: "active", envId: first.envId, createdAt: now, updatedAt: now });
      await recordAudit(deps, { ...actorScope(user, role, null), via: "local", actorName: "single sign-on" }, { action: "create", resourceType: "member", resourceId: user.id, after: { email, role, status: "active" }, envId: null });
    });
  } catch (err) {
    // The same person's first sign-in on two tabs or nodes at once: the other made the user.
    if (isUniqueViolation(err)) return userByEmail(deps, email);
    throw err;
  }
  return user;
}

/**
 * The membership the session acts in: the one in the user's current
 * organization when active; else another active one, which becomes current.
 * An invited membership is accepted: the provider has just proven the email
 * the invite was sent to.
 */
async function activeMembership({ db, clock }: Deps, user: Found): Promise<{ orgId: string; envId: string; role: Role } | null> {
  const rows = await db
    .select({ id: memberships.id, orgId: memberships.orgId, envId: memberships.envId, role: memberships.role, status: memberships.status })
    .from(memberships)
    .where(and(eq(memberships.userId, user.id), ne(memberships.status, "disabled")))
    .orderBy(asc(memberships.createdAt));
  const chosen = rows.find((m) => m.orgId === user.orgId) ?? rows[0];
  if (!chosen) return null;
  if (chosen.status === "invited") await db.update(memberships).set({ status: "active", updatedAt: iso(clock.now()) }).where(eq(memberships.id, chosen.id));
  let envId = chosen.orgId === user.orgId ? user.envId : chosen.envId;
  if (!envId) {
    const [env] = await db.select({ id: environments.id }).from(environments).where(eq(environments.orgId, chosen.orgId)).orderBy(asc(environments.createdAt)).limit(1);
    if (!env) return null;
    envId = env.id;
  }
  if (chosen.orgId !== user.orgId || envId !== user.envId) {
    await db.update(users).set({ orgId: chosen.orgId, envId }).where(eq(users.id, user.id));
    Object.assign(user, { orgId: chosen.orgId, envId });
  }
  return { orgId: chosen.orgId, envId, role: chosen.role as Role };
}

/** The strongest role the claim's values map to; undefined when none maps (the role is left as it is). */
export function mappedRole(settings: Pick<OidcSettings, "roleClaim" | "roleMap">, claims: Record<string, unknown>): Role | undefined {
  if (!settings.roleClaim) return undefined;
  const raw = claims[settings.roleClaim];
  const values = Array.isArray(raw) ? raw.map(String) : typeof raw === "string" ? [raw] : [];
  let best: Role | undefined;
  for (const { value, role } of settings.roleMap) if (values.includes(value) && (!best || rank(role) > rank(best))) best = role;
  return best;
}

/**
 * Sets the mapped role on the membership in the instance's first
 * organization (the one single sign-on provisions into); memberships in
 * other organizations are their admins' to manage. The last active owner
 * stays an owner: an organization always keeps one. Returns the role the
 * session's membership has afterwards.
 */
async function applyRoleMap(deps: Deps, user: Found, current: Role, mapped: Role, ip: string | null): Promise<Role> {
  const { db, clock } = deps;
  const first = await firstOrganization(deps);
  if (!first) return current;
  const [member] = await db
    .select({ id: memberships.id, role: memberships.role })
    .from(memberships)
    .where(and(eq(memberships.orgId, first.orgId), eq(memberships.userId, user.id), eq(memberships.status, "active")))
    .limit(1);
  if (!member || member.role === mapped) return user.orgId === first.orgId && member ? (member.role as Role) : current;
  if (member.role === "owner") {
    const owners = await db
      .select({ id: memberships.id })
      .from(memberships)
      .where(and(eq(memberships.orgId, first.orgId), eq(memberships.role, "owner"), eq(memberships.status, "active"), ne(memberships.userId, user.id)))
      .limit(1);
    if (owners.length === 0) return user.orgId === first.orgId ? "owner" : current;
  }
  await db.update(memberships).set({ role: mapped, updatedAt: iso(clock.now()) }).where(eq(memberships.id, member.id));
  await recordAudit(deps, { ...actorScope({ ...user, orgId: first.orgId, envId: first.envId }, mapped, ip), via: "local", actorName: "single sign-on" }, {
    action: "role_change",
    resourceType: "member",
    resourceId: user.id,
    before: { role: member.role },
    after: { role: mapped },
    envId: null,
  });
  return user.orgId === first.orgId ? mapped : current;
}
