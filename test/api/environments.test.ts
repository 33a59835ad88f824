import { beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { environments, sources, users } from "../../src/db/schema";
import { ingest } from "../helpers/ingest";
import { addPerson, signIn } from "../helpers/people";
import { createSource, otherOrgKey, scopeOf, type TestScope } from "../helpers/rows";
import { ADMIN, call, type TestServer } from "../helpers/server";
import { useServer } from "../helpers/fixture";

let server: TestServer, key: string;
let scope: TestScope;
let session: Record<string, string>;

useServer({}, (s) => ({ server, key } = s));
beforeAll(async () => {
  scope = await scopeOf(server, key);
  session = await server.session();
});

/** Creates an environment through the session; returns it. */
async function createEnv(body: Record<string, unknown>) {
  const res = await call(server, "POST", "/v1/environments", { headers: session, body });
  if (res.status !== 201) throw new Error(`create environment: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.environment as { id: string; slug: string; name: string };
}

/** A session's request acting in `env` (id or slug). */
const inEnv = (env: string) => ({ ...session, "x-hookrelay-env": env });

/** An API key of the environment: created by a session acting in it. */
async function keyOf(env: string): Promise<string> {
  const res = await call(server, "POST", "/v1/auth/api-keys", { headers: inEnv(env), body: { name: `key of ${env}` } });
  if (res.status !== 201) throw new Error(`create key: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.key;
}

describe("GET /v1/environments", () => {
  it("lists the organization's environments, the bootstrapped production first", async () => {
    const res = await call(server, "GET", "/v1/environments", { key });
    expect(res.status).toBe(200);
    expect(res.body.environments[0]).toEqual({
      id: scope.envId,
      org_id: scope.orgId,
      name: "production",
      slug: "production",
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
  });

  it("lists only the caller's organization's", async () => {
    const other = await otherOrgKey(server);
    const mine = await createEnv({ name: "Listed here" });
    const res = await call(server, "GET", "/v1/environments", { key: other });
    expect(res.status).toBe(200);
    expect(res.body.environments.map((e: { id: string }) => e.id)).not.toContain(mine.id);
    expect(res.body.environments).toHaveLength(1);
  });
});

describe("POST /v1/environments", () => {
  it("creates one with a slug from the name, stored", async () => {
    const res = await call(server, "POST", "/v1/environments", { key, body: { name: "Staging EU" } });
    expect(res.status).toBe(201);
    const e = res.body.environment;
    expect(e).toEqual({ id: expect.stringMatching(/^[0-9a-f]{32}$/), org_id: scope.orgId, name: "Staging EU", slug: "staging-eu", created_at: e.created_at, updated_at: e.created_at });
    const [row] = await server.deps.db.select().from(environments).where(eq(environments.id, e.id));
    expect(row).toMatchObject({ orgId: scope.orgId, name: "Staging EU", slug: "staging-eu" });
  });

  it("numbers a slug taken by another environment's name", async () => {
    await createEnv({ name: "Other thing", slug: "qa" });
    const e = await createEnv({ name: "QA" });
    expect(e.slug).toBe("qa-2");
  });

  it("refuses a slug already used in the organization: 409", async () => {
    await createEnv({ name: "Dev one", slug: "dev" });
    const res = await call(server, "POST", "/v1/environments", { key, body: { name: "Dev two", slug: "dev" } });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe("conflict");
    expect(res.body.error.message).toContain('slug "dev"');
  });

  it("refuses a name already used: 409; a bad slug or no name: 400", async () => {
    expect((await call(server, "POST", "/v1/environments", { key, body: { name: "production", slug: "prod-2" } })).status).toBe(409);
    expect((await call(server, "POST", "/v1/environments", { key, body: { name: "x", slug: "Not a slug!" } })).status).toBe(400);
    expect((await call(server, "POST", "/v1/environments", { key, body: {} })).status).toBe(400);
  });

  it("lets the same slug live in two organizations", async () => {
    const other = await otherOrgKey(server);
    const res = await call(server, "POST", "/v1/environments", { key: other, body: { name: "Staging EU" } });
    expect(res.status).toBe(201);
    expect(res.body.environment.slug).toBe("staging-eu");
  });
});

describe("PATCH /v1/environments/{id}", () => {
  it("renames and changes the slug, moving updated_at", async () => {
    const e = await createEnv({ name: "Rename me" });
    const res = await call(server, "PATCH", `/v1/environments/${e.id}`, { headers: inEnv(scope.envId), body: { name: "Renamed", slug: "renamed" } });
    expect(res.status).toBe(200);
    expect(res.body.environment).toMatchObject({ id: e.id, name: "Renamed", slug: "renamed" });
    const [row] = await server.deps.db.select().from(environments).where(eq(environments.id, e.id));
    expect(row).toMatchObject({ name: "Renamed", slug: "renamed" });
  });

  it("refuses a slug another environment has: 409", async () => {
    const e = await createEnv({ name: "Patch conflict" });
    const res = await call(server, "PATCH", `/v1/environments/${e.id}`, { headers: inEnv(scope.envId), body: { slug: "production" } });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe("conflict");
  });

  it("answers 404 for an unknown id and another organization's", async () => {
    expect((await call(server, "PATCH", "/v1/environments/0123456789abcdef0123456789abcdef", { headers: session, body: { name: "x" } })).status).toBe(404);
    const other = await otherOrgKey(server);
    const theirs = (await call(server, "GET", "/v1/environments", { key: other })).body.environments[0].id;
    const res = await call(server, "PATCH", `/v1/environments/${theirs}`, { headers: session, body: { name: "x" } });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("not_found");
  });
});

describe("DELETE /v1/environments/{id}", () => {
  it("deletes an empty environment: 204, gone from the list", async () => {
    const e = await createEnv({ name: "Empty" });
    const res = await call(server, "DELETE", `/v1/environments/${e.id}`, { headers: inEnv(scope.envId) });
    expect(res.status).toBe(204);
    const list = await call(server, "GET", "/v1/environments", { key });
    expect(list.body.environments.map((x: { id: string }) => x.id)).not.toContain(e.id);
  });

  it("refuses one holding resources, naming them: 409", async () => {
    const e = await createEnv({ name: "Holding" });
    const k = await keyOf(e.slug);
    await createSource(server, k, "held source");
    const res = await call(server, "DELETE", `/v1/environments/${e.id}`, { headers: inEnv(scope.envId) });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe("conflict");
    expect(res.body.error.message).toContain("1 sources");
    expect(res.body.error.message).toContain("1 API keys");
    expect((await server.deps.db.select().from(environments).where(eq(environments.id, e.id))).length).toBe(1);
  });

  it("with force=true deletes it with what it holds, and its keys stop working", async () => {
    const e = await createEnv({ name: "Forced" });
    const k = await keyOf(e.slug);
    const src = await createSource(server, k, "doomed source");
    const dest = await call(server, "POST", "/v1/destinations", { key: k, body: { name: "doomed", url: "https://example.com/hook" } });
    expect(dest.status).toBe(201);
    const res = await call(server, "DELETE", `/v1/environments/${e.id}?force=true`, { headers: inEnv(scope.envId) });
    expect(res.status).toBe(204);
    expect(await server.deps.db.select().from(sources).where(eq(sources.id, src.id))).toEqual([]);
    expect((await call(server, "GET", "/v1/sources", { key: k })).status).toBe(401);
    // The user whose last used environment it was is kept.
    expect((await server.deps.db.select().from(users).where(eq(users.email, ADMIN.email))).length).toBe(1);
  });

  it("refuses the environment the caller acts in: 409", async () => {
    const res = await call(server, "DELETE", `/v1/environments/${scope.envId}?force=true`, { key });
    expect(res.status).toBe(409);
    expect(res.body.error.message).toContain("acting in");
  });

  it("refuses an organization's only environment: 409 (every caller of the organization acts in it; test/domain/environments.test.ts checks the last-environment rule alone)", async () => {
    const other = await otherOrgKey(server);
    const theirs = (await call(server, "GET", "/v1/environments", { key: other })).body.environments;
    expect(theirs).toHaveLength(1);
    const res = await call(server, "DELETE", `/v1/environments/${theirs[0].id}?force=true`, { key: other });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe("conflict");
  });

  it("answers 404 for an unknown id, another organization's, and, to an API key, any environment but its own", async () => {
    expect((await call(server, "DELETE", "/v1/environments/0123456789abcdef0123456789abcdef", { headers: session })).status).toBe(404);
    // A key of one environment cannot rename or force-delete another (docs/decisions.md D19).
    const e = await createEnv({ name: "Out of a key's reach" });
    expect((await call(server, "DELETE", `/v1/environments/${e.id}?force=true`, { key })).status).toBe(404);
    expect((await call(server, "PATCH", `/v1/environments/${e.id}`, { key, body: { name: "taken over" } })).status).toBe(404);
    expect((await call(server, "GET", "/v1/environments", { headers: session })).body.environments.map((x: { id: string; name: string }) => x.name)).toContain("Out of a key's reach");
    const other = await otherOrgKey(server);
    const theirs = (await call(server, "GET", "/v1/environments", { key: other })).body.environments[0].id;
    expect((await call(server, "DELETE", `/v1/environments/${theirs}`, { headers: session })).status).toBe(404);
  });
});

describe("isolation between environments", () => {
  it("a key of one environment gets 404 for another's source, and cannot name another with X-Hookrelay-Env", async () => {
    const a = await createEnv({ name: "Iso A" });
    const b = await createEnv({ name: "Iso B" });
    const keyA = await keyOf(a.slug);
    const keyB = await keyOf(b.slug);
    const srcB = await createSource(server, keyB, "b's source");
    expect((await call(server, "GET", `/v1/sources/${srcB.id}`, { key: keyA })).status).toBe(404);
    expect((await call(server, "GET", `/v1/sources/${srcB.id}`, { key: keyB })).status).toBe(200);
    const refused = await call(server, "GET", "/v1/sources", { key: keyA, headers: { "x-hookrelay-env": b.slug } });
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toContain("another environment");
    expect((await call(server, "GET", "/v1/sources", { key: keyA, headers: { "x-hookrelay-env": a.slug } })).status).toBe(200);
  });

  it("a session switching with X-Hookrelay-Env sees each environment's own sources, and both ingest URLs work", async () => {
    const a = await createEnv({ name: "Switch A" });
    const b = await createEnv({ name: "Switch B" });
    const made = await call(server, "POST", "/v1/sources", { headers: inEnv(a.id), body: { name: "only in A" } });
    expect(made.status).toBe(201);
    const madeB = await call(server, "POST", "/v1/sources", { headers: inEnv(b.slug), body: { name: "only in B" } });
    expect(madeB.status).toBe(201);
    const listA = await call(server, "GET", "/v1/sources", { headers: inEnv(a.slug) });
    const listB = await call(server, "GET", "/v1/sources", { headers: inEnv(b.id) });
    expect(listA.body.sources.map((s: { name: string }) => s.name)).toEqual(["only in A"]);
    expect(listB.body.sources.map((s: { name: string }) => s.name)).toEqual(["only in B"]);
    for (const s of [made.body.source, madeB.body.source]) {
      const res = await ingest(server, s.id, { body: JSON.stringify({ hello: s.name }), headers: { "content-type": "application/json" } });
      expect(res.status).toBeLessThan(300);
    }
  });

  it("a session without a header acts in the environment its header last named; the env_id query names one for that request only", async () => {
    const c = await createEnv({ name: "Last used" });
    await call(server, "GET", "/v1/sources", { headers: inEnv(c.slug) });
    const me = await call(server, "GET", "/v1/auth/me", { headers: session });
    expect(me.body.environment).toEqual({ id: c.id, name: "Last used", slug: "last-used" });
    // A query (what a link on another site can carry) acts once and is not remembered.
    const once = await call(server, "GET", `/v1/auth/me?env_id=${scope.envId}`, { headers: session });
    expect(once.body.env_id).toBe(scope.envId);
    const still = await call(server, "GET", "/v1/auth/me", { headers: session });
    expect(still.body.environment.slug).toBe("last-used");
    await call(server, "GET", "/v1/auth/me", { headers: inEnv(scope.envId) });
    const after = await call(server, "GET", "/v1/auth/me", { headers: session });
    expect(after.body.environment.slug).toBe("production");
  });

  it("a session naming an unknown environment, or another organization's, gets 404", async () => {
    const res = await call(server, "GET", "/v1/sources", { headers: inEnv("no-such-env") });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("not_found");
    const other = await otherOrgKey(server);
    const theirs = (await call(server, "GET", "/v1/environments", { key: other })).body.environments[0].id;
    expect((await call(server, "GET", "/v1/sources", { headers: inEnv(theirs) })).status).toBe(404);
  });
});

describe("GET /v1/auth/me", () => {
  it("names the environment a key acts in", async () => {
    const res = await call(server, "GET", "/v1/auth/me", { key });
    expect(res.status).toBe(200);
    expect(res.body.environment).toEqual({ id: scope.envId, name: "production", slug: "production" });
  });

  it("names the environment a session chose with X-Hookrelay-Env", async () => {
    const e = await createEnv({ name: "Me env" });
    const res = await call(server, "GET", "/v1/auth/me", { headers: inEnv("me-env") });
    expect(res.body).toMatchObject({ env_id: e.id, env_name: "Me env", environment: { id: e.id, name: "Me env", slug: "me-env" } });
    await call(server, "GET", "/v1/auth/me", { headers: inEnv("production") });
  });
});

describe("who may manage environments", () => {
  it("every role reads them; creating, renaming and deleting need admin: a developer and a viewer get 403, an admin may", async () => {
    const people: Record<string, Record<string, string>> = {};
    for (const role of ["admin", "developer", "viewer"] as const) {
      await addPerson(server, `env-${role}@test.local`, scope.orgId, role);
      people[role] = await signIn(server, `env-${role}@test.local`);
    }
    const target = await createEnv({ name: "Gated" });
    for (const role of ["developer", "viewer"]) {
      const headers = people[role]!;
      expect((await call(server, "GET", "/v1/environments", { headers })).status).toBe(200);
      for (const [method, path, body] of [
        ["POST", "/v1/environments", { name: `by ${role}` }],
        ["PATCH", `/v1/environments/${target.id}`, { name: "renamed" }],
        ["DELETE", `/v1/environments/${target.id}`, undefined],
      ] as const) {
        const res = await call(server, method, path, { headers, body });
        expect(res.status, `${role} ${method}`).toBe(403);
        expect(res.body.error.code).toBe("forbidden");
      }
    }
    const headers = people.admin!;
    expect((await call(server, "POST", "/v1/environments", { headers, body: { name: "By admin" } })).status).toBe(201);
    expect((await call(server, "PATCH", `/v1/environments/${target.id}`, { headers, body: { name: "Gated 2" } })).status).toBe(200);
    expect((await call(server, "DELETE", `/v1/environments/${target.id}`, { headers })).status).toBe(204);
  });
});
