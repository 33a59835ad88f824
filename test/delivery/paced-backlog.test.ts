import { describe, expect, it } from "vitest";
import { manualClock } from "../../src/core/clock";
import { call, type TestServer } from "../helpers/server";
import type { Sink } from "../helpers/sink";
import { pipeline, sendEvent, waitFor, waitForEventStatus } from "../helpers/delivery";
import { useServer } from "../helpers/fixture";

/**
 * A rate-limited destination with a backlog (docs/delivery.md, "Rate
 * limits"): its rows go out as its slots come, however long each send takes
 * and however soon a slot passes. The safety poll is set to ten minutes, so
 * a row left to it would never arrive within the test.
 */
const POLL_MS = 600_000;

/** The receiver answers each request only when the test lets it: a send lasts past its destination's next slot. */
function heldResponses(sink: Sink) {
  const waiting: (() => void)[] = [];
  sink.respond = () => new Promise<Response>((resolve) => waiting.push(() => resolve(new Response("ok"))));
  return {
    release: () => waiting.splice(0).forEach((answer) => answer()),
  };
}

describe("a rate-limited destination's backlog", () => {
  // The injected clock stands still except when the test moves it to the next slot.
  const clock = manualClock(new Date());
  let server: TestServer, key: string, sink: Sink;
  useServer({ clock, sink: true, pollMs: POLL_MS }, (s) => ({ server, key, sink } = s));

  it("goes out slot by slot when each send lasts past the next slot, without waiting for the poll", async () => {
    const held = heldResponses(sink);
    const p = await pipeline(server, key, { url: `${sink.url}/paced`, destination: { rate_limit_per_second: 10 } });
    const setStatus = async (status: string) => expect((await call(server, "PATCH", `/v1/destinations/${p.destinationId}`, { key, body: { status } })).status).toBe(200);

    // A first delivery tells the worker the destination is rate limited: later claims take one row of it at a time.
    const first = await sendEvent(server, p.sourceId, { n: 1 });
    await waitFor(async () => sink.requests.length === 1, { what: "the first delivery" });
    held.release();
    await waitForEventStatus(server, key, first, ["delivered"]);

    // Two more wait together (the destination paused), so one claim finds both and takes one.
    clock.advance(100);
    await setStatus("paused");
    const rest = [await sendEvent(server, p.sourceId, { n: 2 }), await sendEvent(server, p.sourceId, { n: 3 })];
    await setStatus("active");
    await waitFor(async () => sink.requests.length === 2, { what: "the second delivery" });

    // The next slot comes while that send is still waiting for its answer; the answer comes after it.
    clock.advance(100);
    held.release();
    await waitFor(async () => sink.requests.length === 3, { what: "the third delivery, at its slot" });
    held.release();
    for (const id of rest) await waitForEventStatus(server, key, id, ["delivered"]);
    expect(sink.requests.map((r) => JSON.parse(r.body).n).sort()).toEqual([1, 2, 3]);
  });
});

describe("a send handed back for want of a slot", () => {
  let server: TestServer, key: string, sink: Sink;
  useServer({ sink: true, pollMs: POLL_MS }, (s) => ({ server, key, sink } = s));

  it("goes out at its destination's next slot, even one that passed before the worker went idle", async () => {
    // 1,000 a second: a slot a millisecond away has passed by the time the worker is done with a claim.
    const p = await pipeline(server, key, { url: `${sink.url}/fast`, destination: { rate_limit_per_second: 1000 } });
    const ids = await Promise.all(Array.from({ length: 5 }, (_, n) => sendEvent(server, p.sourceId, { n })));
    for (const id of ids) await waitForEventStatus(server, key, id, ["delivered"]);
    expect(sink.requests.map((r) => JSON.parse(r.body).n).sort()).toEqual([0, 1, 2, 3, 4]);
  });
});
