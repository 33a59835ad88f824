import { describe, expect, it } from "vitest";
import { itOnly } from "../helpers/database";
import { call, type TestServer } from "../helpers/server";
import { useServer } from "../helpers/fixture";

let server: TestServer, key: string;
useServer({ env: { HOOKRELAY_MAX_BODY_BYTES: String(64 * 1024) } }, (s) => ({ server, key } = s));

function expectErrorBody(body: any, code: string) {
  expect(body).toEqual({ error: expect.objectContaining({ code, message: expect.any(String) }) });
}

describe("bad input never gets a 500 and the server keeps serving", () => {
  it("answers 413 payload_too_large for a body over the limit, with or without content-length", async () => {
    const big = JSON.stringify({ email: "x".repeat(100 * 1024), password: "y" });
    const res = await call(server, "POST", "/v1/auth/login", { body: big });
    expect(res.status).toBe(413);
    expectErrorBody(res.body, "payload_too_large");

    const chunked = new ReadableStream({
      start(c) {
        for (let i = 0; i < 20; i++) c.enqueue(new TextEncoder().encode("x".repeat(8 * 1024)));
        c.close();
      },
    });
    const res2 = await server.request("/v1/auth/login", { method: "POST", body: chunked, headers: { "content-type": "application/json" } });
    expect(res2.status).toBe(413);
    expectErrorBody(await res2.json(), "payload_too_large");
  });

  it("answers 400 for malformed JSON, wrong types and a missing body", async () => {
    const headers = await server.session();
    for (const body of ["{", "[]", "null", '{"name": 5}', '{"name": ""}', '{"name":"x","scopes":"admin"}']) {
      const res = await call(server, "POST", "/v1/auth/api-keys", { headers, body });
      expect(res.status, body).toBe(400);
      expectErrorBody(res.body, "validation_error");
    }
    const noBody = await call(server, "POST", "/v1/auth/api-keys", { headers });
    expect(noBody.status).toBe(400);
  });

  it("answers 404 for unknown routes and ids in any shape, with the error body", async () => {
    for (const path of ["/v1/nothing-here", "/v1/auth/api-keys/%00", "/v1/" + "a".repeat(5000)]) {
      const res = await call(server, "GET", path, { key });
      expect(res.status, path).toBeGreaterThanOrEqual(400);
      expect(res.status, path).toBeLessThan(500);
      expect(res.body.error).toBeDefined();
    }
    expect((await server.request("/healthz")).status).toBe(200);
  });

  it("never leaks exception text: an unknown cookie is just unauthorized", async () => {
    const res = await call(server, "GET", "/v1/auth/me", { headers: { cookie: "hookrelay_session=" + "%".repeat(300) } });
    expect(res.status).toBe(401);
    expectErrorBody(res.body, "unauthorized");
  });
});

describe("NUL characters", () => {
  it("answers 404 for a path holding one (no id or slug has one), on both stores", async () => {
    for (const path of ["/v1/sources/%00", "/v1/topics/a%00b", "/v1/events/evt_%00"]) {
      const res = await call(server, "GET", path, { key });
      expect([path, res.status]).toEqual([path, 404]);
      expectErrorBody(res.body, "not_found");
    }
  });

  itOnly("postgres", "answers 400 validation_error for text the database cannot store", "SQLite's text holds a NUL character; PostgreSQL's refuses it (SQLSTATE 22…)", async () => {
    const res = await call(server, "POST", "/v1/sources", { key, body: { name: "a\u0000b" } });
    expect(res.status).toBe(400);
    expectErrorBody(res.body, "validation_error");
    expect((await call(server, "GET", "/v1/sources", { key })).status).toBe(200);
  });
});

describe("IP lists must be arrays", () => {
  it("answers 400 naming the field when ip_allowlist / ip_denylist is a string, on create and update", async () => {
    for (const body of [
      { name: "s", ip_allowlist: "10.0.0.0/8" },
      { name: "s", ip_denylist: "10.0.0.1,10.0.0.2" },
      { name: "s", ip_allowlist: '["10.0.0.0/8"]' },
    ]) {
      const res = await call(server, "POST", "/v1/sources", { key, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expectErrorBody(res.body, "validation_error");
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toEqual([`body.${Object.keys(body)[1]}`]);
    }
    const created = await call(server, "POST", "/v1/sources", { key, body: { name: "arrays", ip_allowlist: ["10.0.0.0/8"] } });
    expect(created.status).toBe(201);
    const patched = await call(server, "PATCH", `/v1/sources/${created.body.source.id}`, { key, body: { ip_denylist: "10.0.0.1" } });
    expect(patched.status).toBe(400);
    expect(patched.body.error.details[0].field).toBe("body.ip_denylist");
  });
});

describe("a request body the endpoint cannot read", () => {
  it("answers 415 unsupported_media_type for text, form and untyped bodies sent to JSON endpoints", async () => {
    const json = JSON.stringify({ name: "typed" });
    const cases: { path: string; headers: Record<string, string>; body: BodyInit }[] = [
      { path: "/v1/sources", headers: { "x-api-key": key, "content-type": "text/plain" }, body: json },
      { path: "/v1/sources", headers: { "x-api-key": key, "content-type": "application/x-www-form-urlencoded" }, body: "name=typed" },
      { path: "/v1/sources", headers: { "x-api-key": key }, body: new TextEncoder().encode(json) },
      { path: "/v1/auth/login", headers: { "content-type": "multipart/form-data; boundary=x" }, body: "--x--" },
    ];
    for (const c of cases) {
      const res = await server.request(c.path, { method: "POST", headers: c.headers, body: c.body });
      expect(res.status, `${c.path} ${c.headers["content-type"]}`).toBe(415);
      const body = await res.json();
      expectErrorBody(body, "unsupported_media_type");
      expect(body.error.message).toMatch(/application\/json/);
    }
    // Still JSON with a charset parameter, and still 400 (not 415) for a missing body.
    const withCharset = await server.request("/v1/sources", { method: "POST", headers: { "x-api-key": key, "content-type": "application/json; charset=utf-8" }, body: json });
    expect(withCharset.status).toBe(201);
    expect((await call(server, "POST", "/v1/sources", { key })).status).toBe(400);
  });

  it("documents 415 on every operation that reads a body", async () => {
    const doc = (await call(server, "GET", "/v1/openapi.json")).body;
    expect(doc.paths["/sources"].post.responses["415"]).toBeDefined();
    expect(doc.paths["/auth/login"].post.responses["415"]).toBeDefined();
    expect(doc.paths["/sources"].get.responses["415"]).toBeUndefined();
  });
});

describe("a bad cursor", () => {
  it("names the field in the details like every other validation error", async () => {
    const res = await call(server, "GET", "/v1/events?cursor=not-a-cursor", { key });
    expect(res.status).toBe(400);
    expectErrorBody(res.body, "validation_error");
    expect(res.body.error.details).toEqual([{ field: "query.cursor", message: expect.any(String) }]);
  });
});
