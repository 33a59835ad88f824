import { eq } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { destinations } from "../../src/db/schema";
import { loadDestinationForDelivery } from "../../src/domain/destinationDelivery";
import { applyDestinationAuth } from "../../src/outgoing/destinationAuth";
import { otherOrgKey } from "../helpers/rows";
import { call, type TestServer } from "../helpers/server";
import { useServer } from "../helpers/fixture";

let server: TestServer, key: string;
useServer({}, (s) => ({ server, key } = s));

const create = (body: unknown, k = key) => call(server, "POST", "/v1/destinations", { key: k, body });
const storedRow = async (id: string) => (await server.deps.db.select().from(destinations).where(eq(destinations.id, id)))[0]!;

function expectValidation(res: { status: number; body: any }, field?: string) {
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe("validation_error");
  expect(typeof res.body.error.message).toBe("string");
  if (field) expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
}

describe("POST /v1/destinations", () => {
  it("creates with the contract's defaults and a generated whsec_ secret that is never returned", async () => {
    const res = await create({ name: "Orders", url: "https://example.com/hook" });
    expect(res.status).toBe(201);
    const d = res.body.destination;
    expect(d.id).toMatch(/^dst_[0-9a-f]{32}$/);
    expect(d).toMatchObject({
      name: "Orders",
      url: "https://example.com/hook",
      http_method: "POST",
      headers: null,
      auth_type: "none",
      auth_config: null,
      timeout_ms: 30000,
      rate_limit_per_second: null,
      max_retries: 8,
      retry_strategy: "exponential",
      retry_interval_seconds: 30,
      status: "active",
    });
    expect(d.org_id).toMatch(/^[0-9a-f]{32}$/);
    expect(d.env_id).toMatch(/^[0-9a-f]{32}$/);
    expect(d.created_at).toBe(d.updated_at);
    expect(d).not.toHaveProperty("signing_secret");

    const row = await storedRow(d.id);
    expect(row.signingSecret).toMatch(/^enc:v2:/);
    const secret = await call(server, "GET", `/v1/destinations/${d.id}/secret`, { key });
    expect(secret.status).toBe(200);
    expect(secret.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(secret.body.secret.slice(6), "base64").length).toBe(32);
    expect(row.signingSecret).not.toContain(secret.body.secret.slice(6));
    // The generated secret is one the standardwebhooks library accepts.
    expect(() => new Webhook(secret.body.secret)).not.toThrow();
  });

  it("stores every field given, headers as a JSON string, auth config encrypted and masked", async () => {
    const signing = `whsec_${Buffer.alloc(24, 7).toString("base64")}`;
    const res = await create({
      name: "Full",
      url: "http://10.0.0.5:8080/in?x=1",
      http_method: "PUT",
      headers: { "X-Team": "ops", "x-trace": "on" },
      auth_type: "basic",
      auth_config: { username: "bob", password: "hunter2-secret" },
      timeout_ms: 5000,
      rate_limit_per_second: 20,
      max_retries: 3,
      retry_strategy: "linear",
      retry_interval_seconds: 10,
      signing_secret: signing,
      status: "paused",
    });
    expect(res.status).toBe(201);
    const d = res.body.destination;
    expect(d).toMatchObject({ http_method: "PUT", auth_type: "basic", timeout_ms: 5000, rate_limit_per_second: 20, max_retries: 3, retry_strategy: "linear", retry_interval_seconds: 10, status: "paused" });
    expect(JSON.parse(d.headers)).toEqual({ "X-Team": "ops", "x-trace": "on" });
    expect(JSON.parse(d.auth_config)).toEqual({ username: "bob" });
    expect(JSON.stringify(res.body)).not.toContain("hunter2-secret");

    const row = await storedRow(d.id);
    expect(row.authConfig).toMatch(/^enc:v2:/);
    expect(row.authConfig).not.toContain("hunter2");
    expect((await call(server, "GET", `/v1/destinations/${d.id}/secret`, { key })).body.secret).toBe(signing);
  });

  it("accepts each auth type with its config and answers 400 for configs that do not fit the type", async () => {
    const ok = [
      { auth_type: "bearer", auth_config: { token: "tok-123" }, shown: {} },
      { auth_type: "api_key", auth_config: { key: "X-Api-Key", api_key: "k-1" }, shown: { key: "X-Api-Key", to: "header" } },
      { auth_type: "api_key", auth_config: { key: "token", api_key: "k-2", to: "query" }, shown: { key: "token", to: "query" } },
    ];
    for (const c of ok) {
      const res = await create({ name: c.auth_type, url: "https://example.com", auth_type: c.auth_type, auth_config: c.auth_config });
      expect(res.status).toBe(201);
      expect(JSON.parse(res.body.destination.auth_config)).toEqual(c.shown);
    }
    const bad: [unknown, string][] = [
      [{ auth_type: "basic" }, "body.auth_config.username"],
      [{ auth_type: "basic", auth_config: { username: "u" } }, "body.auth_config.password"],
      [{ auth_type: "bearer", auth_config: { token: 5 } }, "body.auth_config.token"],
      [{ auth_type: "api_key", auth_config: { key: "bad header", api_key: "x" } }, "body.auth_config.key"],
      [{ auth_type: "api_key", auth_config: { key: "k", api_key: "x", to: "cookie" } }, "body.auth_config.to"],
      [{ auth_type: "none", auth_config: { token: "x" } }, "body.auth_config"],
      [{ auth_type: "digest" }, "body.auth_type"],
      [{ auth_type: "bearer", auth_config: "token" }, "body.auth_config"],
    ];
    for (const [extra, field] of bad) {
      expectValidation(await create({ name: "x", url: "https://example.com", ...(extra as object) }), field);
    }
  });

  it("refuses URLs that are not http(s), wrong types, bad enums and out-of-range numbers with 400", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ url: "ftp://example.com/x" }, "body.url"],
      [{ url: "file:///etc/passwd" }, "body.url"],
      [{ url: "javascript:alert(1)" }, "body.url"],
      [{ url: "not a url" }, "body.url"],
      [{ url: "https://user:pass@example.com" }, "body.url"],
      [{ url: 42 }, "body.url"],
      [{ name: "" }, "body.name"],
      [{ name: 7 }, "body.name"],
      [{ http_method: "TRACE" }, "body.http_method"],
      [{ retry_strategy: "fibonacci" }, "body.retry_strategy"],
      [{ status: "gone" }, "body.status"],
      [{ timeout_ms: "5000" }, "body.timeout_ms"],
      [{ timeout_ms: 1.5 }, "body.timeout_ms"],
      [{ timeout_ms: 0 }, "body.timeout_ms"],
      [{ max_retries: -1 }, "body.max_retries"],
      [{ rate_limit_per_second: 0 }, "body.rate_limit_per_second"],
      [{ retry_interval_seconds: 0 }, "body.retry_interval_seconds"],
      [{ headers: ["a"] }, "body.headers"],
      [{ headers: { "bad name": "x" } }, "body.headers.bad name"],
      [{ headers: { ok: 1 } }, "body.headers.ok"],
      [{ headers: { ok: "a\r\nb" } }, "body.headers.ok"],
      [{ headers: { "Content-Length": "5" } }, "body.headers.Content-Length"],
      [{ headers: { "transfer-encoding": "chunked" } }, "body.headers.transfer-encoding"],
      [{ signing_secret: "secret" }, "body.signing_secret"],
      [{ signing_secret: "whsec_short" }, "body.signing_secret"],
      [{ signing_secret: "whsec_!!!notbase64!!!" }, "body.signing_secret"],
    ];
    for (const [patch, field] of cases) {
      expectValidation(await create({ name: "x", url: "https://example.com", ...patch }), field);
    }
    expectValidation(await create({ name: "no url" }), "body.url");
    expectValidation(await create("{not json"));
  });

  it("accepts headers as the JSON string the API returns", async () => {
    const res = await create({ name: "h", url: "https://example.com", headers: '{"x-a":"1"}' });
    expect(res.status).toBe(201);
    expect(res.body.destination.headers).toBe('{"x-a":"1"}');
  });

  it("creates only in the caller's own scope: another org_id or env_id is 404", async () => {
    const me = await call(server, "GET", "/v1/auth/me", { key });
    const same = await create({ name: "s", url: "https://example.com", org_id: me.body.org_id, env_id: me.body.env_id });
    expect(same.status).toBe(201);
    const other = await create({ name: "s", url: "https://example.com", env_id: "f".repeat(32) });
    expect(other.status).toBe(404);
    expect(other.body.error.code).toBe("not_found");
  });

  it("needs authentication and a write-scoped key", async () => {
    expect((await call(server, "POST", "/v1/destinations", { body: { name: "x", url: "https://example.com" } })).status).toBe(401);
    const readKey = await server.apiKey("read");
    const res = await create({ name: "x", url: "https://example.com" }, readKey);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("forbidden");
  });
});

describe("GET /v1/destinations", () => {
  it("lists the caller's destinations newest first, filters by status, never with secrets", async () => {
    const a = (await create({ name: "list-a", url: "https://a.example", auth_type: "bearer", auth_config: { token: "tok-list-secret" } })).body.destination;
    const b = (await create({ name: "list-b", url: "https://b.example", status: "disabled" })).body.destination;
    const res = await call(server, "GET", "/v1/destinations", { key });
    expect(res.status).toBe(200);
    const ids = res.body.destinations.map((d: { id: string }) => d.id);
    expect(ids.indexOf(b.id)).toBeLessThan(ids.indexOf(a.id));
    expect(JSON.stringify(res.body)).not.toContain("tok-list-secret");
    expect(JSON.stringify(res.body)).not.toContain("whsec_");

    const disabled = await call(server, "GET", "/v1/destinations?status=disabled", { key });
    expect(disabled.body.destinations.every((d: { status: string }) => d.status === "disabled")).toBe(true);
    expect(disabled.body.destinations.map((d: { id: string }) => d.id)).toContain(b.id);
    expectValidation(await call(server, "GET", "/v1/destinations?status=nope", { key }), "query.status");
  });

  it("shows another organization none of them", async () => {
    const other = await otherOrgKey(server);
    const res = await call(server, "GET", "/v1/destinations", { key: other });
    expect(res).toMatchObject({ status: 200, body: { destinations: [] } });
  });
});

describe("GET /v1/destinations/{id}", () => {
  it("reads by id with or without the dst_ prefix", async () => {
    const d = (await create({ name: "get", url: "https://example.com" })).body.destination;
    for (const id of [d.id, d.id.slice(4)]) {
      const res = await call(server, "GET", `/v1/destinations/${id}`, { key });
      expect(res.status).toBe(200);
      expect(res.body.destination).toEqual(d);
    }
  });

  it("answers 404 not_found for unknown ids in any shape and for other organizations", async () => {
    const d = (await create({ name: "mine", url: "https://example.com" })).body.destination;
    const other = await otherOrgKey(server);
    for (const [id, k] of [
      ["dst_" + "0".repeat(32), key],
      ["0".repeat(32), key],
      ["nope", key],
      ["src_" + "0".repeat(32), key],
      ["dst_XYZ", key],
      [d.id, other],
    ] as const) {
      for (const suffix of ["", "/secret"]) {
        const res = await call(server, "GET", `/v1/destinations/${id}${suffix}`, { key: k });
        expect(res.status).toBe(404);
        expect(res.body.error.code).toBe("not_found");
      }
    }
  });
});

describe("PATCH /v1/destinations/{id}", () => {
  it("changes only the fields given and moves updated_at", async () => {
    const d = (await create({ name: "p", url: "https://example.com", headers: { a: "1" } })).body.destination;
    await Bun.sleep(5);
    const res = await call(server, "PATCH", `/v1/destinations/${d.id}`, { key, body: { name: "p2", timeout_ms: 1000, rate_limit_per_second: 5, status: "paused" } });
    expect(res.status).toBe(200);
    expect(res.body.destination).toMatchObject({ name: "p2", url: "https://example.com", timeout_ms: 1000, rate_limit_per_second: 5, status: "paused", headers: '{"a":"1"}', created_at: d.created_at });
    expect(res.body.destination.updated_at > d.updated_at).toBe(true);
    const again = await call(server, "GET", `/v1/destinations/${d.id}`, { key });
    expect(again.body.destination).toEqual(res.body.destination);

    const cleared = await call(server, "PATCH", `/v1/destinations/${d.id}`, { key, body: { headers: null, rate_limit_per_second: null } });
    expect(cleared.body.destination).toMatchObject({ headers: null, rate_limit_per_second: null });
  });

  it("keeps stored auth secrets when the same auth type is patched, needs a full config when the type changes", async () => {
    const d = (await create({ name: "auth", url: "https://example.com", auth_type: "basic", auth_config: { username: "bob", password: "pw-1" } })).body.destination;
    const renamed = await call(server, "PATCH", `/v1/destinations/${d.id}`, { key, body: { auth_config: { username: "alice" } } });
    expect(renamed.status).toBe(200);
    expect(JSON.parse(renamed.body.destination.auth_config)).toEqual({ username: "alice" });
    let loaded = await loadDestinationForDelivery(server.deps, d.id);
    expect(loaded!.auth).toEqual({ type: "basic", username: "alice", password: "pw-1" });

    expectValidation(await call(server, "PATCH", `/v1/destinations/${d.id}`, { key, body: { auth_type: "bearer" } }), "body.auth_config.token");
    const bearer = await call(server, "PATCH", `/v1/destinations/${d.id}`, { key, body: { auth_type: "bearer", auth_config: { token: "t-2" } } });
    expect(bearer.status).toBe(200);
    loaded = await loadDestinationForDelivery(server.deps, d.id);
    expect(loaded!.auth).toEqual({ type: "bearer", token: "t-2" });

    const none = await call(server, "PATCH", `/v1/destinations/${d.id}`, { key, body: { auth_type: "none" } });
    expect(none.body.destination).toMatchObject({ auth_type: "none", auth_config: null });
    expect((await storedRow(d.id)).authConfig).toBeNull();
  });

  it("replaces the signing secret and refuses bad values with 400", async () => {
    const d = (await create({ name: "rot", url: "https://example.com" })).body.destination;
    const next = `whsec_${Buffer.alloc(32, 9).toString("base64")}`;
    expect((await call(server, "PATCH", `/v1/destinations/${d.id}`, { key, body: { signing_secret: next } })).status).toBe(200);
    expect((await call(server, "GET", `/v1/destinations/${d.id}/secret`, { key })).body.secret).toBe(next);
    for (const [body, field] of [
      [{ url: "ftp://x" }, "body.url"],
      [{ name: null }, "body.name"],
      [{ http_method: "post" }, "body.http_method"],
      [{ max_retries: "3" }, "body.max_retries"],
      [{ signing_secret: "whsec_" }, "body.signing_secret"],
    ] as const) {
      expectValidation(await call(server, "PATCH", `/v1/destinations/${d.id}`, { key, body }), field);
    }
  });

  it("wakes the delivery workers when a paused destination becomes active", async () => {
    const d = (await create({ name: "pause", url: "https://example.com", status: "paused" })).body.destination;
    const seen: string[] = [];
    const off = server.deps.bus.subscribe((m) => seen.push(m.type));
    try {
      await call(server, "PATCH", `/v1/destinations/${d.id}`, { key, body: { name: "still paused" } });
      expect(seen).not.toContain("delivery.queued");
      await call(server, "PATCH", `/v1/destinations/${d.id}`, { key, body: { status: "active" } });
      expect(seen).toContain("delivery.queued");
    } finally {
      off();
    }
  });

  it("answers 404 for unknown ids and other organizations' destinations", async () => {
    const d = (await create({ name: "x", url: "https://example.com" })).body.destination;
    const other = await otherOrgKey(server);
    expect((await call(server, "PATCH", `/v1/destinations/${d.id}`, { key: other, body: { name: "stolen" } })).status).toBe(404);
    expect((await call(server, "PATCH", `/v1/destinations/dst_${"a".repeat(32)}`, { key, body: { name: "x" } })).status).toBe(404);
    expect((await call(server, "GET", `/v1/destinations/${d.id}`, { key })).body.destination.name).toBe("x");
  });
});

describe("DELETE /v1/destinations/{id}", () => {
  it("deletes once, then 404", async () => {
    const d = (await create({ name: "del", url: "https://example.com" })).body.destination;
    const other = await otherOrgKey(server);
    expect((await call(server, "DELETE", `/v1/destinations/${d.id}`, { key: other })).status).toBe(404);
    expect(await call(server, "DELETE", `/v1/destinations/${d.id.slice(4)}`, { key })).toMatchObject({ status: 200, body: { success: true } });
    expect((await call(server, "GET", `/v1/destinations/${d.id}`, { key })).status).toBe(404);
    expect((await call(server, "DELETE", `/v1/destinations/${d.id}`, { key })).status).toBe(404);
    expect(await loadDestinationForDelivery(server.deps, d.id)).toBeNull();
  });
});

describe("loadDestinationForDelivery and applyDestinationAuth", () => {
  it("gives the worker the decrypted secret, parsed headers and auth, ready to apply", async () => {
    const d = (
      await create({ name: "w", url: "https://example.com/in", http_method: "PATCH", headers: { "x-a": "1" }, auth_type: "api_key", auth_config: { key: "key", api_key: "k-9", to: "query" }, max_retries: 2 })
    ).body.destination;
    const secret = (await call(server, "GET", `/v1/destinations/${d.id}/secret`, { key })).body.secret;
    const loaded = (await loadDestinationForDelivery(server.deps, d.id))!;
    expect(loaded).toMatchObject({ id: d.id, url: "https://example.com/in", httpMethod: "PATCH", headers: { "x-a": "1" }, signingSecret: secret, maxRetries: 2, timeoutMs: 30000, retryStrategy: "exponential", rateLimitPerSecond: null, status: "active" });
    expect(applyDestinationAuth(loaded.url, loaded.headers, loaded.auth)).toEqual({ url: "https://example.com/in?key=k-9", headers: { "x-a": "1" } });
    expect(applyDestinationAuth("http://h/", {}, { type: "basic", username: "u", password: "p" }).headers.authorization).toBe(`Basic ${btoa("u:p")}`);
    expect(applyDestinationAuth("http://h/", {}, { type: "bearer", token: "t" }).headers.authorization).toBe("Bearer t");
    expect(applyDestinationAuth("http://h/", {}, { type: "api_key", key: "X-Key", api_key: "v", to: "header" }).headers).toEqual({ "x-key": "v" });
    expect(await loadDestinationForDelivery(server.deps, "dst_" + "1".repeat(32))).toBeNull();
  });
});

describe("GET /v1/openapi.json", () => {
  it("documents the destination operations", async () => {
    const key2 = key;
    const res = await call(server, "GET", "/v1/openapi.json", { key: key2 });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.paths)).toEqual(expect.arrayContaining(["/destinations", "/destinations/{id}", "/destinations/{id}/secret"]));
    expect(res.body.paths["/destinations"].post.requestBody.content["application/json"].schema.required).toEqual(expect.arrayContaining(["name", "url"]));
  });
});
