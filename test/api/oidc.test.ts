/**
 * Single sign-on over HTTP against a real OpenID Connect provider
 * (`oidc-provider` on 127.0.0.1, test/helpers/oidcProvider.ts): the login
 * redirect, the callback's checks, provisioning, the role map, and the
 * refusals, each answered with a small page (docs/teams.md, "Single sign-on").
 */
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditLog, memberships, sessions, users } from "../../src/db/schema";
import { issueLink } from "../../src/domain/accountLinks";
import { OIDC_CLIENT, reservePort, startOidcProvider, type OidcTestProvider } from "../helpers/oidcProvider";
import { ADMIN, call, startTestServer, type TestServer } from "../helpers/server";

const CALLBACK = "/v1/auth/oidc/callback";

function oidcEnv(port: number, extra: Record<string, string> = {}) {
  return {
    HOOKRELAY_OIDC_ISSUER: `http://127.0.0.1:${port}`,
    HOOKRELAY_OIDC_CLIENT_ID: OIDC_CLIENT.id,
    HOOKRELAY_OIDC_CLIENT_SECRET: OIDC_CLIENT.secret,
    HOOKRELAY_OIDC_SCOPES: "openid email profile groups",
    ...extra,
  };
}

const redirectUri = (server: TestServer) => server.deps.settings.baseUrl + CALLBACK;

/** GET /v1/auth/oidc/login: the provider URL it redirects to and the state cookie it sets. */
async function startLogin(server: TestServer) {
  const res = await server.request("/v1/auth/oidc/login", { redirect: "manual" });
  const setCookie = res.headers.getSetCookie().find((c) => c.startsWith("hookrelay_oidc="));
  return { res, location: res.headers.get("location"), setCookie, cookie: setCookie?.split(";")[0] ?? "" };
}

/** Brings the provider's redirect back to hookrelay, with the browser's cookie. */
async function callback(server: TestServer, back: URL, cookie: string) {
  const res = await server.request(back.pathname + back.search, { redirect: "manual", headers: { cookie } });
  const session = res.headers.getSetCookie().find((c) => c.startsWith("hookrelay_session="));
  return { res, status: res.status, location: res.headers.get("location"), session: session?.split(";")[0], html: res.status === 302 ? "" : await res.text() };
}

/** The whole sign-in as one browser would do it: hookrelay → provider (signed in as accountId) → hookrelay. */
async function signIn(server: TestServer, provider: OidcTestProvider, accountId: string) {
  const start = await startLogin(server);
  expect(start.res.status).toBe(302);
  return callback(server, await provider.signIn(start.location!, accountId), start.cookie);
}

async function me(server: TestServer, session: string) {
  return call(server, "GET", "/v1/auth/me", { headers: { cookie: session } });
}

async function userId(server: TestServer, email: string) {
  const [u] = await server.deps.db.select({ id: users.id }).from(users).where(eq(users.email, email));
  return u?.id;
}

async function auditOf(server: TestServer, actorOrResource: string, action: string) {
  return server.deps.db.select().from(auditLog).where(and(eq(auditLog.resourceId, actorOrResource), eq(auditLog.action, action)));
}

describe("single sign-on with provisioning and a role map", () => {
  let server: TestServer;
  let provider: OidcTestProvider;

  beforeAll(async () => {
    const port = await reservePort();
    server = await startTestServer(
      oidcEnv(port, {
        HOOKRELAY_OIDC_ALLOWED_DOMAINS: "example.com, test.local",
        HOOKRELAY_OIDC_AUTO_PROVISION_ROLE: "viewer",
        HOOKRELAY_OIDC_ROLE_CLAIM: "groups",
        HOOKRELAY_OIDC_ROLE_MAP: "hookrelay-admins:admin,platform:developer",
      }),
    );
    provider = await startOidcProvider({
      port,
      redirectUri: redirectUri(server),
      accounts: {
        alice: { email: "Alice@Example.com", email_verified: true, name: "Alice", groups: [] },
        carol: { email: "carol@other.org", email_verified: true },
        erin: { email: "erin@example.com", email_verified: false },
        ivy: { email: "ivy@example.com", email_verified: true, groups: [] },
        owner: { email: ADMIN.email, email_verified: true, groups: ["platform"] },
      },
    });
  });
  afterAll(async () => {
    await provider?.stop();
    await server?.close();
  });

  describe("GET /v1/auth/methods", () => {
    it("offers the password form and the provider's button, without a session", async () => {
      const res = await call(server, "GET", "/v1/auth/methods");
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ password: true, oidc: { name: "SSO", login_url: "/v1/auth/oidc/login" } });
    });
  });

  describe("GET /v1/auth/oidc/login", () => {
    it("redirects to the provider with the code flow, PKCE S256, a state and a nonce, kept in a sealed short-lived cookie", async () => {
      const { res, location, setCookie } = await startLogin(server);
      expect(res.status).toBe(302);
      const url = new URL(location!);
      expect(url.origin).toBe(provider.issuer);
      const q = url.searchParams;
      expect(q.get("response_type")).toBe("code");
      expect(q.get("client_id")).toBe(OIDC_CLIENT.id);
      expect(q.get("redirect_uri")).toBe(redirectUri(server));
      expect(q.get("scope")).toBe("openid email profile groups");
      expect(q.get("code_challenge_method")).toBe("S256");
      expect(q.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(q.get("state")!.length).toBeGreaterThanOrEqual(32);
      expect(q.get("nonce")!.length).toBeGreaterThanOrEqual(32);

      expect(setCookie).toMatch(/HttpOnly/i);
      expect(setCookie).toMatch(/SameSite=Lax/i);
      expect(setCookie).toMatch(/Max-Age=600/i);
      expect(setCookie).toMatch(/Path=\/v1\/auth\/oidc/i);
      // Sealed: neither the state, the nonce nor anything readable is in the cookie.
      const value = setCookie!.split(";")[0]!.slice("hookrelay_oidc=".length);
      expect(value).not.toContain(q.get("state")!);
      expect(Buffer.from(value, "base64url").toString("utf8")).not.toContain(q.get("nonce")!);

      const again = await startLogin(server);
      expect(new URL(again.location!).searchParams.get("state")).not.toBe(q.get("state"));
    });
  });

  describe("GET /v1/auth/oidc/callback", () => {
    it("provisions an unknown user of an allowed domain with the configured role, signs them in and redirects to the UI", async () => {
      const done = await signIn(server, provider, "alice");
      expect(done.status).toBe(302);
      expect(done.location).toBe("/");
      expect(done.session).toBeDefined();
      const who = await me(server, done.session!);
      expect(who.status).toBe(200);
      expect(who.body.user).toMatchObject({ email: "alice@example.com", name: "Alice" });
      expect(who.body.role).toBe("viewer");

      const id = (await userId(server, "alice@example.com"))!;
      const [member] = await server.deps.db.select().from(memberships).where(eq(memberships.userId, id));
      expect(member).toMatchObject({ role: "viewer", status: "active", orgId: who.body.org_id });
      const [user] = await server.deps.db.select().from(users).where(eq(users.id, id));
      expect(user!.passwordHash).toBe("");
      const opened = await server.deps.db.select().from(sessions).where(eq(sessions.userId, id));
      expect(opened.map((s) => s.method)).toEqual(["oidc"]);
      const logins = await auditOf(server, id, "login");
      expect(logins).toHaveLength(1);
      expect(logins[0]).toMatchObject({ actorType: "user", actorId: id, actorName: "alice@example.com", resourceType: "user" });
      // The state cookie is spent.
      const again = await server.request(done.location!, { redirect: "manual" });
      expect(again.status).toBe(200);
    });

    it("applies the role map at each sign-in: the strongest mapped role wins, and none mapped leaves the role as it is", async () => {
      const id = (await userId(server, "alice@example.com"))!;
      const roleAfterSignIn = async (groups: string[]) => {
        provider.accounts.get("alice")!.groups = groups;
        const done = await signIn(server, provider, "alice");
        expect(done.status).toBe(302);
        return (await me(server, done.session!)).body.role;
      };
      expect(await roleAfterSignIn(["platform"])).toBe("developer");
      expect(await roleAfterSignIn(["platform", "hookrelay-admins", "staff"])).toBe("admin");
      expect(await roleAfterSignIn(["staff"])).toBe("admin");
      expect(await roleAfterSignIn(["platform"])).toBe("developer");
      const changes = await auditOf(server, id, "role_change");
      expect(changes.map((c) => JSON.parse(c.changes!).role)).toEqual([
        { before: "viewer", after: "developer" },
        { before: "developer", after: "admin" },
        { before: "admin", after: "developer" },
      ]);
    });

    it("keeps the organization's last owner an owner whatever the map says", async () => {
      const done = await signIn(server, provider, "owner");
      expect(done.status).toBe(302);
      expect((await me(server, done.session!)).body.role).toBe("owner");
      expect(await auditOf(server, (await userId(server, ADMIN.email))!, "role_change")).toEqual([]);
    });

    it("accepts an invite when the invited member signs in through the provider", async () => {
      const org = (await me(server, (await signIn(server, provider, "owner")).session!)).body;
      const now = new Date().toISOString();
      await server.deps.db.insert(users).values({ id: "ivy-user-id", email: "ivy@example.com", passwordHash: "", orgId: org.org_id, envId: org.env_id, createdAt: now });
      await server.deps.db.insert(memberships).values({ id: "ivy-membership", orgId: org.org_id, userId: "ivy-user-id", role: "developer", status: "invited", envId: null, createdAt: now, updatedAt: now });
      const done = await signIn(server, provider, "ivy");
      expect(done.status).toBe(302);
      expect((await me(server, done.session!)).body.role).toBe("developer");
      const [member] = await server.deps.db.select().from(memberships).where(eq(memberships.id, "ivy-membership"));
      expect(member!.status).toBe("active");
    });

    it("refuses a verified email of a domain that is not allowed, with a page saying so", async () => {
      const done = await signIn(server, provider, "carol");
      expect(done.status).toBe(403);
      expect(done.res.headers.get("content-type")).toMatch(/text\/html/);
      expect(done.html).toContain("other.org");
      expect(done.html).toContain('href="/"');
      expect(done.session).toBeUndefined();
      expect(await userId(server, "carol@other.org")).toBeUndefined();
    });

    it("refuses an email the provider has not verified, and provisions nobody", async () => {
      const done = await signIn(server, provider, "erin");
      expect(done.status).toBe(403);
      expect(done.html).toContain("not verified");
      expect(done.session).toBeUndefined();
      expect(await userId(server, "erin@example.com")).toBeUndefined();
    });

    it("refuses a callback whose state is not the one this browser's cookie holds", async () => {
      const start = await startLogin(server);
      const back = await provider.signIn(start.location!, "alice");
      back.searchParams.set("state", "not-the-state-we-sent");
      const done = await callback(server, back, start.cookie);
      expect(done.status).toBe(400);
      expect(done.html).toContain("does not belong to the sign-in this browser started");
      expect(done.session).toBeUndefined();
    });

    it("refuses a callback without the state cookie (login CSRF: a code meant for another browser)", async () => {
      const start = await startLogin(server);
      const back = await provider.signIn(start.location!, "alice");
      const done = await callback(server, back, "");
      expect(done.status).toBe(400);
      expect(done.html).toContain("not started in this browser");
      expect(done.session).toBeUndefined();
    });

    it("refuses a state cookie that was altered", async () => {
      const start = await startLogin(server);
      const back = await provider.signIn(start.location!, "alice");
      const value = start.cookie.slice("hookrelay_oidc=".length);
      const flipped = value.slice(0, 20) + (value[20] === "A" ? "B" : "A") + value.slice(21);
      const done = await callback(server, back, `hookrelay_oidc=${flipped}`);
      expect(done.status).toBe(400);
      expect(done.session).toBeUndefined();
    });

    it("refuses an ID token issued for another nonce", async () => {
      const start = await startLogin(server);
      // The same client, state and PKCE challenge, but the provider is asked to put another nonce in the ID token.
      const tampered = new URL(start.location!);
      tampered.searchParams.set("nonce", "a-nonce-hookrelay-never-made-0123456789");
      const back = await provider.signIn(tampered.href, "alice");
      expect(back.searchParams.get("code")).toBeTruthy();
      const done = await callback(server, back, start.cookie);
      expect(done.status).toBe(400);
      expect(done.html).toContain("did not pass hookrelay");
      expect(done.session).toBeUndefined();
    });

    it("shows the provider's error (the user cancelled at the provider)", async () => {
      const start = await startLogin(server);
      const state = new URL(start.location!).searchParams.get("state")!;
      const back = new URL(redirectUri(server));
      back.search = new URLSearchParams({ error: "access_denied", error_description: "End-User aborted interaction", state }).toString();
      const done = await callback(server, back, start.cookie);
      expect(done.status).toBe(400);
      expect(done.html).toContain("End-User aborted interaction");
    });

    it("escapes what the provider's error says", async () => {
      const start = await startLogin(server);
      const state = new URL(start.location!).searchParams.get("state")!;
      const back = new URL(redirectUri(server));
      back.search = new URLSearchParams({ error: "x", error_description: "<script>alert(1)</script>", state }).toString();
      const done = await callback(server, back, start.cookie);
      expect(done.html).not.toContain("<script>");
      expect(done.html).toContain("&lt;script&gt;");
    });
  });
});

describe("single sign-on as the only way in, without provisioning", () => {
  let server: TestServer;
  let provider: OidcTestProvider | undefined;
  let port: number;

  beforeAll(async () => {
    port = await reservePort();
    // Nothing listens on the issuer's port yet: the provider is down.
    server = await startTestServer(oidcEnv(port, { HOOKRELAY_OIDC_NAME: "Keycloak", HOOKRELAY_PASSWORD_LOGIN: "off" }));
  });
  afterAll(async () => {
    await provider?.stop();
    await server?.close();
  });

  it("answers a clear 503 page while the provider is down, and tries discovery again once it is up", async () => {
    const down = await server.request("/v1/auth/oidc/login", { redirect: "manual" });
    expect(down.status).toBe(503);
    expect(down.headers.get("content-type")).toMatch(/text\/html/);
    const html = await down.text();
    expect(html).toContain("Single sign-on is unavailable");
    expect(html).toContain('href="/"');
    expect(html).not.toMatch(/at .*\.ts:\d+/);

    provider = await startOidcProvider({
      port,
      redirectUri: redirectUri(server),
      accounts: {
        admin: { email: ADMIN.email.toUpperCase(), email_verified: true },
        unverified: { email: ADMIN.email, email_verified: false },
        dave: { email: "dave@example.com", email_verified: true },
      },
    });
    const up = await startLogin(server);
    expect(up.res.status).toBe(302);
    expect(up.location!.startsWith(provider.issuer)).toBe(true);
  });

  it("says so at GET /v1/auth/methods", async () => {
    const res = await call(server, "GET", "/v1/auth/methods");
    expect(res.body).toEqual({ password: false, oidc: { name: "Keycloak", login_url: "/v1/auth/oidc/login" } });
  });

  it("refuses POST /v1/auth/login with 403 naming the provider", async () => {
    const res = await call(server, "POST", "/v1/auth/login", { body: ADMIN });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("forbidden");
    expect(res.body.error.message).toContain("Keycloak");
  });

  it("still lets a one-time link set a password and sign in (the local CLI's recovery)", async () => {
    const id = (await userId(server, ADMIN.email))!;
    const link = await issueLink(server.deps, { kind: "password_reset", userId: id, orgId: null, createdBy: null });
    const res = await call(server, "POST", "/v1/auth/invites/accept", { body: { token: link.token, password: "a brand new password" } });
    expect(res.status).toBe(200);
    expect(res.headers.getSetCookie().some((c) => c.startsWith("hookrelay_session="))).toBe(true);
  });

  it("signs in an existing user whose email matches whatever its case", async () => {
    const done = await signIn(server, provider!, "admin");
    expect(done.status).toBe(302);
    const who = await me(server, done.session!);
    expect(who.body.user.email).toBe(ADMIN.email);
    expect(who.body.role).toBe("owner");
  });

  it("refuses an unknown user when provisioning is off", async () => {
    const done = await signIn(server, provider!, "dave");
    expect(done.status).toBe(403);
    expect(done.html).toContain("no hookrelay account for dave@example.com");
    expect(await userId(server, "dave@example.com")).toBeUndefined();
  });

  it("refuses a known user's unverified email and records the failure against them", async () => {
    const done = await signIn(server, provider!, "unverified");
    expect(done.status).toBe(403);
    const id = (await userId(server, ADMIN.email))!;
    const failed = await auditOf(server, id, "login_failed");
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ actorType: "user", actorId: id });
    expect(JSON.parse(failed[0]!.changes!).reason.after).toBe("email not verified");
  });

  it("refuses a member whose membership is disabled", async () => {
    const id = (await userId(server, ADMIN.email))!;
    await server.deps.db.update(memberships).set({ status: "disabled" }).where(eq(memberships.userId, id));
    try {
      const done = await signIn(server, provider!, "admin");
      expect(done.status).toBe(403);
      expect(done.html).toContain("not active");
      expect(done.session).toBeUndefined();
    } finally {
      await server.deps.db.update(memberships).set({ status: "active" }).where(eq(memberships.userId, id));
    }
  });

  it("answers 503 when the provider goes down between the redirect and the code exchange", async () => {
    const start = await startLogin(server);
    const back = await provider!.signIn(start.location!, "admin");
    await provider!.stop();
    provider = undefined;
    const done = await callback(server, back, start.cookie);
    expect(done.status).toBe(503);
    expect(done.html).toContain("Single sign-on is unavailable");
  });
});

describe("without single sign-on", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server?.close());

  it("offers the password form only, and the SSO routes answer a page saying it is not configured", async () => {
    expect((await call(server, "GET", "/v1/auth/methods")).body).toEqual({ password: true, oidc: null });
    const res = await server.request("/v1/auth/oidc/login", { redirect: "manual" });
    expect(res.status).toBe(404);
    expect(await res.text()).toContain("not configured");
  });
});
