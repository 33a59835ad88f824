import { and, eq } from "drizzle-orm";
import { notFound } from "../contracts/errors";
import { memberships, users } from "../db/schema";
import { transaction } from "../db/transaction";
import { iso } from "../core/clock";
import { issueLink } from "./accountLinks";
import { recordAudit } from "./audit";
import { unlockLogin } from "./sessions";
import type { Deps } from "./deps";

export interface PasswordReset {
  user: { id: string; email: string };
  /** The one-time link (24 h) to hand to the user: spending it sets a password and signs in. */
  url: string;
  expires_at: string;
  /** Whether the user's owner membership in their current organization was disabled and is active again. */
  reenabled: boolean;
}

/**
 * The recovery of a locked-out or forgotten account (docs/teams.md,
 * "Recovery"), for the operator on the machine only (`hookrelay users
 * reset-password` in local mode; there is no route). It lifts the login
 * throttle's lock, and for an owner whose membership was disabled makes it
 * active again: the operator who can open the database outranks any role,
 * and an organization must not be left without a way back to its owner.
 * The link works whatever login methods are on: spending it is how a
 * password is set.
 */
export async function issuePasswordReset(deps: Deps, email: string): Promise<PasswordReset> {
  const [user] = await deps.db
    .select({ id: users.id, email: users.email, orgId: users.orgId })
    .from(users)
    .where(eq(users.email, email.trim().toLowerCase()))
    .limit(1);
  if (!user) throw notFound(`User ${email.trim()}`);
  return transaction(deps.db, async () => {
    await unlockLogin(deps, user.email);
    const reenabled = await deps.db
      .update(memberships)
      .set({ status: "active", updatedAt: iso(deps.clock.now()) })
      .where(and(eq(memberships.userId, user.id), eq(memberships.orgId, user.orgId), eq(memberships.role, "owner"), eq(memberships.status, "disabled")))
      .returning({ id: memberships.id });
    const link = await issueLink(deps, { kind: "password_reset", userId: user.id, orgId: null, createdBy: null });
    const system = { orgId: user.orgId, envId: "", userId: null, via: "local" as const, scopes: "*", role: "owner" as const };
    await recordAudit(deps, system, {
      action: "password_reset",
      resourceType: "user",
      resourceId: user.id,
      ...(reenabled.length > 0 ? { before: { status: "disabled" }, after: { status: "active" } } : {}),
      envId: null,
    });
    return { user: { id: user.id, email: user.email }, url: link.url, expires_at: link.expiresAt, reenabled: reenabled.length > 0 };
  });
}
