import { and, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { auditLog } from "../../src/db/schema";
import { useServer } from "../helpers/fixture";
import { joinAs, keyOf } from "../helpers/members";
import { call, type TestServer } from "../helpers/server";

/** GET /v1/config/export and POST /v1/config/apply (docs/config-as-code.md). */

let server: TestServer, key: string;
useServer({}, (s) => ({ server, key } = s));

let developerKey: string;
beforeAll(async () => {
  developerKey = (await keyOf(server, await joinAs(server, { key }, "developer"))).key;
});

const FILE = {
  version: 1,
  sources: [{ slug: "github", name: "GitHub", template: "github", verification_secret: "gh-secret-0123456789" }],
  destinations: [{ name: "api", url: "https://api.example.com/hooks", max_retries: 4 }],
  connections: [{ name: "github-to-api", source: "github", destination: "api", filter_rules: [{ field: "body.action", operator: "eq", value: "opened" }] }],
};

describe("POST /v1/config/apply", () => {
  it("plans with dry_run and changes nothing, then applies, then has nothing left to do", async () => {
    const plan = await call(server, "POST", "/v1/config/apply", { key, body: { document: FILE, dry_run: true } });
    expect(plan.status).toBe(200);
    expect(plan.body.applied).toBe(false);
    expect(plan.body.changes.map((c: { action: string; kind: string; name: string }) => `${c.action} ${c.kind} ${c.name}`)).toEqual(["create source github", "create destination api", "create connection github-to-api"]);
    expect((await call(server, "GET", "/v1/sources", { key })).body.sources).toEqual([]);

    const applied = await call(server, "POST", "/v1/config/apply", { key, body: { document: FILE } });
    expect(applied.status).toBe(200);
    expect(applied.body.applied).toBe(true);
    const connections = (await call(server, "GET", "/v1/connections", { key })).body.connections;
    expect(connections).toHaveLength(1);
    expect(connections[0]).toMatchObject({ name: "github-to-api", source_name: "GitHub", destination_name: "api" });

    expect((await call(server, "POST", "/v1/config/apply", { key, body: { document: FILE } })).body).toEqual({ changes: [], applied: false });
  });

  it("records each change in the audit log with the applying key", async () => {
    const rows = await server.deps.db
      .select({ action: auditLog.action, type: auditLog.resourceType, actorType: auditLog.actorType })
      .from(auditLog)
      .where(and(eq(auditLog.action, "create"), eq(auditLog.actorType, "api_key")));
    expect(rows.map((r) => r.type)).toEqual(expect.arrayContaining(["source", "destination", "connection"]));
  });

  it("answers a bad file with 400 naming each field by its place in the file, and changes nothing", async () => {
    const bad = { ...FILE, destinations: [{ name: "api", url: "https://api.example.com/hooks", max_retries: 4 }], connections: [{ name: "x", source: "github", destination: "billing" }] };
    const res = await call(server, "POST", "/v1/config/apply", { key, body: { document: bad } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: "validation_error", details: [{ field: "connections[0].destination", message: 'unknown destination "billing"' }] });
    const typo = await call(server, "POST", "/v1/config/apply", { key, body: { document: { version: 2, sources: "none" } } });
    expect(typo.status).toBe(400);
    expect(typo.body.error.details.map((d: { field: string }) => d.field)).toEqual(["version", "sources"]);
    expect((await call(server, "GET", "/v1/connections", { key })).body.connections).toHaveLength(1);
  });

  it("refuses an unresolved ${NAME} reference: the server never reads the operator's environment", async () => {
    const res = await call(server, "POST", "/v1/config/apply", { key, body: { document: { version: 1, sources: [{ slug: "x", name: "X", verification_secret: "${X_SECRET}" }] } } });
    expect(res.status).toBe(400);
    expect(res.body.error.details[0].field).toBe("sources[0].verification_secret");
  });

  it("manages applications and their endpoints, and exports them with the endpoint secret as a reference", async () => {
    const key32 = "whsec_" + Buffer.alloc(32, 3).toString("base64");
    const doc = { ...FILE, applications: [{ name: "Acme", uid: "acme", endpoints: [{ url: "https://acme.example.com/hooks", secret: key32 }] }] };
    const res = await call(server, "POST", "/v1/config/apply", { key, body: { document: doc } });
    expect(res.status).toBe(200);
    expect(res.body.changes.map((c: { action: string; kind: string; name: string }) => `${c.action} ${c.kind} ${c.name}`)).toEqual(["create application Acme", "create endpoint Acme https://acme.example.com/hooks"]);
    const endpoints = (await call(server, "GET", "/v1/applications/acme/endpoints", { key })).body.endpoints;
    expect(endpoints.map((e: { url: string }) => e.url)).toEqual(["https://acme.example.com/hooks"]);
    const exported = (await call(server, "GET", "/v1/config/export?format=json", { key })).body;
    expect(exported.applications[0]).toMatchObject({ name: "Acme", uid: "acme", endpoints: [{ url: "https://acme.example.com/hooks", secret: "${APP_ACME_ENDPOINT_ACME_EXAMPLE_COM_HOOKS_SECRET}" }] });
    // The endpoint's own destination belongs to the application, not to the file's destinations.
    expect(exported.destinations.map((d: { name: string }) => d.name)).toEqual(["api"]);
    expect((await call(server, "POST", "/v1/config/apply", { key, body: { document: doc } })).body).toEqual({ changes: [], applied: false });
  });

  it("needs the admin role, even for a dry run", async () => {
    const res = await call(server, "POST", "/v1/config/apply", { key: developerKey, body: { document: FILE, dry_run: true } });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("forbidden");
  });
});

describe("GET /v1/config/export", () => {
  it("answers YAML by default, the same bytes twice, secrets as references", async () => {
    const first = await server.request("/v1/config/export", { headers: { "x-api-key": key } });
    expect(first.status).toBe(200);
    expect(first.headers.get("content-type")).toContain("application/yaml");
    const text = await first.text();
    const second = await (await server.request("/v1/config/export", { headers: { "x-api-key": key } })).text();
    expect(second).toBe(text);
    const doc = parse(text);
    expect(doc.version).toBe(1);
    expect(doc.sources[0].verification_secret).toBe("${SOURCE_GITHUB_SECRET}");
    expect(doc.connections[0]).toMatchObject({ source: "github", destination: "api" });
    expect(text).not.toContain("src_");
  });

  it("answers the document as JSON with format=json, secrets in full with include_secrets for an admin", async () => {
    const res = await call(server, "GET", "/v1/config/export?format=json&include_secrets=true", { key });
    expect(res.status).toBe(200);
    expect(res.body.sources[0].verification_secret).toBe("gh-secret-0123456789");
  });

  it("lets a developer export without secrets, never with them", async () => {
    expect((await call(server, "GET", "/v1/config/export?format=json", { key: developerKey })).status).toBe(200);
    const res = await call(server, "GET", "/v1/config/export?include_secrets=true", { key: developerKey });
    expect(res.status).toBe(403);
  });

  it("is in the OpenAPI document", async () => {
    const doc = (await call(server, "GET", "/v1/openapi.json")).body;
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(["/config/export", "/config/apply"]));
  });
});
