import { and, asc, eq, gt, isNull } from "drizzle-orm";
import { accountLinks, environments, memberships, sessions, users } from "../db/schema";
import { transaction } from "../db/transaction";
import { AppError } from "../contracts/errors";
import { hex32 } from "../contracts/ids";
import { iso } from "../core/clock";
import { randomToken, sha256Hex } from "./hash";
import type { Deps, Scope } from "./deps";
import { recordAudit } from "./audit";

/**
 * One-time links (docs/teams.md, "Invites and password resets"): an invite
 * to an organization, or a password reset printed by the local CLI. Only the
 * SHA-256 of the token is stored; the token rides in the URL's fragment, so
 * it never reaches a server log or a Referer header.
 */
export type AccountLinkKind = "invite" | "password_reset";

export const LINK_TTL_MS: Record<AccountLinkKind, number> = {
  invite: 7 * 24 * 3600 * 1000,
  password_reset: 24 * 3600 * 1000,
};

/** The UI page that spends a link (ui/src/pages/AcceptInvite.tsx). */
export const linkUrl = (baseUrl: string, token: string) => `${baseUrl.replace(/\/+$/, "")}/accept#token=${token}`;

/**
 * A new link for `userId`; an older unspent link of the same kind (and
 * organization) stops working, so only the newest invite or reset is live.
 */
export async function issueLink(
  { db, clock, settings }: Pick<Deps, "db" | "clock" | "settings">,
  link: { kind: AccountLinkKind; userId: string; orgId: string | null; createdBy: string | null },
): Promise<{ token: string; url: string; expiresAt: string }> {
  const token = randomToken();
  const now = clock.now();
  const expiresAt = iso(new Date(now.getTime() + LINK_TTL_MS[link.kind]));
  await transaction(db, async (tx) => {
    // Only this organization's: another organization's pending invite to the same person is none of this one's business.
    const sameOrg = link.orgId === null ? isNull(accountLinks.orgId) : eq(accountLinks.orgId, link.orgId);
    await tx
      .update(accountLinks)
      .set({ usedAt: iso(now) })
      .where(and(eq(accountLinks.userId, link.userId), eq(accountLinks.kind, link.kind), sameOrg, isNull(accountLinks.usedAt)));
    await tx.insert(accountLinks).values({ id: hex32(), ...link, tokenHash: sha256Hex(token), createdAt: iso(now), expiresAt, usedAt: null });
  });
  return { token, url: linkUrl(settings.baseUrl, token), expiresAt };
}

/**
 * Spends a link: sets the password (and name), activates the invited
 * membership and moves the user into its organization, and for a reset ends
 * every other session. A link unknown, spent or expired is one 400: the
 * answer does not tell which. Returns the user to sign in.
 */
export async function spendLink(deps: Deps, token: string, input: { password: string; name?: string; ip?: string | null }): Promise<{ user: { id: string; email: string }; kind: AccountLinkKind; orgId: string | null }> {
  const passwordHash = await Bun.password.hash(input.password, { algorithm: "argon2id" });
  const now = iso(deps.clock.now());
  return transaction(deps.db, async (tx) => {
    // Marked used in the same statement that finds it: two requests racing with one token cannot both spend it.
    const [link] = await tx
      .update(accountLinks)
      .set({ usedAt: now })
      .where(and(eq(accountLinks.tokenHash, sha256Hex(token)), isNull(accountLinks.usedAt), gt(accountLinks.expiresAt, now)))
      .returning();
    if (!link) throw spent();
    if (link.kind === "invite") {
      // An invite sets the first password of an account nobody has used yet. Once the person has one
      // (another organization's invite, single sign-on), whoever holds this link, the inviting admin
      // included, must not set another and sign in as them: they sign in as themselves, and an
      // admin adding them again makes them active at once (src/domain/members.ts).
      const [holder] = await tx.select({ passwordHash: users.passwordHash, lastLoginAt: users.lastLoginAt }).from(users).where(eq(users.id, link.userId)).limit(1);
      if (!holder || holder.passwordHash !== "" || holder.lastLoginAt !== null) throw spent();
    }
    const [user] = await tx
      .update(users)
      .set({ passwordHash, ...(input.name ? { name: input.name } : {}) })
      .where(eq(users.id, link.userId))
      .returning({ id: users.id, email: users.email });
    if (link.kind === "invite" && link.orgId) {
      const [member] = await tx
        .update(memberships)
        .set({ status: "active", updatedAt: now })
        .where(and(eq(memberships.orgId, link.orgId), eq(memberships.userId, link.userId), eq(memberships.status, "invited")))
        .returning({ envId: memberships.envId });
      // Removed (or disabled) since the invite: the link no longer admits anyone.
      if (!member) throw new AppError("validation_error", "This invite was withdrawn: ask for a new one", [{ field: "token", message: "withdrawn" }]);
      const envId = member.envId ?? (await firstEnvironment(tx, link.orgId));
      if (envId) await tx.update(users).set({ orgId: link.orgId, envId }).where(eq(users.id, link.userId));
    }
    if (link.kind === "password_reset") {
      const ended = await tx.delete(sessions).where(eq(sessions.userId, link.userId)).returning({ id: sessions.id });
      // Sent at the commit (src/db/committedBus.ts): live streams of the ended sessions close on every node.
      for (const s of ended) deps.bus.publish({ type: "credential.revoked", credential: `session:${s.id}` });
    }
    // The person who spent it is the actor, in the organization they now act in (docs/audit.md).
    const [placed] = await tx.select({ orgId: users.orgId, envId: users.envId }).from(users).where(eq(users.id, link.userId)).limit(1);
    const actor: Scope = { orgId: placed!.orgId, envId: placed!.envId, userId: link.userId, via: "session", scopes: "*", role: "viewer", actorName: user!.email, ip: input.ip ?? null };
    await recordAudit(deps, actor, {
      action: link.kind === "invite" ? "accept_invite" : "reset_password",
      resourceType: link.kind === "invite" ? "member" : "user",
      resourceId: link.userId,
      after: input.name ? { name: input.name } : null,
      envId: null,
    });
    return { user: user!, kind: link.kind as AccountLinkKind, orgId: link.orgId };
  });
}

const spent = () => new AppError("validation_error", "This link is invalid, already used or expired: ask for a new one", [{ field: "token", message: "invalid, used or expired" }]);

async function firstEnvironment(db: Deps["db"], orgId: string): Promise<string | null> {
  const [env] = await db.select({ id: environments.id }).from(environments).where(eq(environments.orgId, orgId)).orderBy(asc(environments.createdAt), asc(environments.id)).limit(1);
  return env?.id ?? null;
}
