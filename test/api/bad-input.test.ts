import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../helpers/server";

let server: TestServer;
let key: string;
beforeAll(async () => {
  server = await startTestServer({ HOOKRELAY_MAX_BODY_BYTES: String(64 * 1024) });
  key = await server.apiKey();
});
afterAll(() => server.close());

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
