import { describe, expect, it } from "vitest";
import { manualClock } from "../../src/core/clock";
import { call, type TestServer } from "../helpers/server";
import type { Sink } from "../helpers/sink";
import { listAttempts, pipeline, sendEvent, waitFor, waitForEventStatus } from "../helpers/delivery";
import { useServer } from "../helpers/fixture";

/**
 * Deleting a connection cancels the retries it still has queued: nothing is
 * sent to its destination afterwards. Shown with an injected clock moved past
 * the retry time, and a second route on the same sink whose delivery (due
 * later than the cancelled retry) proves the worker has run past it.
 */
const clock = manualClock(new Date());
let server: TestServer, key: string, sink: Sink;

useServer({ clock, sink: true }, (s) => ({ server, key, sink } = s));

const wake = () => server.deps.bus.publish({ type: "delivery.queued" });
const to = (path: string) => sink.requests.filter((r) => r.path === path);

/** Moves the clock past every retry, then sends an event on a live route and waits until it arrives. */
async function runWorkerPast(sourceId: string, path: string) {
  clock.advance(24 * 3_600_000);
  wake();
  const before = to(path).length;
  await sendEvent(server, sourceId, { probe: true });
  await waitFor(async () => to(path).length > before, { what: "the probe delivered" });
}

describe("deleting a connection", () => {
  it("cancels its queued retry: the attempt ends failed with connection_deleted, never sent; the event ends failed", async () => {
    sink.respond = (req) => new Response(req.path === "/gone" ? "down" : "ok", { status: req.path === "/gone" ? 502 : 200 });
    const p = await pipeline(server, key, { url: `${sink.url}/gone`, destination: { max_retries: 3 } });
    const probe = await pipeline(server, key, { url: `${sink.url}/probe` });
    const eventId = await sendEvent(server, p.sourceId, { n: 1 });
    // One read of the event's attempts: two reads (queued, then failed) could see the first try still queued, then failed.
    const [queued] = await waitFor(async () => {
      const rows = await listAttempts(server, key, { event_id: eventId });
      const waiting = rows.filter((r: { status: string }) => r.status === "queued");
      return waiting.length === 1 && rows.filter((r: { status: string }) => r.status === "failed").length === 1 ? waiting : null;
    }, { what: "the first failure and its queued retry" });
    expect(queued).toMatchObject({ attempt_number: 2, trigger_type: "retry" });

    const del = await call(server, "DELETE", `/v1/connections/${p.connectionId}`, { key });
    expect(del.status).toBe(200);

    const attempts = (await listAttempts(server, key, { event_id: eventId })).sort((a, b) => a.attempt_number - b.attempt_number);
    expect(attempts).toHaveLength(2);
    expect(attempts[0]).toMatchObject({ attempt_number: 1, status: "failed", error: "http_502", next_retry_at: null, is_dlq: 0 });
    expect(attempts[1]).toMatchObject({ id: queued.id, attempt_number: 2, status: "failed", error: "connection_deleted", response_status: null, next_retry_at: null, is_dlq: 0 });
    expect(await waitForEventStatus(server, key, eventId, ["failed"])).toBe("failed");

    await runWorkerPast(probe.sourceId, "/probe");
    expect(to("/gone")).toHaveLength(1);
    expect(await listAttempts(server, key, { event_id: eventId, status: "queued" })).toEqual([]);
  });

  it("a delivery in flight when the connection goes finishes, and the retry it asks for is not sent", async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    sink.respond = async (req) => {
      if (req.path !== "/inflight") return new Response("ok");
      await held;
      return new Response("down", { status: 503 });
    };
    const p = await pipeline(server, key, { url: `${sink.url}/inflight`, destination: { max_retries: 3 } });
    const probe = await pipeline(server, key, { url: `${sink.url}/probe2` });
    const eventId = await sendEvent(server, p.sourceId, { n: 2 });
    await waitFor(async () => to("/inflight").length === 1, { what: "the delivery in flight" });

    expect((await call(server, "DELETE", `/v1/connections/${p.connectionId}`, { key })).status).toBe(200);
    release();
    // The worker records the 503 and, by the destination's policy, queues a retry it will not send.
    await waitFor(async () => (await listAttempts(server, key, { event_id: eventId, status: "failed" })).length >= 1, { what: "the 503 recorded" });

    await runWorkerPast(probe.sourceId, "/probe2");
    // One read until every attempt has ended: the worker may hold the retry it claimed (neither queued nor failed yet).
    const attempts = await waitFor(async () => {
      const rows = await listAttempts(server, key, { event_id: eventId });
      return rows.length === 2 && rows.every((r: { status: string }) => r.status === "failed") ? rows : null;
    }, { what: "both attempts ended" });
    expect(attempts.map((a) => a.error).sort()).toEqual(["connection_deleted", "http_503"]);
    expect(to("/inflight")).toHaveLength(1);
    // Nothing left to wait for: the event is failed, not pending for ever.
    expect(await waitForEventStatus(server, key, eventId, ["failed"])).toBe("failed");
  });
});
