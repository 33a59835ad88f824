import { describe, expect, it } from "vitest";
import { manualClock } from "../../src/core/clock";
import { call, type TestServer } from "../helpers/server";
import type { Sink } from "../helpers/sink";
import { listAttempts, pipeline, sendEvent, waitFor } from "../helpers/delivery";
import { useServer } from "../helpers/fixture";

/**
 * An attempt's times: created_at is when its row was queued, scheduled_at
 * when it was due, sent_at when the worker actually sent it. A retry queued
 * at one failure and sent long after (backoff, a busy worker) must show the
 * time it was sent. The clock is injected and stands still between moves,
 * so every time is exact.
 */
const start = new Date("2026-03-01T10:00:00.000Z");
const clock = manualClock(start);
let server: TestServer, key: string, sink: Sink;

useServer({ clock, sink: true }, (s) => ({ server, key, sink } = s));

describe("delivery attempt times", () => {
  it("records sent_at when the request was sent, not when the attempt was queued; a queued attempt has none", async () => {
    sink.respond = (_r, i) => (i === 0 ? new Response("down", { status: 503 }) : new Response("ok"));
    const p = await pipeline(server, key, { url: `${sink.url}/times`, destination: { max_retries: 1, retry_strategy: "linear", retry_interval_seconds: 60 } });
    const eventId = await sendEvent(server, p.sourceId, { n: 1 });

    const [first, queued] = await waitFor(async () => {
      const rows = (await listAttempts(server, key, { event_id: eventId })).sort((a, b) => a.attempt_number - b.attempt_number);
      return rows.length === 2 ? rows : null;
    }, { what: "the failure and its queued retry" });
    expect(first).toMatchObject({ status: "failed", created_at: start.toISOString(), scheduled_at: start.toISOString(), sent_at: start.toISOString() });
    const due = new Date(start.getTime() + 60_000).toISOString();
    expect(queued).toMatchObject({ status: "queued", trigger_type: "retry", created_at: start.toISOString(), scheduled_at: due, sent_at: null });

    const detail = (await call(server, "GET", `/v1/events/${eventId}`, { key })).body;
    expect(detail.delivery_attempts.map((a: any) => [a.attempted_at, a.scheduled_at])).toEqual([
      [start.toISOString(), start.toISOString()],
      [null, due],
    ]);

    // Sent an hour after it was due (the worker was down, say): that hour shows.
    clock.advance(60_000 + 3600_000);
    const sentAt = clock.now().toISOString();
    server.deps.bus.publish({ type: "delivery.queued" });
    const retried = await waitFor(async () => {
      const [row] = await listAttempts(server, key, { event_id: eventId, status: "success" });
      return row;
    }, { what: "the retry delivered" });
    expect(retried).toMatchObject({ created_at: start.toISOString(), scheduled_at: due, sent_at: sentAt });
    expect(sink.requests).toHaveLength(2);

    const after = (await call(server, "GET", `/v1/events/${eventId}`, { key })).body;
    expect(after.delivery_attempts.map((a: any) => a.attempted_at)).toEqual([start.toISOString(), sentAt]);
  });
});
