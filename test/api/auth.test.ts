import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN, call, startTestServer, type TestServer } from "../helpers/server";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

describe("POST /v1/auth/login", () => {
  it("sets an HttpOnly, SameSite=Lax session cookie on the right password", async () => {
    const res = await server.request("/v1/auth/login", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(ADMIN) });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.user.email).toBe(ADMIN.email);
    const cookie = res.headers.get("set-cookie")!;
    expect(cookie).toMatch(/^hookrelay_session=[^;]+;/);
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    expect(cookie).toMatch(/Path=\//);
    expect(cookie).not.toMatch(/Secure/);
  });

  it("answers 401 unauthorized on a wrong password or unknown email", async () => {
    for (const creds of [{ ...ADMIN, password: "nope" }, { email: "who@x", password: "nope" }]) {
      const { status, body } = await call(server, "POST", "/v1/auth/login", { body: creds });
      expect(status).toBe(401);
      expect(body.error.code).toBe("unauthorized");
    }
  });

  it("answers 400 validation_error listing the bad fields", async () => {
    const { status, body } = await call(server, "POST", "/v1/auth/login", { body: { email: 5 } });
    expect(status).toBe(400);
    expect(body.error.code).toBe("validation_error");
    const fields = body.error.details.map((d: { field: string }) => d.field);
    expect(fields).toContain("body.email");
    expect(fields).toContain("body.password");
  });

  it("answers 400 on malformed JSON", async () => {
    const { status, body } = await call(server, "POST", "/v1/auth/login", { body: "{not json" });
    expect(status).toBe(400);
    expect(body.error.code).toBe("validation_error");
  });
});

describe("GET /v1/auth/me and POST /v1/auth/logout", () => {
  it("knows the session user and forgets it at once after logout", async () => {
    const headers = await server.session();
    const me = await call(server, "GET", "/v1/auth/me", { headers });
    expect(me.status).toBe(200);
    expect(me.body.user.email).toBe(ADMIN.email);
    expect(me.body.org_id).toMatch(/^[0-9a-f]{32}$/);
    expect(me.body.env_id).toMatch(/^[0-9a-f]{32}$/);
    // The first start creates org "default" with env "production"; the ids stay as they were.
    expect(me.body).toMatchObject({ org_name: "default", env_name: "production" });
    expect(Object.keys(me.body).sort()).toEqual(["env_id", "env_name", "environment", "instance_owner", "org_id", "org_name", "organization", "role", "user"]);
    expect(me.body).toMatchObject({ role: "owner", instance_owner: true, organization: { id: me.body.org_id, name: "default", slug: "default" } });

    // An API key acts in the same environment and gets the same names.
    const key = await server.apiKey("read");
    const viaKey = await call(server, "GET", "/v1/auth/me", { key });
    expect(viaKey.status).toBe(200);
    expect(viaKey.body).toMatchObject({ org_id: me.body.org_id, env_id: me.body.env_id, org_name: "default", env_name: "production" });

    const out = await call(server, "POST", "/v1/auth/logout", { headers });
    expect(out).toMatchObject({ status: 200, body: { success: true } });
    const after = await call(server, "GET", "/v1/auth/me", { headers });
    expect(after.status).toBe(401);
  });

  it("answers 401 without credentials", async () => {
    const { status, body } = await call(server, "GET", "/v1/auth/me");
    expect(status).toBe(401);
    expect(body.error.code).toBe("unauthorized");
  });
});

describe("CSRF on cookie-authenticated mutations", () => {
  it("refuses a session POST from another origin or with no origin", async () => {
    const { cookie } = await server.session();
    for (const extra of [{ origin: "https://evil.example" }, {}]) {
      const { status, body } = await call(server, "POST", "/v1/auth/api-keys", { headers: { cookie, ...extra } as Record<string, string>, body: { name: "x" } });
      expect(status).toBe(403);
      expect(body.error.code).toBe("forbidden");
    }
  });
});

describe("API keys", () => {
  it("lives through create → use with both headers → list masked → revoke → 401 at once", async () => {
    const headers = await server.session();
    const created = await call(server, "POST", "/v1/auth/api-keys", { headers, body: { name: "ci" } });
    expect(created.status).toBe(201);
    const key = created.body.key as string;
    expect(created.body).toMatchObject({ name: "ci", scopes: "*", key_prefix: key.slice(0, 12) });
    expect(created.body.id).toMatch(/^ak_[0-9a-f]{32}$/);

    expect((await call(server, "GET", "/v1/auth/me", { headers: { "x-api-key": key } })).status).toBe(200);
    expect((await call(server, "GET", "/v1/auth/me", { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);

    const list = await call(server, "GET", "/v1/auth/api-keys", { headers });
    const item = list.body.api_keys.find((k: { id: string }) => k.id === created.body.id);
    expect(item).toMatchObject({ name: "ci", key_prefix: key.slice(0, 12), request_count: 2, revoked: 0 });
    expect(item.last_used_at).not.toBeNull();
    expect(item).not.toHaveProperty("key");
    expect(JSON.stringify(list.body)).not.toContain(key);

    const bare = created.body.id.slice(3);
    const revoked = await call(server, "DELETE", `/v1/auth/api-keys/${bare}`, { headers });
    expect(revoked).toMatchObject({ status: 200, body: { success: true } });
    const denied = await call(server, "GET", "/v1/auth/me", { key });
    expect(denied.status).toBe(401);
  });

  it("refuses key management with an API key: 403 session_required", async () => {
    const key = await server.apiKey();
    for (const [method, path] of [["GET", "/v1/auth/api-keys"], ["POST", "/v1/auth/api-keys"], ["DELETE", "/v1/auth/api-keys/ak_" + "0".repeat(32)]] as const) {
      const { status, body } = await call(server, method, path, { key, body: method === "POST" ? { name: "x" } : undefined });
      expect(status).toBe(403);
      expect(body.error.code).toBe("session_required");
    }
  });

  it("lets a read-scoped key GET but not POST", async () => {
    const key = await server.apiKey("read");
    expect((await call(server, "GET", "/v1/auth/me", { key })).status).toBe(200);
    const { status, body } = await call(server, "POST", "/v1/auth/logout", { key });
    expect(status).toBe(403);
    expect(body.error.code).toBe("forbidden");
  });

  it("answers 404 for an unknown environment and for unknown ids in any shape", async () => {
    const headers = await server.session();
    const env = await call(server, "POST", "/v1/auth/api-keys", { headers, body: { name: "x", env_id: "f".repeat(32) } });
    expect(env.status).toBe(404);
    expect(env.body.error.code).toBe("not_found");
    for (const id of ["..%2F..%2Fx", "x".repeat(1000), encodeURIComponent("ключ"), "ak_" + "0".repeat(32)]) {
      const { status, body } = await call(server, "DELETE", `/v1/auth/api-keys/${id}`, { headers });
      expect(status).toBe(404);
      expect(body.error.code).toBe("not_found");
    }
  });
});

describe("operations endpoints", () => {
  it("serves /healthz, /readyz, /metrics and a request id", async () => {
    const health = await server.request("/healthz");
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: "ok" });
    expect(health.headers.get("x-request-id")).toBeTruthy();
    expect((await server.request("/readyz")).status).toBe(200);
    const metrics = await (await server.request("/metrics")).text();
    expect(metrics).toContain("hookrelay_http_requests_total");
    expect(metrics).toContain("hookrelay_process_resident_memory_bytes");
    expect(metrics).toContain("hookrelay_nodejs_heap_size_used_bytes");
    // Left out: under Bun each scrape of these walked the whole heap (about 30 ms of stalled event loop).
    expect(metrics).not.toContain("heap_space_size");
  });

  it("serves the OpenAPI 3.1 document with the routes that exist", async () => {
    const { status, body } = await call(server, "GET", "/v1/openapi.json");
    expect(status).toBe(200);
    expect(body.openapi).toBe("3.1.0");
    expect(Object.keys(body.paths)).toEqual(expect.arrayContaining(["/auth/login", "/auth/api-keys", "/auth/api-keys/{id}"]));
  });

  it("serves the UI at / with an SPA fallback that never shadows the API", async () => {
    const root = await server.request("/");
    expect(root.headers.get("content-type")).toContain("text/html");
    const deep = await server.request("/sources/abc");
    expect(deep.status).toBe(200);
    expect(await deep.text()).toContain('<div id="root">');
    const api = await call(server, "GET", "/v1/nope");
    expect(api.body.error).toBeDefined();
  });
});
