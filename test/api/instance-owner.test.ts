/**
 * Whole-instance operations (backups, the cluster's nodes) are the instance
 * owner's: the admin created on the first start, a key that admin made, or
 * local CLI mode. Any other organization's user and keys get 403
 * `forbidden` (docs/api.md, "Who may do what"); backup answers name no
 * server path.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { hostname } from "node:os";
import { apiKeys, environments, memberships, organizations, users } from "../../src/db/schema";
import { hex32, newId } from "../../src/contracts/ids";
import { createApiKey } from "../../src/domain/apiKeys";
import { defaultScope } from "../../src/domain/bootstrap";
import { cli, cliEnv } from "../cli/helpers";
import { onPostgres } from "../helpers/database";
import { call, type TestServer } from "../helpers/server";
import { useServer } from "../helpers/fixture";

let server: TestServer;
let ownerKey: string;
let ownerSession: Record<string, string>;
const other = { email: "someone@other.example", password: "another org's password" };
let otherKey: string;
let otherSession: Record<string, string>;

/** A second organization with its own user, made in the store (no API creates organizations or users). */
async function otherOrganization() {
  const { db } = server.deps;
  // Later than anything the server made: the owner is the first user.
  const later = new Date(Date.now() + 60_000).toISOString();
  const orgId = hex32();
  const envId = hex32();
  const userId = hex32();
  await db.insert(organizations).values({ id: orgId, name: "Other", slug: `other-${orgId}`, createdAt: later });
  await db.insert(environments).values({ id: envId, orgId, name: "production", slug: "production", createdAt: later, updatedAt: later });
  await db.insert(users).values({ id: userId, email: other.email, passwordHash: await Bun.password.hash(other.password), orgId, envId, createdAt: later });
  await db.insert(memberships).values({ id: hex32(), orgId, userId, role: "owner", status: "active", envId, createdAt: later, updatedAt: later });
  return { orgId, envId, userId };
}

async function loginAs(email: string, password: string) {
  const res = await server.request("/v1/auth/login", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email, password }) });
  expect(res.status).toBe(200);
  return { cookie: res.headers.getSetCookie().map((c) => c.split(";")[0]).join("; "), origin: server.url };
}

useServer({}, (s) => ({ server, key: ownerKey } = s));
beforeAll(async () => {
  ownerSession = await server.session();
  const org = await otherOrganization();
  otherSession = await loginAs(other.email, other.password);
  // The other org's admin makes a `*` key from their session, as the UI would.
  const made = await call(server, "POST", "/v1/auth/api-keys", { headers: otherSession, body: { name: "theirs", scopes: "*" } });
  expect(made.status).toBe(201);
  otherKey = made.body.key;
  expect((await call(server, "GET", "/v1/auth/me", { key: otherKey })).body.org_id).toBe(org.orgId);
});

const expectForbidden = (res: Awaited<ReturnType<typeof call>>) => {
  expect(res.status).toBe(403);
  expect(res.body.error.code).toBe("forbidden");
  expect(res.body.error.message).toContain("instance's owner");
};

describe("backups are the instance owner's", () => {
  it("another organization's `*` key and session get 403 forbidden to make, list or download one", async () => {
    for (const auth of [{ key: otherKey }, { headers: otherSession }]) {
      expectForbidden(await call(server, "POST", "/v1/backups", auth));
      expectForbidden(await call(server, "GET", "/v1/backups", auth));
      expectForbidden(await call(server, "GET", "/v1/backups/hookrelay-2026-01-31T02-00-00-000Z.db", auth));
    }
  });

  it("the owner's key and session may (on PostgreSQL without HOOKRELAY_BACKUP_DIR: the 409 that says to set one)", async () => {
    const made = await call(server, "POST", "/v1/backups", { key: ownerKey });
    expect(made.status).toBe(onPostgres ? 409 : 201);
    if (onPostgres) expect(made.body.error.message).toContain("HOOKRELAY_BACKUP_DIR");
    expect((await call(server, "GET", "/v1/backups", { headers: ownerSession })).status).toBe(onPostgres ? 409 : 200);
    if (onPostgres) return;
    const res = await server.request(`/v1/backups/${made.body.backup.name}`, { headers: { "x-api-key": ownerKey } });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    // Only then does the other org learn nothing of it either.
    expectForbidden(await call(server, "GET", `/v1/backups/${made.body.backup.name}`, { key: otherKey }));
  });

  it("answers no server file-system path", async () => {
    if (onPostgres) return;
    const made = await call(server, "POST", "/v1/backups", { key: ownerKey });
    const list = await call(server, "GET", "/v1/backups", { key: ownerKey });
    for (const body of [made.body.backup, ...list.body.backups]) {
      expect(Object.keys(body).sort()).toEqual(["created_at", "format", "kind", "name", "size_bytes"]);
    }
    for (const text of [JSON.stringify(made.body), JSON.stringify(list.body)]) {
      expect(text).not.toContain(server.dataDir);
      expect(text).not.toMatch(/"\/[^"]*\//);
    }
  });

  it("the CLI says why to another organization's key (exit 4)", async () => {
    const res = await cli(["backup", "list", "--url", server.url, "--api-key", otherKey], { env: cliEnv() });
    expect(res.code).toBe(4);
    expect(res.stderr).toContain("instance's owner");
  });
});

describe("GET /v1/cluster is the instance owner's", () => {
  it("another organization's key and session get 403 forbidden, and no host name", async () => {
    for (const auth of [{ key: otherKey }, { headers: otherSession }]) {
      const res = await call(server, "GET", "/v1/cluster", auth);
      expectForbidden(res);
      expect(JSON.stringify(res.body)).not.toContain(hostname());
    }
    const res = await cli(["cluster", "--url", server.url, "--api-key", otherKey], { env: cliEnv() });
    expect(res.code).toBe(4);
    expect(res.stderr).toContain("instance's owner");
  });

  it("the owner's session and keys (a read key too) see the nodes with their hosts", async () => {
    const read = await server.apiKey("read");
    for (const auth of [{ key: ownerKey }, { key: read }, { headers: ownerSession }]) {
      const res = await call(server, "GET", "/v1/cluster", auth);
      expect(res.status).toBe(200);
      expect(res.body.nodes[0]).toMatchObject({ hostname: hostname(), pid: process.pid });
    }
  });

  it("a key made in local CLI mode is the owner's", async () => {
    const scope = await defaultScope(server.deps.db);
    const { key } = await createApiKey(server.deps, { ...scope!, userId: null, via: "local", scopes: "*", role: "owner" }, { name: "local" });
    expect((await call(server, "GET", "/v1/cluster", { key })).status).toBe(200);
    const made = await cli(["keys", "create", "--name", "ops", "--json", ...server.storeArgs], { env: cliEnv() });
    expect(made.code, made.stderr).toBe(0);
    expect((await call(server, "GET", "/v1/cluster", { key: made.json().key })).status).toBe(200);
  });

  it("a key that records no creator is no owner's, even in the owner's organization", async () => {
    const scope = (await defaultScope(server.deps.db))!;
    const key = `hr_${hex32()}`;
    const { sha256Hex } = await import("../../src/domain/hash");
    await server.deps.db.insert(apiKeys).values({ id: newId("apiKey"), orgId: scope.orgId, envId: scope.envId, userId: null, name: "orphan", keyHash: sha256Hex(key), keyPrefix: key.slice(0, 12), scopes: "*", createdAt: new Date().toISOString() });
    expectForbidden(await call(server, "GET", "/v1/cluster", { key }));
  });
});
