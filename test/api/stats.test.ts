/**
 * GET /v1/stats over real traffic: events sent to ingest URLs, delivered by
 * the running worker to a local sink, on an injected clock so every event
 * lands in a known hour of the window.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { manualClock } from "../../src/core/clock";
import { createSourceId, listAttempts, pipeline, sendEvent, waitFor, waitForEventStatus, type Pipeline } from "../helpers/delivery";
import { otherOrgKey } from "../helpers/rows";
import { call, type TestServer } from "../helpers/server";
import type { Sink } from "../helpers/sink";
import { useServer } from "../helpers/fixture";

const HOUR = 3600_000;
/** "Now" for the assertions: 08:20, so the window is 2026-03-09T09:00 up to 2026-03-10T09:00. */
const NOW = Date.parse("2026-03-10T08:20:00.000Z");
const WINDOW_START = Date.parse("2026-03-09T09:00:00.000Z");
const SLOW_MS = 150;

const clock = manualClock(new Date(NOW - 26 * HOUR));
let server: TestServer, key: string, sink: Sink;
let ok: Pipeline, bad: Pipeline, slow: Pipeline, flaky: Pipeline, held: Pipeline;
let lonely: string;

const at = (iso: string) => clock.set(new Date(iso));
const stats = (k = key) => call(server, "GET", "/v1/stats", { key: k });

useServer({ clock, sink: true }, (s) => ({ server, key, sink } = s));
beforeAll(async () => {
  let flakyCalls = 0;
  sink.respond = async (req) => {
    if (req.path === "/slow") {
      await Bun.sleep((JSON.parse(req.body) as { sleep: number }).sleep);
      return new Response("ok");
    }
    if (req.path === "/bad") return new Response("no", { status: 400 });
    if (req.path === "/flaky" && flakyCalls++ === 0) return new Response("down", { status: 500 });
    return new Response("ok");
  };
  ok = await pipeline(server, key, { url: `${sink.url}/ok`, destination: { name: "Fast" } });
  bad = await pipeline(server, key, { url: `${sink.url}/bad`, destination: { name: "Broken", max_retries: 0 } });
  slow = await pipeline(server, key, { url: `${sink.url}/slow`, destination: { name: "Slow" } });
  flaky = await pipeline(server, key, { url: `${sink.url}/flaky`, destination: { name: "Flaky", retry_strategy: "linear", retry_interval_seconds: 60 } });
  // A paused destination: its delivery stays queued.
  held = await pipeline(server, key, { url: `${sink.url}/held`, destination: { name: "Held", status: "paused" } });
  lonely = await createSourceId(server, key); // no connection: its events are received, never delivered

  // Before the window: an event delivered (it and its attempt are left out), and one a millisecond too early.
  const old = await sendEvent(server, ok.sourceId, { old: true });
  await waitForEventStatus(server, key, old, ["delivered"]);
  at("2026-03-09T08:59:59.999Z");
  await sendEvent(server, lonely, { early: true });
  // The window's first instant.
  at("2026-03-09T09:00:00.000Z");
  await sendEvent(server, lonely, { first: true });

  at("2026-03-10T03:20:00.000Z");
  const early = [await sendEvent(server, ok.sourceId, { n: 1 }), await sendEvent(server, ok.sourceId, { n: 2 })];
  const failing = await sendEvent(server, bad.sourceId, { bad: true });
  await sendEvent(server, lonely, { n: 3 });
  for (const id of early) await waitForEventStatus(server, key, id, ["delivered"]);
  await waitForEventStatus(server, key, failing, ["failed"]);

  at("2026-03-10T07:10:00.000Z");
  // Three response times far enough apart that the median is not the average.
  const late = [];
  for (const sleep of [SLOW_MS, SLOW_MS + 10, SLOW_MS + 250]) late.push(await sendEvent(server, slow.sourceId, { sleep }));
  const retried = await sendEvent(server, flaky.sourceId, { n: 6 });
  await sendEvent(server, held.sourceId, { n: 7 });
  for (const id of late) await waitForEventStatus(server, key, id, ["delivered"]);
  // The flaky destination fails once; its retry is due a minute later on the injected clock.
  const [failure] = await waitFor(async () => {
    const rows = await listAttempts(server, key, { event_id: retried, status: "failed" });
    return rows.length === 1 ? rows : null;
  }, { what: "the flaky destination's first failure" });
  clock.set(new Date(failure.next_retry_at));
  server.deps.bus.publish({ type: "delivery.queued" });
  await waitForEventStatus(server, key, retried, ["delivered"]);
  await waitFor(async () => (await listAttempts(server, key, { destination_id: held.destinationId, status: "queued" })).length === 1, { what: "the held delivery to be queued" });
  await waitFor(async () => (await call(server, "GET", "/v1/events?status=pending&source_id=" + lonely, { key })).body.pagination.total === 0, { what: "routing" });

  clock.set(new Date(NOW));
});

describe("GET /v1/stats", () => {
  it("counts events per clock hour, oldest first, over exactly the 24 hours of the window", async () => {
    const { status, body } = await stats();
    expect(status).toBe(200);
    expect(body.window_hours).toBe(24);
    expect(body.buckets).toHaveLength(24);
    body.buckets.forEach((b: { start: string }, i: number) => expect(b.start).toBe(new Date(WINDOW_START + i * HOUR).toISOString()));

    const nonEmpty = Object.fromEntries(body.buckets.map((b: any, i: number) => [i, b]).filter(([, b]: [number, any]) => b.received > 0));
    expect(nonEmpty).toEqual({
      0: { start: "2026-03-09T09:00:00.000Z", received: 1, delivered: 0, failed: 0, deliveries_failed: 0 },
      // 2 delivered to Fast, 1 failed at Broken (now in the DLQ), 1 with no connection.
      18: { start: "2026-03-10T03:00:00.000Z", received: 4, delivered: 2, failed: 1, deliveries_failed: 1 },
      // 3 delivered to Slow, 1 delivered to Flaky on its retry, 1 still pending at the paused Held.
      22: { start: "2026-03-10T07:00:00.000Z", received: 5, delivered: 4, failed: 0, deliveries_failed: 1 },
    });
    expect(body.buckets[23]).toEqual({ start: "2026-03-10T08:00:00.000Z", received: 0, delivered: 0, failed: 0, deliveries_failed: 0 });
    expect(body.events_received_24h).toBe(10);
  });

  it("counts finished delivery attempts in the window, a failure followed by a retry included", async () => {
    const { body } = await stats();
    // Succeeded: Fast 2, Slow 3, Flaky's retry 1. Failed: Broken 1, Flaky's first try 1. Held's queued row is not finished.
    expect(body.deliveries_succeeded_24h).toBe(6);
    expect(body.deliveries_failed_24h).toBe(2);
    expect(body.success_rate).toBe(0.75);
  });

  it("counts failed attempts per hour, a failure its retry made good included, adding up to the window's total", async () => {
    const { body } = await stats();
    const failing = body.buckets.map((b: any) => b.deliveries_failed);
    // Broken's one attempt at 03:20; Flaky's first try at 07:10, although its event is delivered now.
    expect(failing[18]).toBe(1);
    expect(failing[22]).toBe(1);
    expect(body.buckets[22].failed).toBe(0);
    expect(failing.reduce((n: number, x: number) => n + x, 0)).toBe(body.deliveries_failed_24h);
  });

  it("reports the DLQ, the queue and how long its oldest due row has waited", async () => {
    const { body } = await stats();
    expect(body.dlq_size).toBe(1);
    expect(body.queue_depth).toBe(1);
    // Held's delivery was due at 07:10; it is 08:20.
    expect(body.oldest_pending_seconds).toBe(70 * 60);
    expect(body.counts).toEqual({ sources: 6, destinations: 5, connections: 5 });
  });

  it("ranks destinations by average duration with median, maximum and attempt count from the window only", async () => {
    const { body } = await stats();
    const list = body.slowest_destinations as any[];
    // Held never sent anything: no duration, not ranked.
    expect(list.map((d) => d.destination_name).sort()).toEqual(["Broken", "Fast", "Flaky", "Slow"]);
    expect(list[0]).toMatchObject({ destination_id: slow.destinationId, destination_name: "Slow", attempts: 3 });
    expect(list[0].p50_ms).toBeGreaterThanOrEqual(SLOW_MS + 10);
    expect(list[0].avg_ms).toBeGreaterThan(list[0].p50_ms + 50);
    expect(list[0].max_ms).toBeGreaterThanOrEqual(SLOW_MS + 250);
    const avgs = list.map((d) => d.avg_ms);
    expect(avgs).toEqual([...avgs].sort((x, y) => y - x));

    // The same numbers worked out from the attempts themselves (Fast's delivery before the window is left out):
    // count, average and maximum exactly.
    for (const d of list) {
      const durations = (await listAttempts(server, key, { destination_id: d.destination_id }))
        .filter((a) => Date.parse(a.created_at) >= WINDOW_START && a.duration_ms !== null)
        .map((a) => a.duration_ms as number)
        .sort((x, y) => x - y);
      const n = durations.length;
      const median = n % 2 ? durations[(n - 1) / 2]! : (durations[n / 2 - 1]! + durations[n / 2]!) / 2;
      expect(d, d.destination_name).toEqual({
        destination_id: d.destination_id,
        destination_name: d.destination_name,
        attempts: n,
        avg_ms: Math.round(durations.reduce((s, x) => s + x, 0) / n),
        p50_ms: expect.any(Number),
        max_ms: durations[n - 1],
      });
      // The median comes from the rollups' duration histogram: within one bucket, at most 19% off (docs/api.md, Stats).
      expect(Math.abs(d.p50_ms - median), d.destination_name).toBeLessThanOrEqual(Math.max(1, 0.19 * median));
    }
    expect(list.find((d) => d.destination_name === "Fast").attempts).toBe(2);
    expect(list.find((d) => d.destination_name === "Flaky").attempts).toBe(2);
  });

  it("moves with the clock: an hour later the first hour has left the window", async () => {
    clock.set(new Date(NOW + HOUR));
    try {
      const { body } = await stats();
      expect(body.buckets[0].start).toBe("2026-03-09T10:00:00.000Z");
      expect(body.events_received_24h).toBe(9);
      expect(body.oldest_pending_seconds).toBe(130 * 60);
    } finally {
      clock.set(new Date(NOW));
    }
  });

  it("sees only the caller's organization and environment", async () => {
    const { status, body } = await stats(await otherOrgKey(server));
    expect(status).toBe(200);
    expect(body.buckets).toHaveLength(24);
    expect(body.buckets.every((b: any) => b.received === 0 && b.delivered === 0 && b.failed === 0 && b.deliveries_failed === 0)).toBe(true);
    expect(body).toMatchObject({
      events_received_24h: 0,
      deliveries_succeeded_24h: 0,
      deliveries_failed_24h: 0,
      success_rate: null,
      dlq_size: 0,
      queue_depth: 0,
      oldest_pending_seconds: 0,
      slowest_destinations: [],
      counts: { sources: 0, destinations: 0, connections: 0 },
    });
  });

  // Last of the data tests: it adds a pipeline the counts above do not expect.
  it("counts a delivery in flight in the queue, and stops counting it once it is answered", async () => {
    let answer!: () => void;
    const answered = new Promise<void>((r) => (answer = r));
    const respond = sink.respond;
    sink.respond = async (req, index) => (req.path === "/hang" ? (await answered, new Response("ok")) : respond(req, index));
    try {
      const hanging = await pipeline(server, key, { url: `${sink.url}/hang`, destination: { name: "Hanging" } });
      const eventId = await sendEvent(server, hanging.sourceId, { n: 8 });
      await waitFor(async () => (await listAttempts(server, key, { event_id: eventId, status: "delivering" })).length === 1, { what: "the delivery to be in flight" });
      const during = (await stats()).body;
      // Held's queued row and this one in flight; Held's is still the oldest due.
      expect(during.queue_depth).toBe(2);
      expect(during.oldest_pending_seconds).toBe(70 * 60);
      answer();
      await waitForEventStatus(server, key, eventId, ["delivered"]);
      expect((await stats()).body.queue_depth).toBe(1);
    } finally {
      answer();
      sink.respond = respond;
    }
  });

  it("answers 401 with the error body without credentials, and is documented in the OpenAPI document", async () => {
    const { status, body } = await call(server, "GET", "/v1/stats");
    expect(status).toBe(401);
    expect(body.error.code).toBe("unauthorized");
    const bogus = await call(server, "GET", "/v1/stats", { key: "hr_not_a_key" });
    expect(bogus.status).toBe(401);
    expect(bogus.body.error.code).toBe("unauthorized");
    const doc = await call(server, "GET", "/v1/openapi.json");
    expect(doc.body.paths["/stats"].get.responses).toHaveProperty("200");
  });
});
