import { and, asc, eq, isNull, ne } from "drizzle-orm";
import { accountLinks, memberships, organizations, users } from "../db/schema";
import { lockRow } from "../db/rowLock";
import { isUniqueViolation } from "../db/errors";
import { transaction } from "../db/transaction";
import type { AddMemberInput, MemberDto, UpdateMemberInput } from "../contracts/members";
import { addMemberInput, updateMemberInput } from "../contracts/members";
import { can, type Role } from "../contracts/roles";
import { AppError, notFound, parseOrThrow } from "../contracts/errors";
import { hex32 } from "../contracts/ids";
import { iso } from "../core/clock";
import { issueLink } from "./accountLinks";
import { recordAudit } from "./audit";
import { cutOffMember } from "./memberAccess";
import type { Deps, Scope } from "./deps";

/**
 * Members of the caller's organization (docs/teams.md, "Members and
 * invites"). Everything here is bounded by `scope.orgId`: a user id of
 * another organization's member is 404, as an unknown one is.
 */

type MemberRow = {
  userId: string;
  email: string;
  name: string | null;
  role: string;
  status: string;
  lastLoginAt: string | null;
  createdAt: string;
  passwordHash: string;
};

const memberColumns = {
  userId: users.id,
  email: users.email,
  name: users.name,
  role: memberships.role,
  status: memberships.status,
  lastLoginAt: users.lastLoginAt,
  createdAt: memberships.createdAt,
  passwordHash: users.passwordHash,
};

export function serializeMember(row: MemberRow): MemberDto {
  return {
    user_id: row.userId,
    email: row.email,
    name: row.name,
    role: row.role as Role,
    status: row.status as MemberDto["status"],
    last_login_at: row.lastLoginAt,
    created_at: row.createdAt,
  };
}

/** What the audit trail keeps of a member: never the password hash. */
const audited = (m: MemberDto) => ({ email: m.email, name: m.name, role: m.role, status: m.status });

export async function listMembers({ db }: Deps, scope: Scope) {
  const rows = await db
    .select(memberColumns)
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(eq(memberships.orgId, scope.orgId))
    .orderBy(asc(memberships.createdAt), asc(users.email));
  return { members: rows.map(serializeMember) };
}

async function findMember({ db }: Pick<Deps, "db">, orgId: string, userId: string): Promise<MemberRow> {
  const [row] = await db
    .select(memberColumns)
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(and(eq(memberships.orgId, orgId), eq(memberships.userId, userId)))
    .limit(1);
  if (!row) throw notFound("Member");
  return row;
}

/** Owners are an owner's to make, change and remove: an admin manages the members below. */
function mayManage(scope: Scope, ...rolesTouched: Role[]) {
  if (rolesTouched.includes("owner") && !can(scope.role, "own")) {
    throw new AppError("forbidden", `Only an owner may add, change or remove an owner; your role here is ${scope.role}`);
  }
}

function notSelf(scope: Scope, userId: string, what: string) {
  if (scope.userId === userId) throw new AppError("forbidden", `You cannot ${what} yourself: ask another admin or owner of the organization`);
}

/**
 * Member changes of one organization take turns: two owners demoting each
 * other at once must not both pass the "another active owner remains" check.
 */
const holdOrganization = (tx: Deps["db"], orgId: string) => lockRow(tx, organizations, orgId);

/** Refuses a change that would leave the organization without an active owner. */
async function keepsAnOwner({ db }: Pick<Deps, "db">, orgId: string, leaving: string) {
  const others = await db
    .select({ id: memberships.id })
    .from(memberships)
    .where(and(eq(memberships.orgId, orgId), eq(memberships.role, "owner"), eq(memberships.status, "active"), ne(memberships.userId, leaving)))
    .limit(1);
  if (others.length === 0) throw new AppError("conflict", "An organization always keeps at least one active owner: make another member owner first");
}

/**
 * Adds a member. A user who already has an account (a password, or a past
 * sign-in through single sign-on) joins at once, active, with no link; an
 * unknown email gets a user without a password and an invited membership,
 * with a one-time link for 7 days. Adding an email that is already an
 * invited member sends a fresh link (the previous one stops working) and
 * sets the role given; an active or disabled member is a 409.
 */
export async function addMember(deps: Deps, scope: Scope, raw: AddMemberInput): Promise<{ member: MemberDto; invite_url: string | null }> {
  const input = parseOrThrow(addMemberInput, raw, "Invalid member");
  mayManage(scope, input.role);
  const now = iso(deps.clock.now());
  try {
    const { userId, invite } = await transaction(deps.db, async (tx) => {
      const [user] = await tx.select().from(users).where(eq(users.email, input.email)).limit(1);
      const [existing] = user ? await tx.select().from(memberships).where(and(eq(memberships.orgId, scope.orgId), eq(memberships.userId, user.id))).limit(1) : [];
      if (existing && existing.status !== "invited") throw new AppError("conflict", `${input.email} is already a member of this organization`, [{ field: "body.email", message: "already a member" }]);
      if (existing) {
        mayManage(scope, existing.role as Role);
        // Invited before they had an account, and they have one now (another organization's invite): they join at once, as an existing user would.
        const invite = user!.passwordHash === "" && user!.lastLoginAt === null;
        await tx.update(memberships).set({ role: input.role, status: invite ? "invited" : "active", updatedAt: now }).where(eq(memberships.id, existing.id));
        if (input.name && !user!.name) await tx.update(users).set({ name: input.name }).where(eq(users.id, user!.id));
        if (!invite) {
          await tx
            .update(accountLinks)
            .set({ usedAt: now })
            .where(and(eq(accountLinks.userId, user!.id), eq(accountLinks.orgId, scope.orgId), eq(accountLinks.kind, "invite"), isNull(accountLinks.usedAt)));
        }
        const again = serializeMember(await findMember(deps, scope.orgId, user!.id));
        await recordAudit(deps, scope, { action: invite ? "invite" : "update", resourceType: "member", resourceId: user!.id, before: { role: existing.role, status: existing.status }, after: audited(again), envId: null });
        return { userId: user!.id, invite };
      }
      let userId = user?.id;
      if (!userId) {
        userId = hex32();
        await tx.insert(users).values({ id: userId, email: input.email, passwordHash: "", name: input.name ?? null, orgId: scope.orgId, envId: scope.envId, createdAt: now });
      }
      // Someone who never set a password nor signed in cannot use a membership yet: they get a link.
      const invite = !user || (user.passwordHash === "" && user.lastLoginAt === null);
      await tx.insert(memberships).values({ id: hex32(), orgId: scope.orgId, userId, role: input.role, status: invite ? "invited" : "active", envId: null, createdAt: now, updatedAt: now });
      const member = serializeMember(await findMember(deps, scope.orgId, userId));
      await recordAudit(deps, scope, { action: invite ? "invite" : "create", resourceType: "member", resourceId: userId, after: audited(member), envId: null });
      return { userId, invite };
    });
    const link = invite ? await issueLink(deps, { kind: "invite", userId, orgId: scope.orgId, createdBy: scope.userId }) : null;
    return { member: serializeMember(await findMember(deps, scope.orgId, userId)), invite_url: link?.url ?? null };
  } catch (e) {
    // Two admins adding one new email at once: the second is told it exists.
    if (isUniqueViolation(e)) throw new AppError("conflict", `${input.email} is already a member of this organization`, [{ field: "body.email", message: "already a member" }]);
    throw e;
  }
}

/**
 * Changes a member's role or disables / re-enables them. Nobody changes
 * their own; owners are an owner's to change; the organization keeps an
 * active owner. Disabling cuts the member off at once (cutOffMember).
 * Re-enabling makes the member active again, or invited if they never
 * accepted their invite.
 */
export async function updateMember(deps: Deps, scope: Scope, userId: string, raw: UpdateMemberInput): Promise<{ member: MemberDto }> {
  const input = parseOrThrow(updateMemberInput, raw, "Invalid member change");
  notSelf(scope, userId, "change the role of or disable");
  await transaction(deps.db, async (tx) => {
    await holdOrganization(tx, scope.orgId);
    const before = await findMember(deps, scope.orgId, userId);
    const fromRole = before.role as Role;
    const toRole = input.role ?? fromRole;
    mayManage(scope, fromRole, toRole);
    const neverJoined = before.passwordHash === "" && before.lastLoginAt === null;
    const toStatus = input.disabled === true ? "disabled" : input.disabled === false && before.status === "disabled" ? (neverJoined ? "invited" : "active") : before.status;
    if (fromRole === "owner" && before.status === "active" && (toRole !== "owner" || toStatus !== "active")) await keepsAnOwner(deps, scope.orgId, userId);
    await tx
      .update(memberships)
      .set({ role: toRole, status: toStatus, updatedAt: iso(deps.clock.now()) })
      .where(and(eq(memberships.orgId, scope.orgId), eq(memberships.userId, userId)));
    if (toStatus === "disabled" && before.status !== "disabled") await cutOffMember(deps, scope.orgId, userId);
    const after = { ...serializeMember(before), role: toRole, status: toStatus as MemberDto["status"] };
    // A change that changes nothing (an empty body, the same role) leaves no entry: the trail is of changes.
    if (toRole === fromRole && toStatus === before.status) return;
    await recordAudit(deps, scope, {
      action: toRole !== fromRole ? "role_change" : "update",
      resourceType: "member",
      resourceId: userId,
      before: audited(serializeMember(before)),
      after: audited(after),
      envId: null,
    });
  });
  return { member: serializeMember(await findMember(deps, scope.orgId, userId)) };
}

/** Removes a member from the organization (the user's account stays): the same rules as a change, and cut off at once. */
export async function removeMember(deps: Deps, scope: Scope, userId: string): Promise<{ success: true }> {
  notSelf(scope, userId, "remove");
  await transaction(deps.db, async (tx) => {
    await holdOrganization(tx, scope.orgId);
    const before = await findMember(deps, scope.orgId, userId);
    mayManage(scope, before.role as Role);
    if (before.role === "owner" && before.status === "active") await keepsAnOwner(deps, scope.orgId, userId);
    await tx.delete(memberships).where(and(eq(memberships.orgId, scope.orgId), eq(memberships.userId, userId)));
    // An unspent invite to this organization admits no one now.
    await tx
      .update(accountLinks)
      .set({ usedAt: iso(deps.clock.now()) })
      .where(and(eq(accountLinks.userId, userId), eq(accountLinks.orgId, scope.orgId), eq(accountLinks.kind, "invite"), isNull(accountLinks.usedAt)));
    await cutOffMember(deps, scope.orgId, userId);
    await recordAudit(deps, scope, { action: "delete", resourceType: "member", resourceId: userId, before: audited(serializeMember(before)), envId: null });
  });
  return { success: true };
}
