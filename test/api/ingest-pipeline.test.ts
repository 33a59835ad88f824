import { describe, expect, it } from "vitest";
import { ACCEPTED_STATUS, createSource, getEvent, hmacHex, ingest } from "../helpers/ingest";
import { call, type TestServer } from "../helpers/server";
import { eq } from "drizzle-orm";
import { events } from "../../src/db/schema";
import { scrapeMetrics } from "../helpers/metrics";
import { useServer } from "../helpers/fixture";

const MAX_BODY = 64 * 1024;
let server: TestServer, key: string;
useServer({ env: { HOOKRELAY_MAX_BODY_BYTES: String(MAX_BODY) } }, (s) => ({ server, key } = s));

const getSource = async (id: string) => (await call(server, "GET", `/v1/sources/${id}`, { key })).body.source;
const eventCount = (sourceId: string) => server.deps.db.$count(events, eq(events.sourceId, sourceId));

describe("ingest: success", () => {
  it("answers 200 {success, event_id} without authentication and stores the request as received", async () => {
    const s = await createSource(server, key, { name: "plain" });
    const body = '{"hello":  "world",\n "n": 1}';
    const res = await ingest(server, s.id, { body, path: "/extra/path?x=1&y=%20z", headers: { "x-custom": "a", "user-agent": "tester/1" } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, event_id: expect.stringMatching(/^evt_[0-9a-f]{32}$/) });
    const event = await getEvent(server, key, res.body.event_id);
    expect(event).toMatchObject({
      id: res.body.event_id,
      source_id: s.id,
      source_name: "plain",
      source_slug: s.slug,
      method: "POST",
      content_type: "application/json",
      source_ip: "127.0.0.1",
      payload_size: Buffer.byteLength(body),
      verification_status: "skipped",
      dedup_status: "skipped",
      status: expect.stringMatching(ACCEPTED_STATUS),
      body,
      body_encoding: "utf8",
      path: `/v1/ingest/${s.id}/extra/path`,
      query: "x=1&y=%20z",
      schema_errors: null,
      delivery_attempts: [],
    });
    expect(event.headers).toMatchObject({ "x-custom": "a", "user-agent": "tester/1", "content-type": "application/json" });
    const after = await getSource(s.id);
    expect(after.event_count).toBe(1);
    expect(after.last_event_at).toBe(event.received_at);
  });

  it("receives GET, PUT, PATCH and DELETE too, and accepts the id without its prefix", async () => {
    const s = await createSource(server, key, { name: "methods" });
    for (const method of ["GET", "PUT", "PATCH", "DELETE"]) {
      const res = await ingest(server, s.id, { method, body: method === "GET" ? undefined : "x" });
      expect(res.status, method).toBe(200);
      expect((await getEvent(server, key, res.body.event_id)).method).toBe(method);
    }
    expect((await ingest(server, s.id.slice(4), { body: "{}" })).status).toBe(200);
    expect((await getSource(s.id)).event_count).toBe(5);
  });

  it("answers HEAD (a reachability probe) without storing or counting anything", async () => {
    const s = await createSource(server, key, { name: "probe" });
    const head = await server.request(`/v1/ingest/${s.id}`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await eventCount(s.id)).toBe(0);
    expect(await getSource(s.id)).toMatchObject({ event_count: 0, request_count: 0 });
    expect((await server.request(`/v1/ingest/src_${"0".repeat(32)}`, { method: "HEAD" })).status).toBe(404);
  });

  it("keeps binary and non-UTF-8 bodies byte-exact (base64 in the detail), and UTF-8 with a BOM as is", async () => {
    const s = await createSource(server, key, { name: "binary" });
    const bytes = new Uint8Array(256).map((_, i) => i);
    const res = await ingest(server, s.id, { body: bytes, headers: { "content-type": "application/octet-stream" } });
    expect(res.status).toBe(200);
    const event = await getEvent(server, key, res.body.event_id);
    expect(event.body_encoding).toBe("base64");
    expect(new Uint8Array(Buffer.from(event.body, "base64"))).toEqual(bytes);
    const [{ body: stored }] = (await server.deps.db.select({ body: events.body }).from(events).where(eq(events.id, res.body.event_id))) as [{ body: Buffer }];
    expect(new Uint8Array(stored)).toEqual(bytes);

    const bom = "\uFEFF{\"é\":\"ü€😀\"}";
    const res2 = await ingest(server, s.id, { body: bom });
    const e2 = await getEvent(server, key, res2.body.event_id);
    expect(e2).toMatchObject({ body_encoding: "utf8", body: bom, payload_size: Buffer.byteLength(bom) });

    const empty = await ingest(server, s.id, { body: "" });
    expect((await getEvent(server, key, empty.body.event_id))).toMatchObject({ body: "", body_encoding: "utf8", payload_size: 0 });
  });

  it("answers 413 payload_too_large over the limit, with or without content-length, and stores nothing", async () => {
    const s = await createSource(server, key, { name: "big" });
    const exact = await ingest(server, s.id, { body: "x".repeat(MAX_BODY) });
    expect(exact.status).toBe(200);
    const over = await ingest(server, s.id, { body: "x".repeat(MAX_BODY + 1) });
    expect(over.status).toBe(413);
    expect(over.body.error.code).toBe("payload_too_large");
    const chunked = new ReadableStream({
      start(c) {
        for (let i = 0; i < 10; i++) c.enqueue(new Uint8Array(8 * 1024));
        c.close();
      },
    });
    const res = await ingest(server, s.id, { body: chunked });
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe("payload_too_large");
    expect(await eventCount(s.id)).toBe(1);
  });
});

describe("ingest: order of checks and statuses (docs/decisions.md D4)", () => {
  it("404 for an unknown or malformed source id", async () => {
    for (const id of ["src_" + "0".repeat(32), "nope", "evt_" + "1".repeat(32)]) {
      const res = await ingest(server, id, { body: "{}" });
      expect(res.status, id).toBe(404);
      expect(res.body.error.code).toBe("not_found");
    }
  });

  it("403 source_disabled before anything else, nothing stored", async () => {
    const s = await createSource(server, key, { name: "disabled", status: "disabled", ip_allowlist: ["10.0.0.0/8"], expires_at: "2000-01-01T00:00:00Z" });
    const res = await ingest(server, s.id, { body: "{}" });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("source_disabled");
    expect(await eventCount(s.id)).toBe(0);
  });

  it("410 source_expired after expires_at, before the IP filter", async () => {
    const s = await createSource(server, key, { name: "expired", is_ephemeral: true, expires_at: new Date(Date.now() - 1000).toISOString(), ip_allowlist: ["10.0.0.0/8"] });
    const res = await ingest(server, s.id, { body: "{}" });
    expect(res.status).toBe(410);
    expect(res.body.error.code).toBe("source_expired");
  });

  it("410 once request_limit requests were received, exactly, under concurrency", async () => {
    const s = await createSource(server, key, { name: "limited", is_ephemeral: true, request_limit: 5 });
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => ingest(server, s.id, { body: `{"i":${i}}` })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(5);
    expect(results.filter((r) => r.status === 410)).toHaveLength(15);
    expect(results.every((r) => r.status === 200 || r.body.error.code === "source_expired")).toBe(true);
    expect(await getSource(s.id)).toMatchObject({ event_count: 5, request_count: 5 });
  });

  it("403 ip_denied before the signature check, nothing stored", async () => {
    const s = await createSource(server, key, { name: "ip-first", template: "generic-hmac-sha256", verification_secret: "k", ip_denylist: ["127.0.0.0/8"] });
    const res = await ingest(server, s.id, { body: "{}", headers: { "x-signature": "bad" } });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("ip_denied");
    expect(await eventCount(s.id)).toBe(0);
    expect((await getSource(s.id)).request_count).toBe(0);
  });

  it("401 before the schema check: a bad signature with a bad body is a signature failure", async () => {
    const s = await createSource(server, key, { name: "sig-first", template: "generic-hmac-sha256", verification_secret: "k", schema_validation_enabled: true, json_schema: { type: "object" } });
    const res = await ingest(server, s.id, { body: "not json", headers: { "x-signature": "0".repeat(64) } });
    expect(res.status).toBe(401);
    expect((await getEvent(server, key, res.body.error.details.event_id)).schema_errors).toBeNull();
    const ok = await ingest(server, s.id, { body: "not json", headers: { "x-signature": hmacHex("sha256", "k", "not json") } });
    expect(ok.status).toBe(422);
  });
});

describe("ingest: IP filter", () => {
  it("a non-empty allowlist admits only its members; the denylist wins", async () => {
    const only10 = await createSource(server, key, { name: "allow-10", ip_allowlist: ["10.0.0.0/8"] });
    expect((await ingest(server, only10.id, { body: "{}" })).status).toBe(403);
    const allowLocal = await createSource(server, key, { name: "allow-local", ip_allowlist: ["127.0.0.1", "::1"] });
    expect((await ingest(server, allowLocal.id, { body: "{}" })).status).toBe(200);
    const both = await createSource(server, key, { name: "both", ip_allowlist: ["127.0.0.0/8"], ip_denylist: ["127.0.0.1/32"] });
    expect((await ingest(server, both.id, { body: "{}" })).status).toBe(403);
    const v6only = await createSource(server, key, { name: "v6", ip_allowlist: ["2001:db8::/32"] });
    expect((await ingest(server, v6only.id, { body: "{}" })).status).toBe(403);
    const mapped = await createSource(server, key, { name: "mapped", ip_allowlist: ["::ffff:127.0.0.0/104"] });
    expect((await ingest(server, mapped.id, { body: "{}" })).status).toBe(200);
  });

  it("ignores X-Forwarded-For from an untrusted peer", async () => {
    const s = await createSource(server, key, { name: "xff-untrusted", ip_allowlist: ["203.0.113.0/24"] });
    const res = await ingest(server, s.id, { body: "{}", headers: { "x-forwarded-for": "203.0.113.9" } });
    expect(res.status).toBe(403);
  });

  it("applies a PATCHed list at once", async () => {
    const s = await createSource(server, key, { name: "ip-patch" });
    expect((await ingest(server, s.id, { body: "{}" })).status).toBe(200);
    await call(server, "PATCH", `/v1/sources/${s.id}`, { key, body: { ip_denylist: ["127.0.0.1"] } });
    expect((await ingest(server, s.id, { body: "{}" })).status).toBe(403);
    await call(server, "PATCH", `/v1/sources/${s.id}`, { key, body: { ip_denylist: [] } });
    expect((await ingest(server, s.id, { body: "{}" })).status).toBe(200);
  });
});

describe("ingest: schema validation", () => {
  const schema = { type: "object", required: ["id", "amount"], properties: { id: { type: "string" }, amount: { type: "number", minimum: 0 }, email: { type: "string", format: "email" } } };

  it("reject: 422 schema_violation with the errors, stored as rejected", async () => {
    const s = await createSource(server, key, { name: "schema-reject", schema_validation_enabled: true, json_schema: schema, schema_action: "reject" });
    expect((await ingest(server, s.id, { body: '{"id":"a","amount":3,"email":"a@b.co"}' })).status).toBe(200);
    const res = await ingest(server, s.id, { body: '{"id":1,"amount":-1,"email":"nope"}' });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe("schema_violation");
    expect(res.body.error.details.errors.map((e: { path: string }) => e.path).sort()).toEqual(["/amount", "/email", "/id"]);
    const event = await getEvent(server, key, res.body.error.details.event_id);
    expect(event.status).toBe("rejected");
    expect(event.schema_errors).toHaveLength(3);
  });

  it("reject: bad JSON, binary and empty bodies are violations, never a 500", async () => {
    const s = await createSource(server, key, { name: "schema-badjson", schema_validation_enabled: true, json_schema: schema });
    for (const body of ['{"id":', "", "null", "[]", new Uint8Array([0xff, 0x00, 0x7b])]) {
      const res = await ingest(server, s.id, { body });
      expect(res.status, String(body)).toBe(422);
      expect(res.body.error.code).toBe("schema_violation");
    }
  });

  it("warn: accepted as pending with the errors kept on the event", async () => {
    const s = await createSource(server, key, { name: "schema-warn", schema_validation_enabled: true, json_schema: schema, schema_action: "warn" });
    const res = await ingest(server, s.id, { body: '{"id":"x"}' });
    expect(res.status).toBe(200);
    const event = await getEvent(server, key, res.body.event_id);
    expect(event.status).toMatch(ACCEPTED_STATUS);
    expect(event.schema_errors).toEqual([{ path: "", message: expect.stringContaining("amount") }]);
  });

  it("supports draft 2020-12 schemas", async () => {
    const s = await createSource(server, key, {
      name: "schema-2020",
      schema_validation_enabled: true,
      json_schema: { $schema: "https://json-schema.org/draft/2020-12/schema", type: "array", prefixItems: [{ type: "string" }] },
    });
    expect((await ingest(server, s.id, { body: '["a", 1]' })).status).toBe(200);
    expect((await ingest(server, s.id, { body: "[1]" })).status).toBe(422);
  });
});

describe("ingest: dedup", () => {
  it("body_hash: a repeated body within the window is a duplicate, stored as ignored", async () => {
    const s = await createSource(server, key, { name: "dedup-body", dedup_enabled: true });
    const first = await ingest(server, s.id, { body: '{"a":1}' });
    expect(first.body).toEqual({ success: true, event_id: expect.any(String) });
    const second = await ingest(server, s.id, { body: '{"a":1}' });
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ success: true, duplicate: true, event_id: expect.any(String), original_event_id: first.body.event_id });
    expect(second.body.event_id).not.toBe(first.body.event_id);
    expect(await getEvent(server, key, first.body.event_id)).toMatchObject({ dedup_status: "unique", status: expect.stringMatching(ACCEPTED_STATUS) });
    expect(await getEvent(server, key, second.body.event_id)).toMatchObject({ dedup_status: "duplicate", status: "ignored", duplicate_of: first.body.event_id });
    expect((await ingest(server, s.id, { body: '{"a":2}' })).body.duplicate).toBeUndefined();
    expect((await getSource(s.id)).event_count).toBe(3);
  });

  it("header: the template's delivery-id header is the key once dedup is turned on", async () => {
    const s = await createSource(server, key, { name: "dedup-gh", template: "github" });
    await call(server, "PATCH", `/v1/sources/${s.id}`, { key, body: { dedup_enabled: true } });
    const a = await ingest(server, s.id, { body: '{"n":1}', headers: { "x-github-delivery": "d-42" } });
    const b = await ingest(server, s.id, { body: '{"n":2}', headers: { "x-github-delivery": "d-42" } });
    const c = await ingest(server, s.id, { body: '{"n":1}', headers: { "x-github-delivery": "d-43" } });
    const none = await ingest(server, s.id, { body: '{"n":1}' });
    expect(a.body.duplicate).toBeUndefined();
    expect(b.body.duplicate).toBe(true);
    expect(c.body.duplicate).toBeUndefined();
    expect(none.body.duplicate).toBeUndefined();
    expect(await getEvent(server, key, none.body.event_id)).toMatchObject({ dedup_status: "unique", dedup_key: null });
  });

  it("field: a dot path into the JSON body", async () => {
    const s = await createSource(server, key, { name: "dedup-field", dedup_enabled: true, dedup_strategy: "field", dedup_field: "data.id" });
    const a = await ingest(server, s.id, { body: '{"data":{"id":"o-1"},"v":1}' });
    const b = await ingest(server, s.id, { body: '{"v":2,"data":{"id":"o-1"}}' });
    const c = await ingest(server, s.id, { body: '{"data":{"id":7}}' });
    const d = await ingest(server, s.id, { body: '{"data":{"id":7}}' });
    expect([a, b, c, d].map((r) => r.body.duplicate ?? false)).toEqual([false, true, false, true]);
  });

  it("concurrent identical deliveries: exactly one unique", async () => {
    const s = await createSource(server, key, { name: "dedup-race", dedup_enabled: true, dedup_strategy: "header", dedup_field: "idempotency-key" });
    const results = await Promise.all(Array.from({ length: 30 }, () => ingest(server, s.id, { body: "{}", headers: { "idempotency-key": "same" } })));
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(results.filter((r) => !r.body.duplicate)).toHaveLength(1);
  });

  it("outside the window the key is unique again", async () => {
    const s = await createSource(server, key, { name: "dedup-window", dedup_enabled: true, dedup_window_seconds: 1 });
    await ingest(server, s.id, { body: "w" });
    await Bun.sleep(1100);
    expect((await ingest(server, s.id, { body: "w" })).body.duplicate).toBeUndefined();
  });
});

describe("ingest: paused sources", () => {
  it("stores events as held while paused and releases them as pending when active again", async () => {
    const s = await createSource(server, key, { name: "pausable", status: "paused" });
    const seen: unknown[] = [];
    const unsubscribe = server.deps.bus.subscribe((m) => seen.push(m));
    const res = await ingest(server, s.id, { body: '{"held":true}' });
    expect(res.status).toBe(200);
    expect((await getEvent(server, key, res.body.event_id)).status).toBe("held");

    await call(server, "PATCH", `/v1/sources/${s.id}`, { key, body: { status: "active" } });
    // Released as pending (then routed by the delivery engine: no connection here, so ignored).
    const released = await getEvent(server, key, res.body.event_id);
    expect(released.status).toMatch(ACCEPTED_STATUS);
    unsubscribe();
    expect(seen).toContainEqual(expect.objectContaining({ type: "event.created", eventId: res.body.event_id, sourceId: s.id }));
    expect(seen).toContainEqual({ type: "source.updated", sourceId: s.id });
  });
});

describe("ingest: concurrency", () => {
  it("stores all of 1,000 concurrent requests to one source with an exact event_count", async () => {
    const s = await createSource(server, key, { name: "flood", template: "generic-hmac-sha256", verification_secret: "flood-key" });
    const results = await Promise.all(
      Array.from({ length: 1000 }, (_, i) => {
        const body = JSON.stringify({ i });
        return ingest(server, s.id, { body, headers: { "x-signature": hmacHex("sha256", "flood-key", body) } });
      }),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(1000);
    const ids = new Set(results.map((r) => r.body.event_id));
    expect(ids.size).toBe(1000);
    expect(await eventCount(s.id)).toBe(1000);
    expect(await getSource(s.id)).toMatchObject({ event_count: 1000, request_count: 1000 });
    const verified = await call(server, "GET", `/v1/events?source_id=${s.id}&verification_status=verified&limit=1`, { key });
    expect(verified.body.pagination.total).toBe(1000);
  });
});

describe("ingest: metrics", () => {
  it("counts outcomes and observes latency without source ids as labels", async () => {
    const s = await createSource(server, key, { name: "metrics" });
    await ingest(server, s.id, { body: "{}" });
    await ingest(server, "src_" + "9".repeat(32), { body: "{}" });
    const text = await scrapeMetrics(server);
    expect(text).toMatch(/hookrelay_ingest_requests_total\{outcome="accepted"\} \d+/);
    expect(text).toMatch(/hookrelay_ingest_requests_total\{outcome="not_found"\} \d+/);
    expect(text).toMatch(/hookrelay_ingest_duration_seconds_count \d+/);
    expect(text).not.toContain(s.id);
  });
});
