import { and, eq, gt, lt } from "drizzle-orm";
import { environments, memberships, organizations, sessions, users } from "../db/schema";
import type { Role } from "../contracts/roles";
import { isInstanceOwner } from "./instanceOwner";
import { settleSignIn } from "./currentOrganization";
import type { MeBody } from "../contracts/apiKeys";
import { AppError, notFound } from "../contracts/errors";
import { iso } from "../core/clock";
import { sessionCredential } from "./credentials";
import { randomToken, sha256Hex } from "./hash";
import { transaction } from "../db/transaction";
import { recordAudit } from "./audit";
import type { Deps, Scope } from "./deps";

export const SESSION_TTL_MS = 7 * 24 * 3600 * 1000;

export interface SessionUser {
  id: string;
  email: string;
  orgId: string;
  envId: string;
  /** The user's role in `orgId`, where their membership is active. */
  role: Role;
}

/** Where a sign-in came from: kept on the session, so its owner can tell their sessions apart (GET /v1/auth/sessions). */
export interface SignIn {
  method: "password" | "oidc";
  ip: string | null;
  userAgent: string | null;
}

/** Checks the password; returns the cookie token (only its hash is stored). */
export async function login(deps: Deps, email: string, password: string, from: Omit<SignIn, "method"> = { ip: null, userAgent: null }) {
  // Awaited whoever signs in, so the first login after a start costs the same for a known and an unknown email.
  const dummy = await dummyHash();
  const [user] = await deps.db.select().from(users).where(eq(users.email, email.trim().toLowerCase())).limit(1);
  // Verify against a dummy hash when the user is unknown (or has no password) so timing does not reveal which emails exist.
  const ok = await Bun.password.verify(password, user?.passwordHash || dummy).catch(() => false);
  // The trail names the account a login was for: only a known one, in its current organization (docs/audit.md).
  const actor = user && signingIn(user, from.ip);
  if (!user || !user.passwordHash || !ok) {
    if (actor) await recordAudit(deps, actor, { action: "login_failed", resourceType: "user", resourceId: user!.id, envId: null });
    throw new AppError("unauthorized", "Invalid email or password");
  }
  // A member of no organization any more has nowhere to act: refused as a wrong password is, so the answer tells nothing of the account.
  const placed = await settleSignIn(deps, user);
  if (!placed) throw new AppError("unauthorized", "Invalid email or password");
  const token = await transaction(deps.db, async () => {
    const token = await openSession(deps, user.id, { method: "password", ...from });
    await recordAudit(deps, { ...actor!, orgId: placed.orgId, envId: placed.envId }, { action: "login", resourceType: "user", resourceId: user.id, after: { method: "password" }, envId: null });
    return token;
  });
  return { token, user: { id: user.id, email: user.email, orgId: placed.orgId, envId: placed.envId } };
}

/** A new session for a user whose identity is proven (password, one-time link, single sign-on); returns the cookie token. */
export async function openSession({ db, clock }: Pick<Deps, "db" | "clock">, userId: string, from: SignIn): Promise<string> {
  const token = randomToken();
  const now = clock.now();
  await db.insert(sessions).values({
    id: sha256Hex(token),
    userId,
    createdAt: iso(now),
    expiresAt: iso(new Date(now.getTime() + SESSION_TTL_MS)),
    method: from.method,
    ip: from.ip,
    userAgent: from.userAgent?.slice(0, 500) ?? null,
    lastUsedAt: iso(now),
  });
  await db.update(users).set({ lastLoginAt: iso(now) }).where(eq(users.id, userId));
  return token;
}

/**
 * Made on the first login, not when this module loads: an argon2id hash (64 MiB, tens of ms of CPU)
 * that a server's start and every CLI command would otherwise pay before doing anything
 * (docs/performance.md, "Start-up"). The same parameters as every stored password's hash.
 */
let dummy: Promise<string> | undefined;
const dummyHash = () => (dummy ??= Bun.password.hash("not-a-real-password", { algorithm: "argon2id" }));

/** How stale `sessions.last_used_at` may get: refreshed at most this often, so a busy UI costs one write a minute, not one per request. */
const LAST_USED_EVERY_MS = 60_000;

export async function userForSession({ db, clock }: Deps, token: string): Promise<SessionUser | null> {
  const [found] = await db
    .select({ id: users.id, email: users.email, orgId: users.orgId, envId: users.envId, role: memberships.role, sessionId: sessions.id, lastUsedAt: sessions.lastUsedAt })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    // A session acts in the user's current organization, and only while their membership there is active.
    .innerJoin(memberships, and(eq(memberships.userId, users.id), eq(memberships.orgId, users.orgId), eq(memberships.status, "active")))
    .where(and(eq(sessions.id, sha256Hex(token)), gt(sessions.expiresAt, iso(clock.now()))))
    .limit(1);
  if (!found) return null;
  const { sessionId, lastUsedAt, ...row } = found;
  const now = clock.now();
  if (!lastUsedAt || Date.parse(lastUsedAt) <= now.getTime() - LAST_USED_EVERY_MS) {
    await db.update(sessions).set({ lastUsedAt: iso(now) }).where(eq(sessions.id, sessionId));
  }
  return { ...row, role: row.role as Role };
}

/** Who is signing in, as the trail names them (the role plays no part in recording). */
const signingIn = (user: typeof users.$inferSelect, ip: string | null): Scope => ({
  orgId: user.orgId,
  envId: user.envId,
  userId: user.id,
  via: "session",
  scopes: "*",
  role: "viewer",
  actorName: user.email,
  ip,
});

export async function logout(deps: Deps, token: string, scope?: Scope) {
  const { db, bus } = deps;
  await transaction(db, async () => {
    const [ended] = await db.delete(sessions).where(eq(sessions.id, sha256Hex(token))).returning({ userId: sessions.userId });
    if (ended && scope) await recordAudit(deps, scope, { action: "logout", resourceType: "user", resourceId: ended.userId, envId: null });
  });
  // Once committed (deps.bus publishes after the commit): live streams held open with the session end now, on every node.
  bus.publish({ type: "credential.revoked", credential: sessionCredential(token) });
}

export async function pruneExpiredSessions({ db, clock }: Deps) {
  await db.delete(sessions).where(lt(sessions.expiresAt, iso(clock.now())));
}

export const sessionScope = (u: SessionUser): Scope => ({ orgId: u.orgId, envId: u.envId, userId: u.id, via: "session", scopes: "*", role: u.role, actorName: u.email });

/** The caller's user (none for an API key without one) and the organization and environment it acts in. */
export async function whoAmI(deps: Deps, scope: Scope): Promise<MeBody> {
  const { db } = deps;
  const [user] = scope.userId ? await db.select({ id: users.id, email: users.email, name: users.name }).from(users).where(eq(users.id, scope.userId)).limit(1) : [];
  const [where] = await db
    .select({ orgName: organizations.name, orgSlug: organizations.slug, envName: environments.name, envSlug: environments.slug })
    .from(environments)
    .innerJoin(organizations, eq(organizations.id, environments.orgId))
    .where(and(eq(environments.id, scope.envId), eq(environments.orgId, scope.orgId)))
    .limit(1);
  // Keys and users are deleted with their environment, so a scope always names one that exists.
  if (!where) throw notFound("Environment");
  return {
    user: user ?? null,
    role: scope.role,
    instance_owner: await isInstanceOwner(deps, scope),
    organization: { id: scope.orgId, name: where.orgName, slug: where.orgSlug },
    org_id: scope.orgId,
    env_id: scope.envId,
    org_name: where.orgName,
    env_name: where.envName,
    environment: { id: scope.envId, name: where.envName, slug: where.envSlug },
  };
}

/**
 * Lifts the login throttle's lock on an account (docs/api.md, "Locked
 * out"): the CLI in local mode records the moment on the user, and every
 * node forgets the account's counted failures when it sees a new value at
 * the account's next login (the counts are in each node's memory).
 */
export async function unlockLogin(deps: Deps, email: string) {
  const { db, clock } = deps;
  return transaction(db, async () => {
    const [user] = await db
      .update(users)
      .set({ loginUnlockedAt: iso(clock.now()) })
      .where(eq(users.email, email.trim().toLowerCase()))
      .returning({ id: users.id, email: users.email, orgId: users.orgId, envId: users.envId, unlocked_at: users.loginUnlockedAt });
    if (!user) throw notFound("User");
    // Only the operator on the server can (local mode): the trail of the user's current organization names the local CLI.
    const local: Scope = { orgId: user.orgId, envId: user.envId, userId: null, via: "local", scopes: "*", role: "owner" };
    await recordAudit(deps, local, { action: "unlock", resourceType: "user", resourceId: user.id, envId: null });
    return { user: { email: user.email }, unlocked_at: user.unlocked_at! };
  });
}

/** The account's last unlock (null: never), read before its login attempt is counted. */
export async function loginUnlockedAt({ db }: Deps, email: string): Promise<string | null> {
  const [user] = await db.select({ at: users.loginUnlockedAt }).from(users).where(eq(users.email, email.trim().toLowerCase())).limit(1);
  return user?.at ?? null;
}
