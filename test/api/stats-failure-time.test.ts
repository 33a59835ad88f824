/**
 * GET /v1/stats counts a failed attempt in the hour it failed, not the hour it
 * was queued: a retry queued at 05:59:50 and made at 06:00:50 is a 06:00 failure.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { manualClock } from "../../src/core/clock";
import { listAttempts, pipeline, sendEvent, waitFor, waitForEventStatus } from "../helpers/delivery";
import { call, type TestServer } from "../helpers/server";
import type { Sink } from "../helpers/sink";
import { useServer } from "../helpers/fixture";

const clock = manualClock(new Date("2026-03-10T05:59:50.000Z"));
let server: TestServer, key: string, sink: Sink;

useServer({ clock, sink: true }, (s) => ({ server, key, sink } = s));
beforeAll(async () => {
  sink.respond = () => new Response("down", { status: 500 });
});

describe("GET /v1/stats failures by hour", () => {
  it("puts a retry's failure in the hour it was made, not the hour it was queued", async () => {
    const p = await pipeline(server, key, { url: `${sink.url}/down`, destination: { max_retries: 1, retry_strategy: "linear", retry_interval_seconds: 60 } });
    const eventId = await sendEvent(server, p.sourceId, { n: 1 });
    const [first] = await waitFor(async () => {
      const rows = await listAttempts(server, key, { event_id: eventId, status: "failed" });
      return rows.length === 1 && (await listAttempts(server, key, { event_id: eventId, status: "queued" })).length === 1 ? rows : null;
    }, { what: "the first failure and its queued retry" });
    expect(first.next_retry_at >= "2026-03-10T06:00:00").toBe(true);
    const [retry] = await listAttempts(server, key, { event_id: eventId, status: "queued" });
    expect(retry.created_at < "2026-03-10T06:00:00").toBe(true);

    clock.set(new Date(first.next_retry_at));
    server.deps.bus.publish({ type: "delivery.queued" });
    await waitForEventStatus(server, key, eventId, ["failed"]);

    clock.set(new Date("2026-03-10T08:20:00.000Z"));
    const { status, body } = await call(server, "GET", "/v1/stats", { key });
    expect(status).toBe(200);
    const byStart = Object.fromEntries(body.buckets.map((b: any) => [b.start, b.deliveries_failed]));
    expect(byStart["2026-03-10T05:00:00.000Z"]).toBe(1);
    expect(byStart["2026-03-10T06:00:00.000Z"]).toBe(1);
    expect(body.deliveries_failed_24h).toBe(2);
  });
});
