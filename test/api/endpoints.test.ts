import { Webhook } from "standardwebhooks";
import { beforeAll, describe, expect, it } from "vitest";
import { scopeOf, type TestScope } from "../helpers/rows";
import { call, type TestServer } from "../helpers/server";
import { useServer } from "../helpers/fixture";
import { createApp, createEndpoint, endpointSecret } from "../outbound/helpers";

let server: TestServer, key: string;
let scope: TestScope;
let app: { id: string; uid: string };

useServer({}, (s) => ({ server, key } = s));
beforeAll(async () => {
  scope = await scopeOf(server, key);
  app = await createApp(server, key, { uid: "endpoints-app" });
});

const base = () => `/v1/applications/${app.uid}/endpoints`;

function expect4xx(res: { status: number; body: any }, status: number, code: string, field?: string) {
  expect(res.status).toBe(status);
  expect(res.body.error.code).toBe(code);
  if (field) expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
}

describe("POST /v1/applications/{appId}/endpoints", () => {
  it("creates an endpoint with exactly the spec's fields, the secret left out", async () => {
    const res = await call(server, "POST", base(), {
      key,
      body: { url: "https://hooks.example.com/in", description: "prod", filter_types: ["order.created", "order.paid"], rate_limit_per_second: 5, expires_at: "2099-01-01T00:00:00Z" },
    });
    expect(res.status).toBe(201);
    const e = res.body.endpoint;
    expect(e).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{32}$/),
      org_id: scope.orgId,
      env_id: scope.envId,
      application_id: app.id,
      url: "https://hooks.example.com/in",
      description: "prod",
      signing_algorithm: "hmac-sha256",
      status: "active",
      filter_types: JSON.stringify(["order.created", "order.paid"]),
      rate_limit_per_second: 5,
      retry_schedule: null,
      expires_at: "2099-01-01T00:00:00.000Z",
      ordered: false,
      on_dlq: "continue",
      portal_held: 0,
      created_at: e.created_at,
      updated_at: e.created_at,
    });
    expect(JSON.stringify(res.body)).not.toContain("whsec_");
  });

  it("generates a whsec_ secret the standardwebhooks library accepts, or keeps the one given", async () => {
    const generated = await createEndpoint(server, key, app.id, { url: "https://a.example.com/" });
    const secret = await endpointSecret(server, key, app.id, generated.id);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(() => new Webhook(secret)).not.toThrow();
    const given = `whsec_${Buffer.alloc(32, 7).toString("base64")}`;
    const own = await createEndpoint(server, key, app.id, { url: "https://b.example.com/", secret: given });
    expect(await endpointSecret(server, key, app.uid, own.id)).toBe(given);
    const list = await call(server, "GET", base(), { key });
    expect(JSON.stringify(list.body)).not.toContain("whsec_");
  });

  it("takes filter_types as an array or its JSON text; null and [] both mean every type", async () => {
    const asText = await createEndpoint(server, key, app.id, { url: "https://c.example.com/", filter_types: '["a.b","a.b","c"]' });
    expect(asText.filter_types).toBe('["a.b","c"]');
    expect((await createEndpoint(server, key, app.id, { url: "https://c.example.com/", filter_types: [] })).filter_types).toBeNull();
    expect((await createEndpoint(server, key, app.id, { url: "https://c.example.com/", filter_types: null })).filter_types).toBeNull();
  });

  it("refuses bad input with 400 naming the field, never a 5xx", async () => {
    const cases: [unknown, string][] = [
      [{}, "body.url"],
      [{ url: "not a url" }, "body.url"],
      [{ url: "ftp://x.example.com/" }, "body.url"],
      [{ url: "https://user:pw@x.example.com/" }, "body.url"],
      [{ url: 42 }, "body.url"],
      [{ url: "https://x.example.com/", signing_algorithm: "rsa-sha256" }, "body.signing_algorithm"],
      [{ url: "https://x.example.com/", secret: "plain" }, "body.secret"],
      [{ url: "https://x.example.com/", filter_types: "order.created" }, "body.filter_types"],
      [{ url: "https://x.example.com/", filter_types: ["has space"] }, "body.filter_types.0"],
      [{ url: "https://x.example.com/", rate_limit_per_second: 0 }, "body.rate_limit_per_second"],
      [{ url: "https://x.example.com/", rate_limit_per_second: 1.5 }, "body.rate_limit_per_second"],
      [{ url: "https://x.example.com/", expires_at: "tomorrow" }, "body.expires_at"],
      [{ url: "https://x.example.com/", status: "paused" }, "body.status"],
    ];
    for (const [body, field] of cases) expect4xx(await call(server, "POST", base(), { key, body }), 400, "validation_error", field);
    expect4xx(await call(server, "POST", "/v1/applications/unknown-app/endpoints", { key, body: { url: "https://x.example.com/" } }), 404, "not_found");
  });
});

describe("GET/PATCH/DELETE /v1/applications/{appId}/endpoints/{id}", () => {
  it("reads, updates and deletes through the id or the uid of the application", async () => {
    const e = await createEndpoint(server, key, app.id, { url: "https://d.example.com/" });
    expect((await call(server, "GET", `/v1/applications/${app.id}/endpoints/${e.id}`, { key })).body.endpoint).toEqual(e);
    const patched = await call(server, "PATCH", `${base()}/${e.id}`, { key, body: { url: "https://e.example.com/new", status: "disabled", filter_types: ["x"], expires_at: null, description: null } });
    expect(patched.status).toBe(200);
    expect(patched.body.endpoint).toMatchObject({ id: e.id, url: "https://e.example.com/new", status: "disabled", filter_types: '["x"]', expires_at: null, description: null });
    expect((await call(server, "GET", base(), { key })).body.endpoints.find((x: { id: string }) => x.id === e.id)).toEqual(patched.body.endpoint);
    expect4xx(await call(server, "PATCH", `${base()}/${e.id}`, { key, body: { url: "nope" } }), 400, "validation_error", "body.url");
    expect((await call(server, "DELETE", `${base()}/${e.id}`, { key })).body).toEqual({ success: true });
    expect4xx(await call(server, "GET", `${base()}/${e.id}`, { key }), 404, "not_found");
  });

  it("answers 404 for an endpoint of another application, and for ids that cannot exist", async () => {
    const other = await createApp(server, key);
    const e = await createEndpoint(server, key, other.id, { url: "https://f.example.com/" });
    for (const path of [`${base()}/${e.id}`, `${base()}/${e.id}/secret`, `${base()}/not-an-id`]) expect4xx(await call(server, "GET", path, { key }), 404, "not_found");
    expect4xx(await call(server, "PATCH", `${base()}/${e.id}`, { key, body: { description: "x" } }), 404, "not_found");
    expect4xx(await call(server, "DELETE", `${base()}/${e.id}`, { key }), 404, "not_found");
  });
});

describe("endpoint secrets", () => {
  it("rotates to a new secret (or the one given), which GET …/secret then answers", async () => {
    const e = await createEndpoint(server, key, app.id, { url: "https://g.example.com/" });
    const before = await endpointSecret(server, key, app.id, e.id);
    const rotated = await call(server, "POST", `${base()}/${e.id}/secret/rotate`, { key });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(before);
    expect(await endpointSecret(server, key, app.id, e.id)).toBe(rotated.body.secret);
    const given = `whsec_${Buffer.alloc(24, 3).toString("base64")}`;
    expect((await call(server, "POST", `${base()}/${e.id}/secret/rotate`, { key, body: { secret: given } })).body).toEqual({ secret: given });
    expect4xx(await call(server, "POST", `${base()}/${e.id}/secret/rotate`, { key, body: { secret: "whsec_short" } }), 400, "validation_error", "body.secret");
  });

  it("needs scope * to read or rotate a secret", async () => {
    const e = await createEndpoint(server, key, app.id, { url: "https://h.example.com/" });
    const readKey = await server.apiKey("read");
    expect4xx(await call(server, "GET", `${base()}/${e.id}/secret`, { key: readKey }), 403, "forbidden");
    expect4xx(await call(server, "POST", `${base()}/${e.id}/secret/rotate`, { key: readKey }), 403, "forbidden");
    expect((await call(server, "GET", `${base()}/${e.id}`, { key: readKey })).status).toBe(200);
  });
});
