/**
 * GET /metrics with HOOKRELAY_METRICS_TOKEN: only `Authorization: Bearer
 * <token>` is answered; anything else is a 401 with the contract's error
 * body (docs/operations.md, "Metrics"). Without the setting it stays open.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../helpers/server";

const TOKEN = "scrape-me-0123456789";
let guarded: TestServer;
let open: TestServer;
beforeAll(async () => {
  [guarded, open] = await Promise.all([startTestServer({ HOOKRELAY_METRICS_TOKEN: TOKEN }), startTestServer()]);
});
afterAll(async () => {
  await Promise.all([guarded?.close(), open?.close()]);
});

describe("HOOKRELAY_METRICS_TOKEN", () => {
  it("answers 401 unauthorized without the token, with a wrong one, or with an API key instead", async () => {
    const key = await guarded.apiKey();
    const attempts: Record<string, string>[] = [{}, { authorization: "Bearer wrong" }, { authorization: `Basic ${btoa(`x:${TOKEN}`)}` }, { authorization: `Bearer ${key}` }, { "x-api-key": key }];
    for (const headers of attempts) {
      const res = await call(guarded, "GET", "/metrics", { headers });
      expect(res.status, JSON.stringify(headers)).toBe(401);
      expect(res.body.error.code).toBe("unauthorized");
      expect(res.headers.get("www-authenticate")).toContain("Bearer");
      expect(JSON.stringify(res.body)).not.toContain("hookrelay_http_requests_total");
    }
  });

  it("answers the Prometheus text with the token", async () => {
    const res = await guarded.request("/metrics", { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/plain");
    expect(await res.text()).toContain("hookrelay_sse_clients");
  });

  it("leaves /metrics open when unset, and /healthz needs no token either way", async () => {
    expect((await open.request("/metrics")).status).toBe(200);
    expect((await guarded.request("/healthz")).status).toBe(200);
  });
});
