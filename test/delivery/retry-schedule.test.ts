import { describe, expect, it } from "vitest";
import { manualClock } from "../../src/core/clock";
import type { TestServer } from "../helpers/server";
import type { Sink } from "../helpers/sink";
import { listAttempts, pipeline, sendEvent, waitFor, waitForEventStatus } from "../helpers/delivery";
import { useServer } from "../helpers/fixture";

/** Retries with the default 30 s exponential schedule, run in milliseconds by moving an injected clock. */
const clock = manualClock(new Date());
let server: TestServer, key: string, sink: Sink;

useServer({ clock, sink: true }, (s) => ({ server, key, sink } = s));

describe("the exponential retry schedule", () => {
  it("doubles from 30 s with jitter, then ends in the DLQ after max_retries", async () => {
    sink.respond = () => new Response("down", { status: 502 });
    const p = await pipeline(server, key, { url: `${sink.url}/x`, destination: { max_retries: 3 } });
    const eventId = await sendEvent(server, p.sourceId, { a: 1 });

    const gaps: number[] = [];
    for (let n = 1; n <= 3; n++) {
      const failed = await waitFor(async () => {
        const rows = await listAttempts(server, key, { event_id: eventId, status: "failed" });
        // The newest by attempt_number: rows queued in one clock instant share created_at.
        return rows.length === n ? rows.sort((a, b) => b.attempt_number - a.attempt_number)[0] : null;
      }, { what: `failure ${n}` });
      // The clock stands still between advances: the failure was recorded at clock.now().
      const delay = Date.parse(failed.next_retry_at) - clock.now().getTime();
      gaps.push(delay);
      // Not due a moment before its time...
      clock.advance(delay - 1000);
      server.deps.bus.publish({ type: "delivery.queued" });
      await Bun.sleep(50);
      expect(sink.requests.length).toBe(n);
      // ...and delivered once it is.
      clock.advance(1000);
      server.deps.bus.publish({ type: "delivery.queued" });
    }
    await waitForEventStatus(server, key, eventId, ["failed"]);
    expect(sink.requests).toHaveLength(4);
    const bases = [30_000, 60_000, 120_000];
    gaps.forEach((g, i) => {
      expect(g).toBeGreaterThanOrEqual(bases[i]! * 0.8);
      expect(g).toBeLessThanOrEqual(bases[i]! * 1.2);
    });
    const [last] = await listAttempts(server, key, { event_id: eventId, is_dlq: "1" });
    expect(last).toMatchObject({ attempt_number: 4, error: "http_502", next_retry_at: null });
  });
});
