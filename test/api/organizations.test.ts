/**
 * Organizations (docs/teams.md, "Organizations"): the instance's owner
 * creates them; their admins rename them; their owners delete them; a
 * caller sees only those they are an active member of (the instance's
 * owner: every one; an API key: its own).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { apiKeys, auditLog, environments, memberships, organizations, sources, users } from "../../src/db/schema";
import { addPerson, insertOrganization, keyFrom, PASSWORD, signIn } from "../helpers/people";
import { scopeOf, type TestScope } from "../helpers/rows";
import { ADMIN, call, type TestServer } from "../helpers/server";
import { useServer } from "../helpers/fixture";
import { ingest } from "../helpers/ingest";

let server: TestServer, key: string;
let home: TestScope;
let admin: Record<string, string>;
/** Acme: an organization the instance's owner is no member of, with one person of each role. */
let acme: { orgId: string; envId: string; slug: string };
const as: Record<"owner" | "admin" | "developer" | "viewer", Record<string, string>> = {} as never;

useServer({}, (s) => ({ server, key } = s));
beforeAll(async () => {
  home = await scopeOf(server, key);
  admin = await server.session();
  acme = await insertOrganization(server, "Acme");
  for (const role of ["owner", "admin", "developer", "viewer"] as const) {
    await addPerson(server, `${role}@acme.test`, acme.orgId, role);
    as[role] = await signIn(server, `${role}@acme.test`);
  }
});

const ids = (res: { body: { organizations: { id: string }[] } }) => res.body.organizations.map((o) => o.id);

/** An organization made through the API by the instance's owner. */
async function createOrg(name: string, slug?: string) {
  const res = await call(server, "POST", "/v1/organizations", { headers: admin, body: { name, ...(slug ? { slug } : {}) } });
  if (res.status !== 201) throw new Error(`create organization: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.organization as { id: string; slug: string; name: string };
}

describe("GET /v1/organizations", () => {
  it("the instance's owner sees every organization, with role null where they are no member", async () => {
    const res = await call(server, "GET", "/v1/organizations", { headers: admin });
    expect(res.status).toBe(200);
    expect(res.body.organizations[0]).toEqual({ id: home.orgId, name: "default", slug: "default", created_at: expect.any(String), updated_at: expect.any(String), role: "owner" });
    expect(res.body.organizations.find((o: { id: string }) => o.id === acme.orgId)).toMatchObject({ name: "Acme", slug: acme.slug, role: null });
  });

  it("a member sees only the organizations they are an active member of, with their role there", async () => {
    const beta = await insertOrganization(server, "Beta");
    await addPerson(server, "viewer@acme.test", beta.orgId, "developer", "disabled");
    const gamma = await insertOrganization(server, "Gamma");
    await addPerson(server, "developer@acme.test", gamma.orgId, "admin");
    const viewer = await call(server, "GET", "/v1/organizations", { headers: as.viewer });
    expect(viewer.status).toBe(200);
    expect(viewer.body.organizations).toEqual([expect.objectContaining({ id: acme.orgId, role: "viewer" })]);
    const dev = await call(server, "GET", "/v1/organizations", { headers: as.developer });
    expect(dev.body.organizations.map((o: { id: string; role: string }) => [o.id, o.role])).toEqual([
      [acme.orgId, "developer"],
      [gamma.orgId, "admin"],
    ]);
  });

  it("an API key sees only its own organization, even the instance owner's", async () => {
    const res = await call(server, "GET", "/v1/organizations", { key });
    expect(res.status).toBe(200);
    expect(ids(res)).toEqual([home.orgId]);
    const acmeKey = await keyFrom(server, as.developer);
    const theirs = await call(server, "GET", "/v1/organizations", { key: acmeKey });
    expect(theirs.body.organizations).toEqual([expect.objectContaining({ id: acme.orgId, role: "developer" })]);
  });

  it("needs a credential: 401", async () => {
    expect((await call(server, "GET", "/v1/organizations")).status).toBe(401);
  });
});

describe("POST /v1/organizations", () => {
  it("creates one with a slug from the name, its production environment, and the creator as its active owner", async () => {
    const res = await call(server, "POST", "/v1/organizations", { headers: admin, body: { name: "Platform Team" } });
    expect(res.status).toBe(201);
    const o = res.body.organization;
    expect(o).toEqual({ id: expect.stringMatching(/^[0-9a-f]{32}$/), name: "Platform Team", slug: "platform-team", created_at: o.created_at, updated_at: o.created_at, role: "owner" });
    const { db } = server.deps;
    expect((await db.select().from(organizations).where(eq(organizations.id, o.id)))[0]).toMatchObject({ name: "Platform Team", slug: "platform-team" });
    expect((await db.select().from(environments).where(eq(environments.orgId, o.id))).map((e) => e.slug)).toEqual(["production"]);
    const [owner] = await db.select({ id: users.id }).from(users).where(eq(users.email, ADMIN.email));
    const [m] = await db.select().from(memberships).where(and(eq(memberships.orgId, o.id), eq(memberships.userId, owner!.id)));
    expect(m).toMatchObject({ role: "owner", status: "active" });
    const [entry] = await db.select().from(auditLog).where(and(eq(auditLog.orgId, o.id), eq(auditLog.resourceType, "organization")));
    expect(entry).toMatchObject({ action: "create", resourceId: o.id, actorType: "user", actorId: owner!.id });
  });

  it("numbers a slug from a name another organization's slug has; an explicit taken slug is 409", async () => {
    const first = await createOrg("Numbered");
    const second = await createOrg("Numbered");
    expect([first.slug, second.slug]).toEqual(["numbered", "numbered-2"]);
    const res = await call(server, "POST", "/v1/organizations", { headers: admin, body: { name: "Another", slug: "numbered" } });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe("conflict");
    expect(res.body.error.message).toContain('slug "numbered"');
  });

  it("refuses a missing name or a bad slug: 400", async () => {
    expect((await call(server, "POST", "/v1/organizations", { headers: admin, body: {} })).status).toBe(400);
    const res = await call(server, "POST", "/v1/organizations", { headers: admin, body: { name: "x", slug: "Not a slug!" } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("validation_error");
  });

  it("is the instance owner's alone: an organization's owner, admin or developer, and their keys, get 403; the owner's key may", async () => {
    for (const headers of [as.owner, as.admin, as.developer]) {
      const res = await call(server, "POST", "/v1/organizations", { headers, body: { name: "Not theirs" } });
      expect(res.status).toBe(403);
      expect(res.body.error.message).toContain("instance's owner");
    }
    expect((await call(server, "POST", "/v1/organizations", { key: await keyFrom(server, as.owner), body: { name: "Not theirs" } })).status).toBe(403);
    expect((await server.deps.db.select().from(organizations).where(eq(organizations.name, "Not theirs"))).length).toBe(0);
    const byKey = await call(server, "POST", "/v1/organizations", { key, body: { name: "Made by key" } });
    expect(byKey.status).toBe(201);
  });
});

describe("PATCH /v1/organizations/{id}", () => {
  it("its admin renames it and changes its slug: stored, updated_at moved", async () => {
    const o = await createOrg("Rename me");
    await addPerson(server, "admin@acme.test", o.id, "admin");
    const res = await call(server, "PATCH", `/v1/organizations/${o.id}`, { headers: as.admin, body: { name: "Renamed", slug: "renamed-org" } });
    expect(res.status).toBe(200);
    expect(res.body.organization).toMatchObject({ id: o.id, name: "Renamed", slug: "renamed-org", role: "admin" });
    const [row] = await server.deps.db.select().from(organizations).where(eq(organizations.id, o.id));
    expect(row).toMatchObject({ name: "Renamed", slug: "renamed-org" });
    expect(row!.updatedAt >= row!.createdAt).toBe(true);
  });

  it("its owner may, and the instance's owner who is no member (role null)", async () => {
    expect((await call(server, "PATCH", `/v1/organizations/${acme.orgId}`, { headers: as.owner, body: { name: "Acme Inc" } })).body.organization.name).toBe("Acme Inc");
    const res = await call(server, "PATCH", `/v1/organizations/${acme.orgId}`, { headers: admin, body: { name: "Acme" } });
    expect(res.status).toBe(200);
    expect(res.body.organization).toMatchObject({ name: "Acme", role: null });
  });

  it("its developer and viewer get 403; nothing changes", async () => {
    for (const headers of [as.developer, as.viewer]) {
      const res = await call(server, "PATCH", `/v1/organizations/${acme.orgId}`, { headers, body: { name: "Hijacked" } });
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe("forbidden");
    }
    expect((await server.deps.db.select().from(organizations).where(eq(organizations.id, acme.orgId)))[0]!.name).toBe("Acme");
  });

  it("is 404 to a non-member, for an unknown id, and to a key for any organization but its own", async () => {
    const beta = await insertOrganization(server, "Outsiders");
    expect((await call(server, "PATCH", `/v1/organizations/${beta.orgId}`, { headers: as.owner, body: { name: "x" } })).status).toBe(404);
    expect((await call(server, "PATCH", "/v1/organizations/0123456789abcdef0123456789abcdef", { headers: admin, body: { name: "x" } })).status).toBe(404);
    const res = await call(server, "PATCH", `/v1/organizations/${acme.orgId}`, { key, body: { name: "x" } });
    expect(res.status).toBe(404);
    expect(res.body.error.message).toBe("Organization not found");
    const ownKey = await call(server, "PATCH", `/v1/organizations/${acme.orgId}`, { key: await keyFrom(server, as.admin), body: { name: "Acme" } });
    expect(ownKey.status).toBe(200);
  });

  it("refuses a slug another organization has: 409", async () => {
    const res = await call(server, "PATCH", `/v1/organizations/${acme.orgId}`, { headers: as.owner, body: { slug: "default" } });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe("conflict");
  });
});

describe("DELETE /v1/organizations/{id}", () => {
  it("its owner deletes an empty one while acting elsewhere: 204, gone with its environments and memberships", async () => {
    const o = await createOrg("Short lived");
    const ownerId = await addPerson(server, "owner@acme.test", o.id, "owner");
    const res = await call(server, "DELETE", `/v1/organizations/${o.id}`, { headers: as.owner });
    expect(res.status).toBe(204);
    const { db } = server.deps;
    expect(await db.select().from(organizations).where(eq(organizations.id, o.id))).toEqual([]);
    expect(await db.select().from(environments).where(eq(environments.orgId, o.id))).toEqual([]);
    expect(await db.select().from(memberships).where(eq(memberships.orgId, o.id))).toEqual([]);
    // The record of the deletion stays with the caller's organization.
    const [entry] = await db.select().from(auditLog).where(and(eq(auditLog.resourceId, o.id), eq(auditLog.action, "delete")));
    expect(entry).toMatchObject({ orgId: acme.orgId, resourceType: "organization", actorId: ownerId });
  });

  it("its admin gets 403, a non-member 404, and the instance's owner who is no member may", async () => {
    const o = await createOrg("Guarded");
    await addPerson(server, "admin@acme.test", o.id, "admin");
    expect((await call(server, "DELETE", `/v1/organizations/${o.id}`, { headers: as.admin })).status).toBe(403);
    expect((await call(server, "DELETE", `/v1/organizations/${o.id}`, { headers: as.developer })).status).toBe(404);
    // The instance's owner leaves it (membership gone), then deletes it as the instance's owner.
    await server.deps.db.delete(memberships).where(and(eq(memberships.orgId, o.id), eq(memberships.role, "owner")));
    expect((await call(server, "DELETE", `/v1/organizations/${o.id}`, { headers: admin })).status).toBe(204);
  });

  it("refuses the organization the caller acts in: 409, and a key always acts in its own", async () => {
    const res = await call(server, "DELETE", `/v1/organizations/${home.orgId}?force=true`, { headers: admin });
    expect(res.status).toBe(409);
    expect(res.body.error.message).toContain("acting in");
    expect((await call(server, "DELETE", `/v1/organizations/${home.orgId}?force=true`, { key })).status).toBe(409);
  });

  it("refuses one whose environments hold resources, naming them: 409; force=true deletes them with it and its keys stop working", async () => {
    const o = await createOrg("Holding");
    await addPerson(server, "developer@acme.test", o.id, "developer");
    const devKey = await keyFrom(server, { ...as.developer, "x-hookrelay-org": o.slug });
    // The header moved the developer's session into Holding: deleting it moves them out.
    const src = await call(server, "POST", "/v1/sources", { key: devKey, body: { name: "held" } });
    expect(src.status).toBe(201);
    const dst = await call(server, "POST", "/v1/destinations", { key: devKey, body: { name: "held", url: "https://example.com/hook" } });
    expect(dst.status).toBe(201);
    // The ingest URL works, so this node has the source cached.
    expect((await ingest(server, src.body.source.id, { body: "{}", headers: { "content-type": "application/json" } })).status).toBeLessThan(300);
    const refused = await call(server, "DELETE", `/v1/organizations/${o.id}`, { headers: admin });
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toContain('environment "production" holds 1 sources');
    expect(refused.body.error.message).toContain("1 API keys");
    const seen: unknown[] = [];
    const off = server.deps.bus.subscribe((m) => seen.push(m));
    const res = await call(server, "DELETE", `/v1/organizations/${o.id}?force=true`, { headers: admin });
    off();
    expect(res.status).toBe(204);
    // What deleting each alone publishes: every node forgets them, and live streams of the keys end.
    expect(seen).toContainEqual({ type: "source.updated", sourceId: src.body.source.id });
    expect(seen).toContainEqual({ type: "destination.updated", destinationId: dst.body.destination.id });
    expect(seen).toContainEqual(expect.objectContaining({ type: "credential.revoked" }));
    expect((await ingest(server, src.body.source.id, { body: "{}", headers: { "content-type": "application/json" } })).status).toBe(404);
    const { db } = server.deps;
    expect(await db.select().from(sources).where(eq(sources.id, src.body.source.id))).toEqual([]);
    expect(await db.select().from(apiKeys).where(eq(apiKeys.orgId, o.id))).toEqual([]);
    expect((await call(server, "GET", "/v1/sources", { key: devKey })).status).toBe(401);
    // The developer, who was acting in it, is back in Acme, their other organization.
    const me = await call(server, "GET", "/v1/auth/me", { headers: as.developer });
    expect(me.status).toBe(200);
    expect(me.body.org_id).toBe(acme.orgId);
  });

  it("keeps the account of a person it was the only organization of, who can no longer sign in", async () => {
    const o = await createOrg("Lonely");
    await addPerson(server, "lonely@solo.test", o.id, "owner");
    expect((await signIn(server, "lonely@solo.test")).cookie).toContain("hookrelay_session=");
    expect((await call(server, "DELETE", `/v1/organizations/${o.id}`, { headers: admin })).status).toBe(204);
    expect((await server.deps.db.select().from(users).where(eq(users.email, "lonely@solo.test"))).length).toBe(1);
    const res = await call(server, "POST", "/v1/auth/login", { body: { email: "lonely@solo.test", password: PASSWORD } });
    expect(res.status).toBe(401);
  });
});
