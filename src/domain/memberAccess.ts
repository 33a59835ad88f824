import { and, asc, eq } from "drizzle-orm";
import { apiKeys, environments, memberships, sessions, users } from "../db/schema";
import { iso } from "../core/clock";
import { apiKeyCredential } from "./credentials";
import type { Deps } from "./deps";

/**
 * Cuts a disabled or removed member off at once (docs/teams.md, "Members and
 * invites"): their API keys of the organization are revoked and their
 * sessions end. Call it inside the transaction that changes the membership:
 * the bus (src/db/committedBus.ts) publishes `credential.revoked` once it has
 * committed, so every node closes the live streams those credentials hold.
 *
 * Every session of the user ends, not only those acting in this
 * organization: a session can switch organizations at any request, so one
 * left open could walk back in before the next check.
 */
export async function cutOffMember(deps: Pick<Deps, "db" | "clock" | "bus">, orgId: string, userId: string): Promise<{ keys: number; sessions: number }> {
  const { db, clock, bus } = deps;
  const keys = await db
    .update(apiKeys)
    .set({ revoked: 1, revokedAt: iso(clock.now()) })
    .where(and(eq(apiKeys.orgId, orgId), eq(apiKeys.userId, userId), eq(apiKeys.revoked, 0)))
    .returning({ id: apiKeys.id });
  const ended = await db.delete(sessions).where(eq(sessions.userId, userId)).returning({ id: sessions.id });
  await moveToAnotherOrganization(deps, orgId, userId);
  for (const k of keys) bus.publish({ type: "credential.revoked", credential: apiKeyCredential(k.id) });
  // A session's credential is its stored id (the token's hash), as sessionCredential makes it.
  for (const s of ended) bus.publish({ type: "credential.revoked", credential: `session:${s.id}` });
  return { keys: keys.length, sessions: ended.length };
}

/**
 * A user whose current organization was this one signs in next to another
 * where they are active (the environment they last used there), if any; a
 * session only acts where its user's membership is active.
 */
async function moveToAnotherOrganization({ db }: Pick<Deps, "db">, orgId: string, userId: string) {
  const [user] = await db.select({ orgId: users.orgId }).from(users).where(eq(users.id, userId)).limit(1);
  if (!user || user.orgId !== orgId) return;
  const [other] = await db
    .select({ orgId: memberships.orgId, envId: memberships.envId })
    .from(memberships)
    .where(and(eq(memberships.userId, userId), eq(memberships.status, "active")))
    .orderBy(asc(memberships.createdAt))
    .limit(1);
  if (!other) return;
  const envId =
    other.envId ??
    (await db.select({ id: environments.id }).from(environments).where(eq(environments.orgId, other.orgId)).orderBy(asc(environments.createdAt), asc(environments.id)).limit(1))[0]?.id;
  if (envId) await db.update(users).set({ orgId: other.orgId, envId }).where(eq(users.id, userId));
}
