import { and, desc, eq, gt, ne } from "drizzle-orm";
import type { z } from "zod";
import type { accountSessionList } from "../contracts/account";
import { AppError, notFound } from "../contracts/errors";
import { sessions, users } from "../db/schema";
import { transaction } from "../db/transaction";
import { iso } from "../core/clock";
import { recordAudit } from "./audit";
import { sha256Hex } from "./hash";
import type { Deps, Scope } from "./deps";

/**
 * A signed-in user's own account (docs/teams.md, "Accounts"): their
 * password and their sessions. Everything here is bounded by the caller's
 * own user id: nobody reaches another user's sessions through it.
 */

/**
 * The id a session is shown by. The stored id is the SHA-256 of the cookie
 * token, which a live stream's credential names (src/domain/credentials.ts):
 * the page shows a hash of that instead, so nothing it prints is a handle
 * on the credential itself.
 */
export const publicSessionId = (storedId: string) => sha256Hex(storedId).slice(0, 32);

const sessionCredentialOf = (storedId: string) => `session:${storedId}`;

type SessionList = z.infer<typeof accountSessionList>;

/** The caller's sessions that are still good, newest first; `current` is the one `token` opened. */
export async function listOwnSessions({ db, clock }: Pick<Deps, "db" | "clock">, userId: string, token: string | undefined): Promise<SessionList> {
  const current = token ? sha256Hex(token) : null;
  const rows = await db
    .select()
    .from(sessions)
    .where(and(eq(sessions.userId, userId), gt(sessions.expiresAt, iso(clock.now()))))
    .orderBy(desc(sessions.createdAt), desc(sessions.id));
  return {
    sessions: rows.map((s) => ({
      id: publicSessionId(s.id),
      method: s.method === "oidc" ? "oidc" : "password",
      created_at: s.createdAt,
      expires_at: s.expiresAt,
      last_used_at: s.lastUsedAt ?? null,
      ip: s.ip ?? null,
      user_agent: s.userAgent ?? null,
      current: s.id === current,
    })),
  };
}

/**
 * Ends one of the caller's own sessions by its public id; any other id
 * (another user's, unknown, expired) is the same 404. Live streams held
 * open with it end on every node (credential.revoked).
 */
export async function endOwnSession(deps: Deps, scope: Scope, publicId: string, token: string | undefined): Promise<{ current: boolean }> {
  if (!scope.userId) throw notFound("Session");
  const own = await deps.db.select({ id: sessions.id }).from(sessions).where(eq(sessions.userId, scope.userId));
  const match = own.find((s) => publicSessionId(s.id) === publicId);
  if (!match) throw notFound("Session");
  await transaction(deps.db, async (tx) => {
    await tx.delete(sessions).where(and(eq(sessions.id, match.id), eq(sessions.userId, scope.userId!)));
    await recordAudit({ db: tx, clock: deps.clock }, scope, { action: "revoke", resourceType: "session", resourceId: publicId, envId: null });
    deps.bus.publish({ type: "credential.revoked", credential: sessionCredentialOf(match.id) });
  });
  return { current: token !== undefined && match.id === sha256Hex(token) };
}

/** The address the login throttle counts the caller's password guesses against. */
export async function accountEmail({ db }: Pick<Deps, "db">, userId: string): Promise<string> {
  const [user] = await db.select({ email: users.email }).from(users).where(eq(users.id, userId)).limit(1);
  if (!user) throw notFound("User");
  return user.email;
}

/** Thrown when the current password does not match: the route counts it as a failed login of the account (src/api/middleware/loginThrottle.ts). */
export const wrongCurrentPassword = () =>
  new AppError("validation_error", "The current password is wrong", [{ field: "body.current_password", message: "does not match" }]);

/**
 * Sets a new password once the current one is proven, and ends every other
 * session of the user (one that knew the old password may be someone
 * else's), keeping the one the change came from.
 */
export async function changeOwnPassword(
  deps: Deps,
  scope: Scope,
  token: string | undefined,
  input: { current_password: string; new_password: string },
): Promise<{ sessions_ended: number }> {
  if (!scope.userId) throw new AppError("session_required", "Only a signed-in user changes their password");
  const [user] = await deps.db.select({ id: users.id, hash: users.passwordHash }).from(users).where(eq(users.id, scope.userId)).limit(1);
  if (!user) throw notFound("User");
  // A user without a password (signed up by invite not yet spent, or single sign-on only) has nothing to prove: the same answer as a wrong one.
  const ok = user.hash ? await Bun.password.verify(input.current_password, user.hash).catch(() => false) : false;
  if (!ok) throw wrongCurrentPassword();
  const passwordHash = await Bun.password.hash(input.new_password, { algorithm: "argon2id" });
  const keep = token ? sha256Hex(token) : "";
  return transaction(deps.db, async (tx) => {
    await tx.update(users).set({ passwordHash }).where(eq(users.id, user.id));
    const ended = await tx
      .delete(sessions)
      .where(and(eq(sessions.userId, user.id), ne(sessions.id, keep)))
      .returning({ id: sessions.id });
    // The trail names the change, never the password: both sides are masked (src/domain/audit.ts).
    await recordAudit({ db: tx, clock: deps.clock }, scope, { action: "update", resourceType: "user", resourceId: user.id, before: { password: "old" }, after: { password: "new" }, envId: null });
    // Published at the commit (src/db/committedBus.ts): streams of the ended sessions close on every node.
    for (const s of ended) deps.bus.publish({ type: "credential.revoked", credential: sessionCredentialOf(s.id) });
    return { sessions_ended: ended.length };
  });
}
