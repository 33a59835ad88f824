import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { accountLinks, auditLog, environments, memberships, organizations, users } from "../../src/db/schema";
import { hex32 } from "../../src/contracts/ids";
import { manualClock } from "../../src/core/clock";
import { sha256Hex } from "../../src/domain/hash";
import { defaultScope } from "../../src/domain/bootstrap";
import { issueLink } from "../../src/domain/accountLinks";
import { updateMember } from "../../src/domain/members";
import { startClockedServer } from "../helpers/clockedServer";
import { joinAs, MEMBER_PASSWORD, sessionFrom, tokenOf, type Member } from "../helpers/members";
import { ADMIN, call, type TestServer } from "../helpers/server";
import { useServer } from "../helpers/fixture";

let server: TestServer, key: string;
let owner: Record<string, string>;
let ownerId: string;

useServer({}, (s) => ({ server, key } = s));
beforeAll(async () => {
  owner = await server.session();
  ownerId = (await call(server, "GET", "/v1/auth/me", { headers: owner })).body.user.id;
});

const members = async () => (await call(server, "GET", "/v1/members", { headers: owner })).body.members as { user_id: string; email: string; role: string; status: string }[];
const membershipOf = async (userId: string) => (await server.deps.db.select().from(memberships).where(eq(memberships.userId, userId)))[0];
const accept = (token: string, password = MEMBER_PASSWORD, name?: string) => call(server, "POST", "/v1/auth/invites/accept", { body: { token, password, ...(name ? { name } : {}) } });
const unique = (what: string) => `${what}-${crypto.randomUUID().slice(0, 8)}@test.local`;

/** A user with a password who belongs to a second organization only, inserted as rows. */
async function userOfAnotherOrg(email = unique("elsewhere")) {
  const now = new Date().toISOString();
  const orgId = hex32(), envId = hex32(), userId = hex32();
  await server.deps.db.insert(organizations).values({ id: orgId, name: "Elsewhere", slug: `elsewhere-${orgId}`, createdAt: now, updatedAt: now });
  await server.deps.db.insert(environments).values({ id: envId, orgId, name: "production", slug: "production", createdAt: now, updatedAt: now });
  const passwordHash = await Bun.password.hash(MEMBER_PASSWORD, { algorithm: "argon2id" });
  await server.deps.db.insert(users).values({ id: userId, email, passwordHash, name: "Else Where", orgId, envId, createdAt: now });
  await server.deps.db.insert(memberships).values({ id: hex32(), orgId, userId, role: "owner", status: "active", envId, createdAt: now, updatedAt: now });
  return { orgId, envId, userId, email };
}

describe("GET /v1/members", () => {
  it("lists the organization's members: the bootstrap admin is its active owner", async () => {
    const res = await call(server, "GET", "/v1/members", { key });
    expect(res.status).toBe(200);
    expect(res.body.members[0]).toEqual({ user_id: ownerId, email: ADMIN.email, name: null, role: "owner", status: "active", last_login_at: expect.any(String), created_at: expect.any(String) });
  });

  it("is readable by a viewer, with a session and with a key", async () => {
    const viewer = await joinAs(server, { headers: owner }, "viewer");
    const res = await call(server, "GET", "/v1/members", { headers: viewer.session });
    expect(res.status).toBe(200);
    expect(res.body.members.map((m: { email: string }) => m.email)).toContain(viewer.email);
  });

  it("never lists another organization's members", async () => {
    const other = await userOfAnotherOrg();
    expect((await members()).map((m) => m.user_id)).not.toContain(other.userId);
  });
});

describe("POST /v1/members", () => {
  it("invites a new email: an invited member, a user without a password and a one-time link for 7 days", async () => {
    const email = unique("new");
    const res = await call(server, "POST", "/v1/members", { headers: owner, body: { email: email.toUpperCase(), role: "developer", name: "New Person" } });
    expect(res.status).toBe(201);
    expect(res.body.member).toEqual({ user_id: expect.any(String), email, name: "New Person", role: "developer", status: "invited", last_login_at: null, created_at: expect.any(String) });
    expect(res.body.invite_url).toMatch(/\/accept#token=[A-Za-z0-9_-]{20,}$/);
    const userId = res.body.member.user_id;
    const [user] = await server.deps.db.select().from(users).where(eq(users.id, userId));
    expect(user!.passwordHash).toBe("");
    expect(await membershipOf(userId)).toMatchObject({ role: "developer", status: "invited" });
    const [link] = await server.deps.db.select().from(accountLinks).where(eq(accountLinks.userId, userId));
    // Only the token's hash is stored.
    expect(link).toMatchObject({ kind: "invite", tokenHash: sha256Hex(tokenOf(res.body.invite_url)), createdBy: ownerId, usedAt: null });
    expect(Date.parse(link!.expiresAt) - Date.parse(link!.createdAt)).toBe(7 * 24 * 3600 * 1000);
    const [entry] = await server.deps.db.select().from(auditLog).where(and(eq(auditLog.resourceType, "member"), eq(auditLog.resourceId, userId)));
    expect(entry).toMatchObject({ action: "invite", actorType: "user", actorId: ownerId });
  });

  it("adds a user who already has an account (another organization) at once: active, no link", async () => {
    const other = await userOfAnotherOrg();
    const res = await call(server, "POST", "/v1/members", { headers: owner, body: { email: other.email, role: "viewer" } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ member: expect.objectContaining({ user_id: other.userId, role: "viewer", status: "active" }), invite_url: null });
    const rows = await server.deps.db.select().from(memberships).where(eq(memberships.userId, other.userId));
    expect(rows.map((r) => r.status)).toEqual(["active", "active"]);
    expect(await server.deps.db.select().from(accountLinks).where(eq(accountLinks.userId, other.userId))).toHaveLength(0);
  });

  it("refuses an email that is already a member: 409", async () => {
    const res = await call(server, "POST", "/v1/members", { headers: owner, body: { email: ADMIN.email, role: "viewer" } });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe("conflict");
  });

  it("sends an invited member a fresh link: the previous one stops working", async () => {
    const email = unique("again");
    const first = await call(server, "POST", "/v1/members", { headers: owner, body: { email, role: "viewer" } });
    const second = await call(server, "POST", "/v1/members", { headers: owner, body: { email, role: "developer" } });
    expect(second.status).toBe(201);
    expect(second.body.member).toMatchObject({ user_id: first.body.member.user_id, role: "developer", status: "invited" });
    expect(second.body.invite_url).not.toBe(first.body.invite_url);
    expect((await accept(tokenOf(first.body.invite_url))).status).toBe(400);
    const ok = await accept(tokenOf(second.body.invite_url));
    expect(ok.status).toBe(200);
    const me = await call(server, "GET", "/v1/auth/me", { headers: sessionFrom(server, ok.headers) });
    expect(me.body).toMatchObject({ user: { email }, role: "developer" });
  });

  it("refuses bad input with the contract's 400", async () => {
    const res = await call(server, "POST", "/v1/members", { headers: owner, body: { email: "not an email", role: "captain" } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("validation_error");
  });

  it("lets an owner add an owner, and refuses it to an admin: 403", async () => {
    const admin = await joinAs(server, { headers: owner }, "admin");
    const refused = await call(server, "POST", "/v1/members", { headers: admin.session, body: { email: unique("boss"), role: "owner" } });
    expect(refused.status).toBe(403);
    expect((await call(server, "POST", "/v1/members", { headers: admin.session, body: { email: unique("dev"), role: "developer" } })).status).toBe(201);
    expect((await call(server, "POST", "/v1/members", { headers: owner, body: { email: unique("boss"), role: "owner" } })).status).toBe(201);
  });

  it("is refused to a developer and a viewer: 403", async () => {
    for (const role of ["developer", "viewer"]) {
      const m = await joinAs(server, { headers: owner }, role);
      const res = await call(server, "POST", "/v1/members", { headers: m.session, body: { email: unique("x"), role: "viewer" } });
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe("forbidden");
    }
  });
});

describe("POST /v1/auth/invites/accept", () => {
  it("works once: sets the password and name, activates the membership, signs in; the second use is refused", async () => {
    const res = await call(server, "POST", "/v1/members", { headers: owner, body: { email: unique("once"), role: "developer" } });
    const token = tokenOf(res.body.invite_url);
    const ok = await accept(token, MEMBER_PASSWORD, "Once Only");
    expect(ok.status).toBe(200);
    expect(await membershipOf(res.body.member.user_id)).toMatchObject({ status: "active" });
    const [user] = await server.deps.db.select().from(users).where(eq(users.id, res.body.member.user_id));
    expect(user).toMatchObject({ name: "Once Only" });
    expect(await Bun.password.verify(MEMBER_PASSWORD, user!.passwordHash)).toBe(true);
    // The invitee is the actor of their acceptance, in the organization they joined.
    const entries = await server.deps.db.select().from(auditLog).where(and(eq(auditLog.resourceId, user!.id), eq(auditLog.action, "accept_invite")));
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ actorType: "user", actorId: user!.id, actorName: user!.email, resourceType: "member", orgId: (await membershipOf(user!.id))!.orgId });
    expect(JSON.parse(entries[0]!.changes!)).toEqual({ name: { before: null, after: "Once Only" } });
    const again = await accept(token, "another long password");
    expect(again.status).toBe(400);
    expect(again.body.error.message).toMatch(/invalid, already used or expired/);
  });

  it("refuses a withdrawn invite (the member removed before accepting)", async () => {
    const res = await call(server, "POST", "/v1/members", { headers: owner, body: { email: unique("withdrawn"), role: "viewer" } });
    expect((await call(server, "DELETE", `/v1/members/${res.body.member.user_id}`, { headers: owner })).status).toBe(200);
    const refused = await accept(tokenOf(res.body.invite_url));
    expect(refused.status).toBe(400);
    expect(refused.headers.getSetCookie()).toHaveLength(0);
  });

  it("refuses an invite whose member was disabled before accepting", async () => {
    const res = await call(server, "POST", "/v1/members", { headers: owner, body: { email: unique("disabled"), role: "viewer" } });
    await call(server, "PATCH", `/v1/members/${res.body.member.user_id}`, { headers: owner, body: { disabled: true } });
    expect((await accept(tokenOf(res.body.invite_url))).status).toBe(400);
  });
});

describe("invites to two organizations", () => {
  it("each keeps its own link; once one is accepted the other admits nobody, and adding the person again makes them active at once", async () => {
    const email = unique("twice");
    const here = await call(server, "POST", "/v1/members", { headers: owner, body: { email, role: "developer" } });
    const userId = here.body.member.user_id;
    // The second organization's invite, as rows and through the domain (creating organizations is not this file's).
    const other = await userOfAnotherOrg();
    const now = new Date().toISOString();
    await server.deps.db.insert(memberships).values({ id: hex32(), orgId: other.orgId, userId, role: "viewer", status: "invited", envId: null, createdAt: now, updatedAt: now });
    const there = await issueLink(server.deps, { kind: "invite", userId, orgId: other.orgId, createdBy: other.userId });

    // Their link did not withdraw ours, nor ours theirs; the person accepts theirs first.
    expect((await accept(tokenOf(there.url))).status).toBe(200);
    // Ours would now set a second password for an account in use, and sign its holder in as them: refused.
    const refused = await accept(tokenOf(here.body.invite_url), "the inviting admin's choice");
    expect(refused.status).toBe(400);
    const [user] = await server.deps.db.select().from(users).where(eq(users.id, userId));
    expect(await Bun.password.verify(MEMBER_PASSWORD, user!.passwordHash)).toBe(true);

    const again = await call(server, "POST", "/v1/members", { headers: owner, body: { email, role: "developer" } });
    expect(again.status).toBe(201);
    expect(again.body).toEqual({ member: expect.objectContaining({ user_id: userId, status: "active" }), invite_url: null });
    const login = await call(server, "POST", "/v1/auth/login", { body: { email, password: MEMBER_PASSWORD } });
    expect(login.status).toBe(200);
  });
});

describe("PATCH /v1/members/{user_id}", () => {
  let dev: Member;
  beforeAll(async () => {
    dev = await joinAs(server, { headers: owner }, "developer");
  });

  it("changes a member's role: stored, acted on at the next request, audited as role_change", async () => {
    const res = await call(server, "PATCH", `/v1/members/${dev.userId}`, { headers: owner, body: { role: "admin" } });
    expect(res.status).toBe(200);
    expect(res.body.member).toMatchObject({ user_id: dev.userId, role: "admin", status: "active" });
    expect(await membershipOf(dev.userId)).toMatchObject({ role: "admin" });
    expect((await call(server, "GET", "/v1/auth/me", { headers: dev.session })).body.role).toBe("admin");
    const [entry] = await server.deps.db.select().from(auditLog).where(and(eq(auditLog.action, "role_change"), eq(auditLog.resourceId, dev.userId)));
    expect(JSON.parse(entry!.changes!)).toEqual({ role: { before: "developer", after: "admin" } });
    await call(server, "PATCH", `/v1/members/${dev.userId}`, { headers: owner, body: { role: "developer" } });
  });

  it("an empty change or the same role answers 200 and leaves no audit entry", async () => {
    const m = await joinAs(server, { headers: owner }, "viewer");
    const entries = async () => (await server.deps.db.select().from(auditLog).where(and(eq(auditLog.resourceType, "member"), eq(auditLog.resourceId, m.userId)))).length;
    const before = await entries();
    expect((await call(server, "PATCH", `/v1/members/${m.userId}`, { headers: owner, body: {} })).status).toBe(200);
    expect((await call(server, "PATCH", `/v1/members/${m.userId}`, { headers: owner, body: { role: "viewer" } })).status).toBe(200);
    expect(await entries()).toBe(before);
    expect(await membershipOf(m.userId)).toMatchObject({ role: "viewer", status: "active" });
  });

  it("disables and re-enables: disabled, then active again", async () => {
    const m = await joinAs(server, { headers: owner }, "viewer");
    const off = await call(server, "PATCH", `/v1/members/${m.userId}`, { headers: owner, body: { disabled: true } });
    expect(off.status).toBe(200);
    expect(off.body.member.status).toBe("disabled");
    const on = await call(server, "PATCH", `/v1/members/${m.userId}`, { headers: owner, body: { disabled: false } });
    expect(on.body.member.status).toBe("active");
    // Their old session was ended by the disabling; they sign in again.
    const login = await call(server, "POST", "/v1/auth/login", { body: { email: m.email, password: MEMBER_PASSWORD } });
    expect(login.status).toBe(200);
  });

  it("re-enables one who never accepted their invite as invited again", async () => {
    const res = await call(server, "POST", "/v1/members", { headers: owner, body: { email: unique("never"), role: "viewer" } });
    const id = res.body.member.user_id;
    await call(server, "PATCH", `/v1/members/${id}`, { headers: owner, body: { disabled: true } });
    const on = await call(server, "PATCH", `/v1/members/${id}`, { headers: owner, body: { disabled: false } });
    expect(on.body.member.status).toBe("invited");
  });

  it("refuses a change of one's own role or disabling oneself: 403", async () => {
    const admin = await joinAs(server, { headers: owner }, "admin");
    for (const body of [{ role: "viewer" }, { disabled: true }]) {
      const res = await call(server, "PATCH", `/v1/members/${admin.userId}`, { headers: admin.session, body });
      expect(res.status).toBe(403);
    }
    expect((await call(server, "PATCH", `/v1/members/${ownerId}`, { headers: owner, body: { role: "admin" } })).status).toBe(403);
    expect(await membershipOf(admin.userId)).toMatchObject({ role: "admin", status: "active" });
  });

  it("lets an admin manage members below owner, not owners nor make one: 403", async () => {
    const admin = await joinAs(server, { headers: owner }, "admin");
    const v = await joinAs(server, { headers: owner }, "viewer");
    expect((await call(server, "PATCH", `/v1/members/${v.userId}`, { headers: admin.session, body: { role: "developer" } })).status).toBe(200);
    expect((await call(server, "PATCH", `/v1/members/${v.userId}`, { headers: admin.session, body: { role: "owner" } })).status).toBe(403);
    expect((await call(server, "PATCH", `/v1/members/${ownerId}`, { headers: admin.session, body: { role: "admin" } })).status).toBe(403);
    expect((await call(server, "PATCH", `/v1/members/${ownerId}`, { headers: admin.session, body: { disabled: true } })).status).toBe(403);
    expect(await membershipOf(ownerId)).toMatchObject({ role: "owner", status: "active" });
  });

  it("answers 404 for a user who is no member here (another organization's too)", async () => {
    const other = await userOfAnotherOrg();
    expect((await call(server, "PATCH", `/v1/members/${other.userId}`, { headers: owner, body: { role: "viewer" } })).status).toBe(404);
    expect((await call(server, "PATCH", `/v1/members/nobody`, { headers: owner, body: { role: "viewer" } })).status).toBe(404);
  });

  it("keeps an active owner: of two owners demoting each other at once, one succeeds and the other is refused", async () => {
    const second = await joinAs(server, { headers: owner }, "owner");
    const [a, b] = await Promise.all([
      call(server, "PATCH", `/v1/members/${second.userId}`, { headers: owner, body: { role: "admin" } }),
      call(server, "PATCH", `/v1/members/${ownerId}`, { headers: second.session, body: { role: "admin" } }),
    ]);
    // The second to run acts after the first committed: either its caller is no owner now (403) or it would leave none (409).
    expect([a.status, b.status].sort()).toEqual(expect.arrayContaining([200]));
    expect([a.status, b.status].filter((s) => s !== 200)).toHaveLength(1);
    const owners = (await members()).filter((m) => m.role === "owner" && m.status === "active");
    expect(owners.length).toBeGreaterThanOrEqual(1);
    // Restore: the bootstrap admin is an owner again.
    if (!owners.some((o) => o.user_id === ownerId)) await call(server, "PATCH", `/v1/members/${ownerId}`, { headers: second.session, body: { role: "owner" } });
    // And the second owner leaves, whichever demotion won: the tests after this one expect one owner.
    expect((await call(server, "DELETE", `/v1/members/${second.userId}`, { headers: owner })).status).toBe(200);
  });

  it("refuses to demote or disable the last active owner: 409 (only the local CLI, who is no member, can try)", async () => {
    const scope = (await defaultScope(server.deps.db))!;
    const local = { ...scope, userId: null, via: "local" as const, scopes: "*", role: "owner" as const };
    await expect(updateMember(server.deps, local, ownerId, { role: "admin" })).rejects.toMatchObject({ code: "conflict", status: 409 });
    await expect(updateMember(server.deps, local, ownerId, { disabled: true })).rejects.toMatchObject({ code: "conflict" });
    expect(await membershipOf(ownerId)).toMatchObject({ role: "owner", status: "active" });
  });
});

describe("DELETE /v1/members/{user_id}", () => {
  it("removes the membership (the account stays); audited", async () => {
    const m = await joinAs(server, { headers: owner }, "developer");
    const res = await call(server, "DELETE", `/v1/members/${m.userId}`, { headers: owner });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true });
    expect(await membershipOf(m.userId)).toBeUndefined();
    expect(await server.deps.db.select().from(users).where(eq(users.id, m.userId))).toHaveLength(1);
    expect((await members()).map((x) => x.user_id)).not.toContain(m.userId);
    const [entry] = await server.deps.db.select().from(auditLog).where(and(eq(auditLog.action, "delete"), eq(auditLog.resourceId, m.userId)));
    expect(entry).toMatchObject({ resourceType: "member", actorId: ownerId });
  });

  it("follows the same rules: not oneself, owners only by an owner, below admin refused", async () => {
    const admin = await joinAs(server, { headers: owner }, "admin");
    const dev = await joinAs(server, { headers: owner }, "developer");
    expect((await call(server, "DELETE", `/v1/members/${admin.userId}`, { headers: admin.session })).status).toBe(403);
    expect((await call(server, "DELETE", `/v1/members/${ownerId}`, { headers: admin.session })).status).toBe(403);
    expect((await call(server, "DELETE", `/v1/members/${admin.userId}`, { headers: dev.session })).status).toBe(403);
    expect((await call(server, "DELETE", `/v1/members/${dev.userId}`, { headers: admin.session })).status).toBe(200);
  });
});

describe("an invite link expires after 7 days", () => {
  const clock = manualClock(new Date());
  let clocked: TestServer, ownerKey: string;
  beforeAll(async () => {
    ({ server: clocked, key: ownerKey } = await startClockedServer(clock));
  });
  afterAll(() => clocked.close());

  const invite = async () => {
    const res = await call(clocked, "POST", "/v1/members", { key: ownerKey, body: { email: unique("late"), role: "viewer" } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.invite_url as string;
  };
  const acceptOn = (url: string) => call(clocked, "POST", "/v1/auth/invites/accept", { body: { token: tokenOf(url), password: MEMBER_PASSWORD } });

  it("works a minute before the 7 days are up", async () => {
    const url = await invite();
    clock.advance(7 * 24 * 3600 * 1000 - 60_000);
    expect((await acceptOn(url)).status).toBe(200);
  });

  it("is refused a minute after", async () => {
    const url = await invite();
    clock.advance(7 * 24 * 3600 * 1000 + 60_000);
    const res = await acceptOn(url);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("validation_error");
  });
});
