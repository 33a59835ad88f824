import { describe, expect, it } from "vitest";
import { manualClock } from "../../src/core/clock";
import { call, type TestServer } from "../helpers/server";
import type { Sink } from "../helpers/sink";
import { createDestination, listAttempts, pipeline, sendEvent, waitFor, waitForEventStatus } from "../helpers/delivery";
import { useServer } from "../helpers/fixture";

/** A destination's retry_schedule, run in milliseconds by moving an injected clock. */
const clock = manualClock(new Date());
let server: TestServer, key: string, sink: Sink;

useServer({ clock, sink: true }, (s) => ({ server, key, sink } = s));

const at = (path: string) => sink.requests.filter((r) => r.path === path);
const wake = () => server.deps.bus.publish({ type: "delivery.queued" });

/**
 * Shows that the worker has claimed what is due at the clock's present time:
 * an event sent now through a healthy pipeline is delivered, so a pump ran
 * after the clock moved (and whatever it did not send was not due).
 */
let probeSource: string | null = null;
async function pumped() {
  probeSource ??= (await pipeline(server, key, { url: `${sink.url}/probe` })).sourceId;
  const before = at("/probe").length;
  await sendEvent(server, probeSource, { probe: true });
  await waitFor(async () => at("/probe").length > before, { what: "the probe delivered" });
}

/** Waits for the event's n-th failed attempt; answers it. */
async function failure(eventId: string, n: number) {
  return waitFor(async () => {
    const rows = await listAttempts(server, key, { event_id: eventId, status: "failed" });
    return rows.length === n ? rows.sort((a, b) => b.attempt_number - a.attempt_number)[0] : null;
  }, { what: `failure ${n}` });
}

describe("a destination's retry_schedule", () => {
  it("retries at each step exactly (jitter adds at most 20%), never a second before, then ends in the DLQ", async () => {
    sink.respond = (req) => (req.path === "/steps" ? new Response("down", { status: 502 }) : new Response("ok"));
    const steps = [5, 60, 7200];
    const p = await pipeline(server, key, { url: `${sink.url}/steps`, destination: { retry_schedule: ["5s", "1m", "2h"], max_retries: 0 } });
    const eventId = await sendEvent(server, p.sourceId, { a: 1 });

    for (let n = 1; n <= steps.length; n++) {
      const failed = await failure(eventId, n);
      const delay = Date.parse(failed.next_retry_at) - clock.now().getTime();
      expect(delay).toBeGreaterThanOrEqual(steps[n - 1]! * 1000);
      expect(delay).toBeLessThanOrEqual(steps[n - 1]! * 1200);
      clock.advance(delay - 1000);
      await pumped();
      expect(at("/steps")).toHaveLength(n);
      clock.advance(1000);
      wake();
    }
    await waitForEventStatus(server, key, eventId, ["failed"]);
    expect(at("/steps")).toHaveLength(4);
    const [last] = await listAttempts(server, key, { event_id: eventId, is_dlq: "1" });
    expect(last).toMatchObject({ attempt_number: 4, error: "http_502", next_retry_at: null });
  });

  it("waits a Retry-After longer than its step", async () => {
    sink.respond = (req) => (req.path === "/busy" ? new Response("busy", { status: 503, headers: { "retry-after": "600" } }) : new Response("ok"));
    const p = await pipeline(server, key, { url: `${sink.url}/busy`, destination: { retry_schedule: ["5s", "5s"] } });
    const eventId = await sendEvent(server, p.sourceId, { b: 1 });
    const failed = await failure(eventId, 1);
    expect(Date.parse(failed.next_retry_at) - clock.now().getTime()).toBe(600_000);
    clock.advance(599_000);
    await pumped();
    expect(at("/busy")).toHaveLength(1);
    sink.respond = () => new Response("ok");
    clock.advance(1000);
    wake();
    await waitForEventStatus(server, key, eventId, ["delivered"]);
    expect(at("/busy")).toHaveLength(2);
  });
});

describe("a destination answering 410 Gone", () => {
  it("sends that delivery to the DLQ at once, while its other events still go", async () => {
    sink.respond = (req) => (req.path === "/gone" && req.body.includes('"gone":true') ? new Response("gone", { status: 410 }) : new Response("ok"));
    const p = await pipeline(server, key, { url: `${sink.url}/gone`, destination: { retry_schedule: ["5s"] } });
    const gone = await sendEvent(server, p.sourceId, { gone: true });
    await waitForEventStatus(server, key, gone, ["failed"]);
    const attempts = await listAttempts(server, key, { event_id: gone });
    expect(attempts).toEqual([expect.objectContaining({ attempt_number: 1, response_status: 410, error: "http_410", is_dlq: 1, next_retry_at: null })]);

    const fine = await sendEvent(server, p.sourceId, { gone: false });
    await waitForEventStatus(server, key, fine, ["delivered"]);
    expect((await call(server, "GET", `/v1/destinations/${p.destinationId}`, { key })).body.destination.status).toBe("active");
  });
});

describe("retry_schedule on the destinations API", () => {
  it("is shown as JSON text, set by PATCH, cleared by null, and recorded in the audit trail's changes", async () => {
    const id = await createDestination(server, key, { name: "Scheduled", url: `${sink.url}/api`, retry_schedule: ["5s", "5m", "30m", "2h", "5h", "10h", "10h"] });
    const got = await call(server, "GET", `/v1/destinations/${id}`, { key });
    expect(got.body.destination.retry_schedule).toBe('["5s","5m","30m","2h","5h","10h","10h"]');

    // What GET returned is accepted back.
    const same = await call(server, "PATCH", `/v1/destinations/${id}`, { key, body: { retry_schedule: got.body.destination.retry_schedule } });
    expect(same.status).toBe(200);
    const patched = await call(server, "PATCH", `/v1/destinations/${id}`, { key, body: { retry_schedule: ["1m"] } });
    expect(patched.body.destination.retry_schedule).toBe('["1m"]');
    const cleared = await call(server, "PATCH", `/v1/destinations/${id}`, { key, body: { retry_schedule: null } });
    expect(cleared.body.destination.retry_schedule).toBeNull();

    const trail = await call(server, "GET", `/v1/audit-log?resource_type=destination&resource_id=${id}`, { key });
    const changes = trail.body.entries.map((e: { changes: string | null }) => (e.changes ? JSON.parse(e.changes) : {}));
    expect(changes).toContainEqual(expect.objectContaining({ retry_schedule: { before: '["1m"]', after: null } }));
  });

  it("is documented in the OpenAPI document with Svix's default as its example", async () => {
    const doc = (await call(server, "GET", "/v1/openapi.json", { key })).body;
    const input = doc.paths["/destinations"].post.requestBody.content["application/json"].schema.properties.retry_schedule;
    expect(input).toMatchObject({ minItems: 1, maxItems: 20, examples: [["5s", "5m", "30m", "2h", "5h", "10h", "10h"]] });
  });

  it.each([
    ["an empty list", []],
    ["21 steps", Array(21).fill("1m")],
    ["a zero step", ["0s"]],
    ["a step that is no duration", ["abc"]],
    ["a step over 7 days", ["8d"]],
    ["a step too long to be one", ["5".repeat(40) + "s"]],
  ])("refuses %s with 400, on create and on PATCH", async (_, schedule) => {
    const created = await call(server, "POST", "/v1/destinations", { key, body: { name: "Bad", url: `${sink.url}/bad`, retry_schedule: schedule } });
    expect(created.status).toBe(400);
    expect(created.body.error).toMatchObject({ code: "validation_error" });
    expect(JSON.stringify(created.body)).toContain("retry_schedule");
    const id = await createDestination(server, key, { name: "Good", url: `${sink.url}/good` });
    const patched = await call(server, "PATCH", `/v1/destinations/${id}`, { key, body: { retry_schedule: schedule } });
    expect(patched.status).toBe(400);
  });
});
