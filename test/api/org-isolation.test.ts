/**
 * Organizations are walls (docs/teams.md, "Organizations"): a session or a
 * key of one never sees another's sources, destinations, events or keys; a
 * session moves between its own organizations with X-Hookrelay-Org, which
 * sticks like the environment header (docs/decisions.md D19); a key stays
 * in its own.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { memberships, users } from "../../src/db/schema";
import { addPerson, insertOrganization, keyFrom, PASSWORD, signIn } from "../helpers/people";
import { createSource, insertEvent, scopeOf, type TestScope } from "../helpers/rows";
import { ADMIN, call, type TestServer } from "../helpers/server";
import { useServer } from "../helpers/fixture";

let server: TestServer, keyA: string;
let a: TestScope;
let b: { id: string; slug: string; envId: string };
let admin: Record<string, string>;
/** Bob: a member of B only, with a key there. */
let bob: Record<string, string>, keyB: string;
const made = { a: {} as Record<string, string>, b: {} as Record<string, string> };

/** What one organization's environment holds, made through its key. */
async function fill(key: string, scope: TestScope, label: string) {
  const src = await createSource(server, key, `${label} source`);
  const dst = await call(server, "POST", "/v1/destinations", { key, body: { name: `${label} destination`, url: "https://example.com/hook" } });
  expect(dst.status).toBe(201);
  const event = await insertEvent(server, scope, src.id, { body: `{"from":"${label}"}` });
  const keys = await call(server, "GET", "/v1/auth/api-keys", { headers: label === "A" ? admin : bob });
  return { source: src.id, destination: dst.body.destination.id, event, key: keys.body.api_keys[0].id };
}

useServer({}, (s) => ({ server, key: keyA } = s));
beforeAll(async () => {
  a = await scopeOf(server, keyA);
  admin = await server.session();
  const res = await call(server, "POST", "/v1/organizations", { headers: admin, body: { name: "Org B" } });
  expect(res.status).toBe(201);
  b = { id: res.body.organization.id, slug: res.body.organization.slug, envId: "" };
  await addPerson(server, "bob@b.test", b.id, "owner");
  bob = await signIn(server, "bob@b.test");
  keyB = await keyFrom(server, bob);
  b.envId = (await scopeOf(server, keyB)).envId;
  made.a = await fill(keyA, a, "A");
  made.b = await fill(keyB, { orgId: b.id, envId: b.envId }, "B");
});

describe("a key or a session of one organization never sees another's resources", () => {
  const lists = [
    ["/v1/sources", "sources"],
    ["/v1/destinations", "destinations"],
    ["/v1/events", "events"],
  ] as const;

  it("lists show only their own organization's", async () => {
    for (const [who, auth, mine, theirs] of [
      ["key A", { key: keyA }, made.a, made.b],
      ["key B", { key: keyB }, made.b, made.a],
      ["bob's session", { headers: bob }, made.b, made.a],
    ] as const) {
      for (const [path, listKey] of lists) {
        const res = await call(server, "GET", path, auth);
        expect(res.status, `${who} ${path}`).toBe(200);
        const found = res.body[listKey].map((r: { id: string }) => r.id);
        const kind = listKey.slice(0, -1) as "source" | "destination" | "event";
        expect(found, `${who} ${path}`).toContain(mine[kind]);
        expect(found, `${who} ${path}`).not.toContain(theirs[kind]);
      }
    }
    const keysOfBob = (await call(server, "GET", "/v1/auth/api-keys", { headers: bob })).body.api_keys.map((k: { id: string }) => k.id);
    expect(keysOfBob).toEqual([made.b.key]);
    expect((await call(server, "GET", "/v1/auth/api-keys", { headers: admin })).body.api_keys.map((k: { id: string }) => k.id)).not.toContain(made.b.key);
  });

  it("another organization's resource by id is 404, and its key cannot be revoked", async () => {
    for (const [auth, theirs] of [
      [{ key: keyA }, made.b],
      [{ headers: bob }, made.a],
    ] as const) {
      expect((await call(server, "GET", `/v1/sources/${theirs.source}`, auth)).status).toBe(404);
      expect((await call(server, "GET", `/v1/destinations/${theirs.destination}`, auth)).status).toBe(404);
      expect((await call(server, "GET", `/v1/events/${theirs.event}`, auth)).status).toBe(404);
      expect((await call(server, "DELETE", `/v1/sources/${theirs.source}`, auth)).status).toBe(404);
    }
    expect((await call(server, "DELETE", `/v1/auth/api-keys/${made.a.key}`, { headers: bob })).status).toBe(404);
    expect((await call(server, "GET", "/v1/sources", { key: keyA })).status).toBe(200);
  });
});

describe("members and the audit trail stay in their organization", () => {
  it("GET /v1/members lists only the organization's own members; a member of another only is 404 to change or remove", async () => {
    const ofA = (await call(server, "GET", "/v1/members", { key: keyA })).body.members.map((m: { email: string }) => m.email);
    const ofB = (await call(server, "GET", "/v1/members", { headers: bob })).body.members.map((m: { email: string }) => m.email);
    expect(ofA).toContain(ADMIN.email);
    expect(ofA).not.toContain("bob@b.test");
    // B's members: bob, and the instance owner who created it (its first owner).
    expect(ofB.sort()).toEqual([ADMIN.email, "bob@b.test"].sort());
    const [bobRow] = await server.deps.db.select({ id: users.id }).from(users).where(eq(users.email, "bob@b.test"));
    expect((await call(server, "PATCH", `/v1/members/${bobRow!.id}`, { key: keyA, body: { role: "viewer" } })).status).toBe(404);
    expect((await call(server, "DELETE", `/v1/members/${bobRow!.id}`, { key: keyA })).status).toBe(404);
    const [still] = await server.deps.db.select({ role: memberships.role }).from(memberships).where(and(eq(memberships.userId, bobRow!.id), eq(memberships.orgId, b.id)));
    expect(still?.role).toBe("owner");
  });

  it("GET /v1/audit-log shows only the organization's own entries", async () => {
    const ofB = (await call(server, "GET", "/v1/audit-log?limit=100", { headers: bob })).body.entries as { org_id: string; resource_id: string | null }[];
    expect(ofB.length).toBeGreaterThan(0);
    expect(ofB.every((e) => e.org_id === b.id)).toBe(true);
    expect(ofB.map((e) => e.resource_id)).not.toContain(made.a.source);
    const ofA = (await call(server, "GET", "/v1/audit-log?limit=100", { key: keyA })).body.entries as { org_id: string; resource_id: string | null }[];
    expect(ofA.map((e) => e.resource_id)).toContain(made.a.source);
    expect(ofA.map((e) => e.resource_id)).not.toContain(made.b.source);
  });
});

describe("X-Hookrelay-Org: a session switches between its organizations", () => {
  it("acts in the organization named (by slug or id), remembers it, and GET /v1/auth/me says so", async () => {
    const inB = await call(server, "GET", "/v1/sources", { headers: { ...admin, "x-hookrelay-org": b.slug } });
    expect(inB.status).toBe(200);
    expect(inB.body.sources.map((s: { id: string }) => s.id)).toEqual([made.b.source]);
    // No header: still in B, where the header last took the session.
    const me = await call(server, "GET", "/v1/auth/me", { headers: admin });
    expect(me.body).toMatchObject({ org_id: b.id, organization: { id: b.id, name: "Org B", slug: b.slug }, role: "owner", env_id: b.envId, instance_owner: true });
    const back = await call(server, "GET", "/v1/auth/me", { headers: { ...admin, "x-hookrelay-org": a.orgId } });
    expect(back.body).toMatchObject({ org_id: a.orgId, env_id: a.envId, organization: { slug: "default" } });
  });

  it("returns to the environment last used in an organization; the environment header is resolved inside the organization named", async () => {
    const staging = await call(server, "POST", "/v1/environments", { headers: admin, body: { name: "A staging" } });
    expect(staging.status).toBe(201);
    await call(server, "GET", "/v1/auth/me", { headers: { ...admin, "x-hookrelay-env": "a-staging" } });
    const [userRow] = await server.deps.db.select().from(users).where(eq(users.email, ADMIN.email));
    const [m] = await server.deps.db.select().from(memberships).where(and(eq(memberships.userId, userRow!.id), eq(memberships.orgId, a.orgId)));
    expect(m!.envId).toBe(staging.body.environment.id);
    // In B, "production" is B's production.
    const inB = await call(server, "GET", "/v1/auth/me", { headers: { ...admin, "x-hookrelay-org": b.slug, "x-hookrelay-env": "production" } });
    expect(inB.body).toMatchObject({ org_id: b.id, env_id: b.envId });
    // A's staging is no environment of B.
    expect((await call(server, "GET", "/v1/auth/me", { headers: { ...admin, "x-hookrelay-org": b.slug, "x-hookrelay-env": "a-staging" } })).status).toBe(404);
    const backInA = await call(server, "GET", "/v1/auth/me", { headers: { ...admin, "x-hookrelay-org": "default" } });
    expect(backInA.body.environment).toEqual({ id: staging.body.environment.id, name: "A staging", slug: "a-staging" });
    await call(server, "GET", "/v1/auth/me", { headers: { ...admin, "x-hookrelay-env": "production" } });
  });

  it("an organization the user is no active member of is 404 'Organization not found', whether it exists or not, and nothing moves", async () => {
    for (const ref of [a.orgId, "default", "no-such-org"]) {
      const res = await call(server, "GET", "/v1/sources", { headers: { ...bob, "x-hookrelay-org": ref } });
      expect(res.status).toBe(404);
      expect(res.body.error).toMatchObject({ code: "not_found", message: "Organization not found" });
    }
    const c = await insertOrganization(server, "Disabled there");
    await addPerson(server, "bob@b.test", c.orgId, "admin", "disabled");
    expect((await call(server, "GET", "/v1/sources", { headers: { ...bob, "x-hookrelay-org": c.slug } })).status).toBe(404);
    expect((await call(server, "GET", "/v1/auth/me", { headers: bob })).body.org_id).toBe(b.id);
  });

  it("acts with the role the membership there gives", async () => {
    const c = await insertOrganization(server, "Read only");
    await addPerson(server, "bob@b.test", c.orgId, "viewer");
    const res = await call(server, "POST", "/v1/sources", { headers: { ...bob, "x-hookrelay-org": c.slug }, body: { name: "nope" } });
    expect(res.status).toBe(403);
    expect((await call(server, "GET", "/v1/auth/me", { headers: bob })).body).toMatchObject({ org_id: c.orgId, role: "viewer" });
    expect((await call(server, "GET", "/v1/auth/me", { headers: { ...bob, "x-hookrelay-org": b.slug } })).body.role).toBe("owner");
  });
});

describe("X-Hookrelay-Org with an API key", () => {
  it("naming another organization, or one that does not exist, is 403; naming its own, by slug or id, works", async () => {
    for (const ref of [b.slug, b.id, "no-such-org"]) {
      const res = await call(server, "GET", "/v1/sources", { key: keyA, headers: { "x-hookrelay-org": ref } });
      expect(res.status).toBe(403);
      expect(res.body.error.message).toContain("another organization");
    }
    expect((await call(server, "GET", "/v1/sources", { key: keyA, headers: { "x-hookrelay-org": "default" } })).status).toBe(200);
    expect((await call(server, "GET", "/v1/sources", { key: keyB, headers: { "x-hookrelay-org": b.id } })).status).toBe(200);
  });
});

describe("signing in", () => {
  it("a user whose current organization's membership is no longer active acts in their first active one", async () => {
    const first = await insertOrganization(server, "First");
    const second = await insertOrganization(server, "Second");
    await addPerson(server, "carol@c.test", second.orgId, "developer");
    await addPerson(server, "carol@c.test", first.orgId, "viewer", "disabled");
    const [carol] = await server.deps.db.select().from(users).where(eq(users.email, "carol@c.test"));
    await server.deps.db.update(users).set({ orgId: first.orgId, envId: first.envId }).where(eq(users.id, carol!.id));
    const session = await signIn(server, "carol@c.test");
    const me = await call(server, "GET", "/v1/auth/me", { headers: session });
    expect(me.body).toMatchObject({ org_id: second.orgId, env_id: second.envId, role: "developer" });
  });

  it("a user with no active membership is refused as a wrong password is: 401, the same message", async () => {
    const o = await insertOrganization(server, "Gone for dave");
    await addPerson(server, "dave@d.test", o.orgId, "developer", "disabled");
    const res = await call(server, "POST", "/v1/auth/login", { body: { email: "dave@d.test", password: PASSWORD } });
    const wrong = await call(server, "POST", "/v1/auth/login", { body: { email: "dave@d.test", password: "not the password" } });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(wrong.body);
  });
});
