import { eq } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { call, type TestServer } from "../helpers/server";
import type { Sink } from "../helpers/sink";
import { listAttempts, pipeline, sendEvent, waitFor, waitForEventStatus } from "../helpers/delivery";
import { useServer } from "../helpers/fixture";
import { deliveryAttempts, events } from "../../src/db/schema";

let server: TestServer, key: string, sink: Sink;

useServer({ sink: true }, (s) => ({ server, key, sink } = s));

/** Requests the sink received for one event. */
const received = (eventId: string) => sink.requests.filter((r) => r.headers["x-hookrelay-event-id"] === eventId);

describe("a delivered event", () => {
  it("reaches the destination signed (Standard Webhooks), with forwarded and x-hookrelay headers, and becomes delivered", async () => {
    const secret = `whsec_${Buffer.from("0123456789abcdef0123456789abcdef").toString("base64")}`;
    const p = await pipeline(server, key, {
      url: `${sink.url}/hooks/orders?x=1`,
      destination: { signing_secret: secret, http_method: "PUT", headers: { "x-team": "payments" }, auth_type: "bearer", auth_config: { token: "t0ken" } },
    });
    const body = JSON.stringify({ type: "order.created", id: 42 });
    const eventId = await sendEvent(server, p.sourceId, body, { headers: { "x-github-delivery": "abc", connection: "keep-alive, x-drop-me", "x-drop-me": "1" } });

    await waitForEventStatus(server, key, eventId, ["delivered"]);
    const [req] = received(eventId);
    expect(req).toBeDefined();
    expect(req!.method).toBe("PUT");
    expect(req!.path).toBe("/hooks/orders?x=1");
    expect(req!.body).toBe(body);
    expect(req!.headers["x-github-delivery"]).toBe("abc");
    expect(req!.headers["x-drop-me"]).toBeUndefined();
    expect(req!.headers["x-team"]).toBe("payments");
    expect(req!.headers["authorization"]).toBe("Bearer t0ken");
    expect(req!.headers["content-type"]).toBe("application/json");
    expect(req!.headers["x-hookrelay-source-id"]).toBe(p.sourceId);
    expect(req!.headers["x-hookrelay-attempt"]).toBe("1");
    expect(req!.headers["webhook-id"]).toBe(eventId);
    // The receiver's side: the standardwebhooks library accepts the signature.
    expect(new Webhook(secret).verify(req!.body, req!.headers)).toEqual({ type: "order.created", id: 42 });

    const [attempt] = await listAttempts(server, key, { event_id: eventId });
    expect(attempt).toMatchObject({
      event_id: eventId,
      connection_id: p.connectionId,
      destination_id: p.destinationId,
      request_method: "PUT",
      request_url: `${sink.url}/hooks/orders?x=1`,
      request_body_size: body.length,
      response_status: 200,
      response_body: "ok",
      status: "success",
      error: null,
      attempt_number: 1,
      next_retry_at: null,
      is_dlq: 0,
      trigger_type: "initial",
      connection_name: "Route",
      destination_name: "Sink",
    });
    expect(attempt.id).toMatch(/^da_[0-9a-f]{32}$/);
    expect(attempt.duration_ms).toBeGreaterThanOrEqual(0);
    // Secrets never reach the attempt row.
    expect(JSON.parse(attempt.request_headers).authorization).toBe("[redacted]");

    const conn = await call(server, "GET", `/v1/connections/${p.connectionId}`, { key });
    expect(conn.body.connection.event_count).toBe(1);
    expect(conn.body.connection.last_event_at).not.toBeNull();
  });

  it("sends the JSONata-transformed body as JSON", async () => {
    const p = await pipeline(server, key, {
      url: `${sink.url}/t`,
      connection: { transform_expression: '{"kind": type, "via": $method, "hdr": $headers."x-tag"}' },
    });
    const eventId = await sendEvent(server, p.sourceId, { type: "ping" }, { headers: { "x-tag": "blue" } });
    await waitForEventStatus(server, key, eventId, ["delivered"]);
    const [req] = received(eventId);
    expect(JSON.parse(req!.body)).toEqual({ kind: "ping", via: "POST", hdr: "blue" });
    expect(req!.headers["content-type"]).toBe("application/json");
  });

  it("stores only the first 16 KiB of a large response body", async () => {
    const big = "x".repeat(100_000);
    const p = await pipeline(server, key, { url: `${sink.url}/big` });
    sink.respond = (r) => (r.path === "/big" ? new Response(big) : new Response("ok"));
    const eventId = await sendEvent(server, p.sourceId, { n: 1 });
    await waitForEventStatus(server, key, eventId, ["delivered"]);
    sink.respond = () => new Response("ok");
    const [attempt] = await listAttempts(server, key, { event_id: eventId });
    expect(attempt.response_body.length).toBe(16 * 1024);
  });

  it("stores the response headers, one string per name (several set-cookie joined)", async () => {
    const p = await pipeline(server, key, { url: `${sink.url}/cookies` });
    sink.respond = (r) => {
      if (r.path !== "/cookies") return new Response("ok");
      const headers = new Headers({ "x-receiver": "yes" });
      headers.append("set-cookie", "a=1");
      headers.append("set-cookie", "b=2");
      return new Response("ok", { headers });
    };
    const eventId = await sendEvent(server, p.sourceId, { n: 1 });
    await waitForEventStatus(server, key, eventId, ["delivered"]);
    sink.respond = () => new Response("ok");
    const [attempt] = await listAttempts(server, key, { event_id: eventId });
    expect(JSON.parse(attempt.response_headers)).toMatchObject({ "x-receiver": "yes", "set-cookie": "a=1, b=2" });
  });
});

describe("routing", () => {
  it("marks an event no enabled connection's filter matches as ignored, and fans out to each match", async () => {
    const sourceId = (await pipeline(server, key, { url: `${sink.url}/a`, connection: { filter_rules: [{ field: "body.type", operator: "eq", value: "order.created" }] } })).sourceId;
    const second = await call(server, "POST", "/v1/destinations", { key, body: { name: "B", url: `${sink.url}/b` } });
    await call(server, "POST", "/v1/connections", { key, body: { name: "b", source_id: sourceId, destination_id: second.body.destination.id, filter_rules: [{ field: "headers.x-kind", operator: "in", value: ["a", "b"] }] } });
    const disabled = await call(server, "POST", "/v1/destinations", { key, body: { name: "C", url: `${sink.url}/c` } });
    await call(server, "POST", "/v1/connections", { key, body: { name: "c", source_id: sourceId, destination_id: disabled.body.destination.id, enabled: false } });

    const ignored = await sendEvent(server, sourceId, { type: "order.deleted" });
    expect(await waitForEventStatus(server, key, ignored, ["ignored"])).toBe("ignored");
    expect(await listAttempts(server, key, { event_id: ignored })).toEqual([]);

    const both = await sendEvent(server, sourceId, { type: "order.created" }, { headers: { "x-kind": "b" } });
    await waitForEventStatus(server, key, both, ["delivered"]);
    expect(received(both).map((r) => r.path).sort()).toEqual(["/a", "/b"]);
  });

  it("routes an event in the same commit that stores it: by the 200, its first try is queued (filters read the request from memory)", async () => {
    const { sourceId, destinationId } = await pipeline(server, key, {
      url: `${sink.url}/same-commit`,
      destination: { status: "paused" },
      connection: { filter_rules: [{ field: "body.kind", operator: "eq", value: "routed" }] },
    });
    const db = server.deps.db;
    const routedNow = async (eventId: string) => {
      const [event] = await db.select({ status: events.status, routedAt: events.routedAt }).from(events).where(eq(events.id, eventId));
      return { status: event!.status, routed: event!.routedAt !== null, attempts: await db.$count(deliveryAttempts, eq(deliveryAttempts.eventId, eventId)) };
    };
    try {
      // Read at once, with no wait: nothing else could have routed them in between.
      expect(await routedNow(await sendEvent(server, sourceId, { kind: "routed" }))).toEqual({ status: "pending", routed: true, attempts: 1 });
      expect(await routedNow(await sendEvent(server, sourceId, { kind: "other" }))).toEqual({ status: "ignored", routed: true, attempts: 0 });
    } finally {
      await call(server, "DELETE", `/v1/destinations/${destinationId}`, { key });
    }
  });
});

describe("a paused destination", () => {
  it("keeps its deliveries queued without holding up other destinations, and delivers them when resumed", async () => {
    const paused = await pipeline(server, key, { url: `${sink.url}/paused`, destination: { status: "paused" } });
    const other = await pipeline(server, key, { url: `${sink.url}/other` });
    const backlog = await Promise.all(Array.from({ length: 20 }, (_, i) => sendEvent(server, paused.sourceId, { i })));
    const otherId = await sendEvent(server, other.sourceId, { other: true });
    await waitForEventStatus(server, key, otherId, ["delivered"]);
    expect(await listAttempts(server, key, { destination_id: paused.destinationId, status: "queued" })).toHaveLength(20);
    expect((await call(server, "PATCH", `/v1/destinations/${paused.destinationId}`, { key, body: { status: "active" } })).status).toBe(200);
    for (const id of backlog) await waitForEventStatus(server, key, id, ["delivered"]);
  });
});

describe("a paused source", () => {
  it("holds its events and delivers them when it becomes active again", async () => {
    const p = await pipeline(server, key, { url: `${sink.url}/held` });
    expect((await call(server, "PATCH", `/v1/sources/${p.sourceId}`, { key, body: { status: "paused" } })).status).toBe(200);
    const eventId = await sendEvent(server, p.sourceId, { held: true });
    expect(await waitForEventStatus(server, key, eventId, ["held"])).toBe("held");
    expect(received(eventId)).toHaveLength(0);
    expect((await call(server, "PATCH", `/v1/sources/${p.sourceId}`, { key, body: { status: "active" } })).status).toBe(200);
    await waitForEventStatus(server, key, eventId, ["delivered"]);
    expect(received(eventId)).toHaveLength(1);
  });
});

describe("failures that are not retried", () => {
  it("fails a transform error at once with error transform_error, into the DLQ, event failed", async () => {
    const p = await pipeline(server, key, { url: `${sink.url}/tx`, connection: { transform_expression: '$error("boom")' }, destination: { retry_interval_seconds: 1 } });
    const eventId = await sendEvent(server, p.sourceId, { a: 1 });
    await waitForEventStatus(server, key, eventId, ["failed"]);
    const attempts = await listAttempts(server, key, { event_id: eventId });
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({ status: "failed", error: "transform_error", is_dlq: 1, next_retry_at: null, response_status: null });
    expect(attempts[0].error_detail).toContain("boom");
    expect(attempts[0].dlq_at).not.toBeNull();
    expect(received(eventId)).toHaveLength(0);
  });

  it("refuses the cloud metadata address 169.254.169.254 with a clear error and sends nothing", async () => {
    const p = await pipeline(server, key, { url: "http://169.254.169.254/latest/meta-data/" });
    const eventId = await sendEvent(server, p.sourceId, { a: 1 });
    await waitForEventStatus(server, key, eventId, ["failed"]);
    const [attempt] = await listAttempts(server, key, { event_id: eventId });
    expect(attempt).toMatchObject({ status: "failed", error: "ssrf_blocked", is_dlq: 1, response_status: null });
    expect(attempt.error_detail).toMatch(/169\.254\.169\.254 is a link-local/);
  });
});

describe("retries", () => {
  it("retries a failing destination by its policy until the DLQ, then the event is failed", async () => {
    const p = await pipeline(server, key, { url: `${sink.url}/down`, destination: { retry_strategy: "linear", retry_interval_seconds: 1, max_retries: 2 } });
    sink.respond = (r) => (r.path === "/down" ? new Response("nope", { status: 500 }) : new Response("ok"));
    const eventId = await sendEvent(server, p.sourceId, { a: 1 });
    await waitForEventStatus(server, key, eventId, ["failed"], 15_000);
    sink.respond = () => new Response("ok");

    const attempts = (await listAttempts(server, key, { event_id: eventId })).reverse();
    expect(attempts.map((a) => [a.attempt_number, a.trigger_type, a.status, a.error, a.is_dlq])).toEqual([
      [1, "initial", "failed", "http_500", 0],
      [2, "retry", "failed", "http_500", 0],
      [3, "retry", "failed", "http_500", 1],
    ]);
    expect(attempts[0].response_body).toBe("nope");
    // The next try is queued when the failure is recorded, well before it is due one interval later.
    expect(Date.parse(attempts[1].created_at)).toBeLessThan(Date.parse(attempts[0].next_retry_at) - 500);
    expect(Date.parse(attempts[0].next_retry_at) - Date.parse(attempts[0].created_at)).toBeGreaterThanOrEqual(1000);
    expect(received(eventId).map((r) => r.headers["x-hookrelay-attempt"])).toEqual(["1", "2", "3"]);
    const times = received(eventId).map((r) => r.receivedAt);
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(900);
    // …and sent when it is due, not at the worker's next safety poll (5 s).
    expect(times[1]! - times[0]!).toBeLessThan(2500);
    expect(times[2]! - times[1]!).toBeLessThan(2500);

    const dlq = await listAttempts(server, key, { is_dlq: "1", destination_id: p.destinationId });
    expect(dlq).toHaveLength(1);
    expect(dlq[0].dlq_at).not.toBeNull();
  });

  it("honours Retry-After on a 429, then succeeds", async () => {
    const p = await pipeline(server, key, { url: `${sink.url}/busy`, destination: { retry_interval_seconds: 60 } });
    let calls = 0;
    sink.respond = (r) => (r.path === "/busy" && calls++ === 0 ? new Response("slow down", { status: 429, headers: { "retry-after": "1" } }) : new Response("ok"));
    const eventId = await sendEvent(server, p.sourceId, { a: 1 });
    await waitForEventStatus(server, key, eventId, ["delivered"], 10_000);
    sink.respond = () => new Response("ok");
    const attempts = (await listAttempts(server, key, { event_id: eventId })).reverse();
    expect(attempts.map((a) => a.status)).toEqual(["failed", "success"]);
    const delay = Date.parse(attempts[0].next_retry_at) - Date.parse(attempts[0].created_at);
    // 1 s from Retry-After, not the destination's 60 s interval.
    expect(delay).toBeGreaterThanOrEqual(1000);
    expect(delay).toBeLessThan(5000);
  });

  it("times out a hanging destination by its timeout_ms and retries", async () => {
    const p = await pipeline(server, key, { url: `${sink.url}/hang`, destination: { timeout_ms: 300, retry_strategy: "linear", retry_interval_seconds: 1, max_retries: 1 } });
    sink.respond = (r) => (r.path === "/hang" ? Bun.sleep(2000).then(() => new Response("late")) : new Response("ok"));
    const eventId = await sendEvent(server, p.sourceId, { a: 1 });
    await waitForEventStatus(server, key, eventId, ["failed"], 10_000);
    sink.respond = () => new Response("ok");
    const attempts = await listAttempts(server, key, { event_id: eventId });
    expect(attempts.map((a) => a.error)).toEqual(["timeout", "timeout"]);
    for (const a of attempts) expect(a.duration_ms).toBeLessThan(1500);
  });
});

describe("rate limit", () => {
  it("paces deliveries to rate_limit_per_second", async () => {
    const p = await pipeline(server, key, { url: `${sink.url}/paced`, destination: { rate_limit_per_second: 5 } });
    const ids = await Promise.all(Array.from({ length: 11 }, (_, i) => sendEvent(server, p.sourceId, { i })));
    await waitFor(async () => sink.requests.filter((r) => r.path === "/paced").length >= ids.length, { timeoutMs: 10_000, what: "paced deliveries" });
    const times = sink.requests.filter((r) => r.path === "/paced").map((r) => r.receivedAt);
    // 11 sends at 5/s start 200 ms apart: 2 s from first to last, never more than 5 in one second
    // (arrival times carry some scheduling noise, hence the margins).
    expect(times[times.length - 1]! - times[0]!).toBeGreaterThanOrEqual(1800);
    for (let i = 5; i < times.length; i++) expect(times[i]! - times[i - 5]!).toBeGreaterThanOrEqual(850);
  });
});
