import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { hex32 } from "../../src/contracts/ids";
import { manualClock } from "../../src/core/clock";
import { auditLog, memberships, sessions, users } from "../../src/db/schema";
import { defaultScope } from "../../src/domain/bootstrap";
import { useServer } from "../helpers/fixture";
import { ADMIN, call, type TestServer } from "../helpers/server";

/** A signed-in user's own account: password and sessions (docs/teams.md, "Accounts"). */
let server: TestServer;
useServer({}, (s) => ({ server } = s));

/** A member of the default organization with a password of their own. */
async function addUser(role: "owner" | "admin" | "developer" | "viewer", password: string) {
  const { db } = server.deps;
  const scope = (await defaultScope(db))!;
  const now = new Date().toISOString();
  const id = hex32();
  const email = `${role}-${id}@test.local`;
  await db.insert(users).values({ id, email, passwordHash: await Bun.password.hash(password), orgId: scope.orgId, envId: scope.envId, createdAt: now });
  await db.insert(memberships).values({ id: hex32(), orgId: scope.orgId, userId: id, role, status: "active", envId: scope.envId, createdAt: now, updatedAt: now });
  return { id, email, password };
}

/** Signs in from a given browser (user agent); returns the headers a session request carries. */
async function signIn(email: string, password: string, userAgent = "test-agent") {
  const res = await server.request("/v1/auth/login", { method: "POST", headers: { "content-type": "application/json", "user-agent": userAgent }, body: JSON.stringify({ email, password }) });
  expect(res.status).toBe(200);
  const cookie = res.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
  return { cookie, origin: server.url, "user-agent": userAgent };
}

const me = (headers: Record<string, string>) => call(server, "GET", "/v1/auth/me", { headers }).then((r) => r.status);
const loginStatus = (email: string, password: string) => call(server, "POST", "/v1/auth/login", { body: { email, password } }).then((r) => r.status);

describe("POST /v1/auth/password", () => {
  it("refuses a wrong current password with 400 on current_password, and changes nothing", async () => {
    const u = await addUser("developer", "first password of dev");
    const h = await signIn(u.email, u.password);
    const { status, body } = await call(server, "POST", "/v1/auth/password", { headers: h, body: { current_password: "not my password", new_password: "a brand new password" } });
    expect(status).toBe(400);
    expect(body.error.code).toBe("validation_error");
    expect(body.error.details).toEqual([{ field: "body.current_password", message: "does not match" }]);
    expect(await loginStatus(u.email, u.password)).toBe(200);
    expect(await loginStatus(u.email, "a brand new password")).toBe(401);
  });

  it("refuses a new password shorter than 12 characters", async () => {
    const u = await addUser("developer", "first password of dev");
    const h = await signIn(u.email, u.password);
    const { status, body } = await call(server, "POST", "/v1/auth/password", { headers: h, body: { current_password: u.password, new_password: "short" } });
    expect(status).toBe(400);
    expect(body.error.code).toBe("validation_error");
    expect(body.error.details.map((d: { field: string }) => d.field)).toEqual(["body.new_password"]);
  });

  it("sets the password, ends every other session of the user and keeps this one", async () => {
    const u = await addUser("viewer", "viewer's first password");
    const other = await addUser("developer", "someone else entirely");
    const here = await signIn(u.email, u.password, "here");
    const elsewhere = await signIn(u.email, u.password, "elsewhere");
    const bystander = await signIn(other.email, other.password);

    // A viewer writes nothing, but its own password is its own.
    const { status, body } = await call(server, "POST", "/v1/auth/password", { headers: here, body: { current_password: u.password, new_password: "the viewer's new password" } });
    expect(status).toBe(200);
    expect(body).toEqual({ success: true, sessions_ended: 1 });

    expect(await me(here)).toBe(200);
    expect(await me(elsewhere)).toBe(401);
    expect(await me(bystander)).toBe(200);
    expect(await loginStatus(u.email, u.password)).toBe(401);
    expect(await loginStatus(u.email, "the viewer's new password")).toBe(200);

    const stored = await server.deps.db.select().from(sessions).where(eq(sessions.userId, u.id));
    // This one and the login just above.
    expect(stored).toHaveLength(2);
    // Among the user's logins, the one change of the account itself.
    const [entry] = await server.deps.db.select().from(auditLog).where(and(eq(auditLog.resourceId, u.id), eq(auditLog.resourceType, "user"), eq(auditLog.action, "update")));
    expect(entry).toMatchObject({ actorType: "user", actorId: u.id, action: "update" });
    expect(JSON.parse(entry!.changes!)).toEqual({ password: { before: "[masked]", after: "[masked]" } });
  });

  it("is for sessions: an API key gets 403 session_required", async () => {
    const key = await server.apiKey();
    const { status, body } = await call(server, "POST", "/v1/auth/password", { key, body: { current_password: "whatever it is", new_password: "a brand new password" } });
    expect(status).toBe(403);
    expect(body.error.code).toBe("session_required");
  });
});

describe("GET /v1/auth/sessions", () => {
  it("lists the caller's own sessions, newest first, with the current one marked and no stored id", async () => {
    const u = await addUser("viewer", "viewer password here");
    const first = await signIn(u.email, u.password, "first browser");
    const second = await signIn(u.email, u.password, "second browser");
    await signIn((await addUser("developer", "another person's pw")).email, "another person's pw", "not mine");

    const { status, body } = await call(server, "GET", "/v1/auth/sessions", { headers: first });
    expect(status).toBe(200);
    expect(body.sessions.map((s: { user_agent: string }) => s.user_agent)).toEqual(["second browser", "first browser"]);
    expect(body.sessions.map((s: { current: boolean }) => s.current)).toEqual([false, true]);
    const [latest] = body.sessions;
    expect(latest).toMatchObject({ method: "password", ip: "127.0.0.1", user_agent: "second browser" });
    expect(latest.id).toMatch(/^[0-9a-f]{32}$/);
    expect(Date.parse(latest.expires_at)).toBeGreaterThan(Date.parse(latest.created_at));
    expect(latest.last_used_at).not.toBeNull();

    const stored = await server.deps.db.select({ id: sessions.id }).from(sessions).where(eq(sessions.userId, u.id));
    for (const s of body.sessions) expect(stored.map((r) => r.id)).not.toContain(s.id);
    const fromSecond = await call(server, "GET", "/v1/auth/sessions", { headers: second });
    expect(fromSecond.body.sessions.map((s: { current: boolean }) => s.current)).toEqual([true, false]);
  });
});

describe("DELETE /v1/auth/sessions/{id}", () => {
  it("signs out another of the caller's sessions at once", async () => {
    const u = await addUser("viewer", "viewer password here");
    const here = await signIn(u.email, u.password, "here");
    const there = await signIn(u.email, u.password, "there");
    const list = (await call(server, "GET", "/v1/auth/sessions", { headers: here })).body.sessions;
    const target = list.find((s: { user_agent: string }) => s.user_agent === "there");

    const { status, body } = await call(server, "DELETE", `/v1/auth/sessions/${target.id}`, { headers: here });
    expect(status).toBe(200);
    expect(body).toEqual({ success: true });
    expect(await me(there)).toBe(401);
    expect(await me(here)).toBe(200);
    const left = (await call(server, "GET", "/v1/auth/sessions", { headers: here })).body.sessions;
    expect(left.map((s: { user_agent: string }) => s.user_agent)).toEqual(["here"]);
    const [entry] = await server.deps.db.select().from(auditLog).where(and(eq(auditLog.resourceId, target.id), eq(auditLog.resourceType, "session")));
    expect(entry).toMatchObject({ actorType: "user", actorId: u.id, action: "revoke" });
  });

  it("answers 404 for another user's session, an unknown id, and the stored id", async () => {
    const u = await addUser("admin", "admin password here");
    const other = await addUser("developer", "another person's pw");
    const mine = await signIn(u.email, u.password);
    const theirs = await signIn(other.email, other.password);
    const theirList = (await call(server, "GET", "/v1/auth/sessions", { headers: theirs })).body.sessions;
    const [stored] = await server.deps.db.select({ id: sessions.id }).from(sessions).where(eq(sessions.userId, other.id));

    for (const id of [theirList[0].id, "0".repeat(32), stored!.id]) {
      const { status, body } = await call(server, "DELETE", `/v1/auth/sessions/${id}`, { headers: mine });
      expect(status).toBe(404);
      expect(body.error.code).toBe("not_found");
    }
    expect(await me(theirs)).toBe(200);
  });

  it("ending the current session signs out and clears the cookie", async () => {
    const u = await addUser("developer", "developer password");
    const h = await signIn(u.email, u.password);
    const [current] = (await call(server, "GET", "/v1/auth/sessions", { headers: h })).body.sessions;
    const { status, headers } = await call(server, "DELETE", `/v1/auth/sessions/${current.id}`, { headers: h });
    expect(status).toBe(200);
    expect(headers.get("set-cookie")).toMatch(/hookrelay_session=;/);
    expect(await me(h)).toBe(401);
  });
});

describe("POST /v1/auth/password, guessed", () => {
  // A server of its own: the guesses below use up 127.0.0.1's failed logins.
  useServer({}, (s) => ({ server } = s));

  it("counts each wrong current password as a failed login: guessing ends in 429", async () => {
    const u = await addUser("developer", "password that is long");
    const h = await signIn(u.email, u.password);
    const tries = [];
    for (let i = 0; i < 10; i++) tries.push((await call(server, "POST", "/v1/auth/password", { headers: h, body: { current_password: `guess number ${i}`, new_password: "a brand new password" } })).status);
    // 127.0.0.1 may fail 10 times in 15 minutes (src/api/middleware/loginThrottle.ts): the eleventh try waits, the right password too.
    expect(tries).toEqual(Array(10).fill(400));
    const blocked = await call(server, "POST", "/v1/auth/password", { headers: h, body: { current_password: u.password, new_password: "a brand new password" } });
    expect(blocked.status).toBe(429);
    expect(blocked.body.error.code).toBe("rate_limited");
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(0);
  });
});

describe("POST /v1/auth/password, guessed from many addresses", () => {
  // Behind a trusted proxy each guess comes from its own address: the account's limit is what stops them.
  useServer({ env: { HOOKRELAY_TRUST_PROXY: "127.0.0.1" } }, (s) => ({ server } = s));

  it("counts the guesses against the account: its login then waits too", async () => {
    const u = await addUser("developer", "password that is long");
    const h = await signIn(u.email, u.password);
    for (let i = 0; i < 30; i++) {
      const r = await call(server, "POST", "/v1/auth/password", { headers: { ...h, "x-forwarded-for": `10.2.${i}.1` }, body: { current_password: `guess number ${i}`, new_password: "a brand new password" } });
      expect(r.status).toBe(400);
    }
    const login = await server.request("/v1/auth/login", { method: "POST", headers: { "content-type": "application/json", "x-forwarded-for": "10.3.0.1" }, body: JSON.stringify({ email: u.email, password: u.password }) });
    expect(login.status).toBe(429);
  });
});

describe("sessions.last_used_at", () => {
  const clock = manualClock(new Date());
  useServer({ clock }, (s) => ({ server } = s));

  it("follows use, written at most once a minute", async () => {
    const h = await signIn(ADMIN.email, ADMIN.password);
    const lastUsed = async () => (await call(server, "GET", "/v1/auth/sessions", { headers: h })).body.sessions.find((s: { current: boolean }) => s.current).last_used_at;
    const signedIn = await lastUsed();
    expect(signedIn).toBe(clock.now().toISOString());

    clock.advance(59_000);
    expect(await lastUsed()).toBe(signedIn);
    clock.advance(1_000);
    const minuteLater = clock.now().toISOString();
    expect(await lastUsed()).toBe(minuteLater);
    clock.advance(30_000);
    expect(await lastUsed()).toBe(minuteLater);
  });
});
