import { beforeAll, describe, expect, it } from "vitest";
import { cli, ensureBinary, modeEnvs, ok } from "../cli/helpers";
import { onPostgres } from "../helpers/database";
import { waitFor } from "../helpers/delivery";
import { useServer } from "../helpers/fixture";
import { createSource, getEvent, ingest } from "../helpers/ingest";
import { scrapeMetrics } from "../helpers/metrics";
import type { TestServer } from "../helpers/server";

/**
 * `/v1/ingest/*` is served ahead of the app's middleware chain
 * (src/api/ingestFastPath.ts): it answers as the app's route did, with the
 * same headers, limits and metrics, and keeps source settings in memory
 * without missing a change (src/ingest/sourceCache.ts).
 */
let server: TestServer, key: string;
useServer({ env: { HOOKRELAY_MAX_BODY_BYTES: "1024" } }, (s) => ({ server, key } = s));
beforeAll(ensureBinary, 120_000);

const counter = (metrics: string, prefix: string) => {
  const line = metrics.split("\n").find((l) => l.startsWith(prefix));
  return line ? Number(line.split(" ").pop()) : 0;
};

describe("an ingest request on the fast path", () => {
  it("carries the app's security headers and echoes a plain X-Request-Id", async () => {
    const source = await createSource(server, key, { name: "headers" });
    const res = await ingest(server, source.id, { body: '{"a":1}', headers: { "x-request-id": "req-123" } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, event_id: expect.stringMatching(/^evt_/) });
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(res.headers.get("x-request-id")).toBe("req-123");
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    const other = await ingest(server, source.id, { body: "{}", headers: { "x-request-id": "not plain!" } });
    expect(other.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("counts each request once in the request and ingest metrics", async () => {
    const source = await createSource(server, key, { name: "metrics" });
    const before = await scrapeMetrics(server);
    const http = 'hookrelay_http_requests_total{method="POST",route="/v1/ingest/:id",status="200"';
    const accepted = 'hookrelay_ingest_requests_total{outcome="accepted"';
    for (let i = 0; i < 3; i++) expect((await ingest(server, source.id, { body: "{}" })).status).toBe(200);
    const after = await scrapeMetrics(server);
    expect(counter(after, http) - counter(before, http)).toBe(3);
    expect(counter(after, accepted) - counter(before, accepted)).toBe(3);
  });

  it("refuses a body over the limit with the contract's 413, declared or not", async () => {
    const source = await createSource(server, key, { name: "limit" });
    const big = "x".repeat(2000);
    const declared = await ingest(server, source.id, { body: big });
    expect(declared.status).toBe(413);
    expect(declared.body.error.code).toBe("payload_too_large");
    // Sent chunked: no Content-Length to refuse it by; the bytes read are counted.
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode(big));
        c.close();
      },
    });
    const chunked = await ingest(server, source.id, { body: stream });
    expect(chunked.status).toBe(413);
    expect(chunked.body.error.code).toBe("payload_too_large");
    // A declared oversize body is refused before the source is looked up, as the app's body limit did.
    expect((await ingest(server, "src_nosuchsource", { body: big })).status).toBe(413);
    const events = await server.request(`/v1/events?source_id=${source.id}`, { headers: { "x-api-key": key } });
    expect(((await events.json()) as { events: unknown[] }).events).toEqual([]);
  });

  it("keeps a provider's extra path and query on the event, and hands an encoded path to the app", async () => {
    const source = await createSource(server, key, { name: "paths" });
    const res = await ingest(server, source.id, { body: "{}", path: "/github/push?delivery=7" });
    expect(res.status).toBe(200);
    const stored = await getEvent(server, key, res.body.event_id);
    expect(stored.path).toBe(`/v1/ingest/${source.id}/github/push`);
    expect(stored.query).toBe("delivery=7");
    // %5F is "_": the app decodes the id and answers the same source.
    const encoded = await server.request(`/v1/ingest/${source.id.replace("_", "%5F")}`, { method: "POST", body: "{}" });
    expect(encoded.status).toBe(200);
  });
});

describe("source settings held in memory", () => {
  it("an edit through the API is seen by the next request", async () => {
    const source = await createSource(server, key, { name: "api edit" });
    expect((await ingest(server, source.id, { body: "{}" })).status).toBe(200);
    const patched = await server.request(`/v1/sources/${source.id}`, { method: "PATCH", headers: { "x-api-key": key, "content-type": "application/json" }, body: JSON.stringify({ status: "disabled" }) });
    expect(patched.status).toBe(200);
    const res = await ingest(server, source.id, { body: "{}" });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("source_disabled");
  });

  it("an edit by a CLI in local mode (another process, no bus) is seen too", async () => {
    const source = await createSource(server, key, { name: "local edit" });
    expect((await ingest(server, source.id, { body: "{}" })).status).toBe(200);
    const { localEnv } = modeEnvs(server, key);
    ok(await cli(["sources", "update", source.id, "--status", "disabled", "--json"], { env: localEnv }));
    if (onPostgres) {
      // PostgreSQL: no change mark to read; the copy is at most a second old (src/ingest/sourceCache.ts).
      await waitFor(async () => (await ingest(server, source.id, { body: "{}" })).status === 403, { what: "the local edit to be seen" });
    } else {
      // SQLite: the other process's commit moves the database's change mark; the very next request sees it.
      const res = await ingest(server, source.id, { body: "{}" });
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe("source_disabled");
    }
  }, 60_000);
});
