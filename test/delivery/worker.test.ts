import { count, isNotNull } from "drizzle-orm";
import { rmSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { listAttempts, pipeline, sendEvent, waitFor } from "../helpers/delivery";
import { call, startTestServer } from "../helpers/server";
import { startSink } from "../helpers/sink";
import { HELD_PER_SLOT } from "../../src/delivery/worker";
import { deliveryAttempts } from "../../src/db/schema";
import { dropStore, openStoreOf } from "../helpers/database";

/**
 * The worker claims ahead: rows it holds in its ready list are `delivering`
 * in the database without having been sent. A graceful stop must hand them
 * back, so nothing waits for a ten-minute lease after a restart.
 */
const sink = startSink();
afterAll(() => sink.close());

describe("a graceful stop with rows claimed ahead", () => {
  it("finishes the delivery in flight and hands every row it had not started back to the queue", async () => {
    const server = await startTestServer({ HOOKRELAY_DELIVERY_CONCURRENCY: "1" });
    const key = await server.apiKey();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    sink.respond = async () => {
      await held;
      return new Response("ok");
    };
    const { sourceId } = await pipeline(server, key, { url: `${sink.url}/hook` });
    const events = HELD_PER_SLOT + 3;
    for (let i = 0; i < events; i++) await sendEvent(server, sourceId, { n: i });
    await sink.waitFor(1);

    // A reader of its own: it still answers once the server has stopped.
    const reader = await openStoreOf(server.dataDir);
    const statuses = async () => Object.fromEntries((await reader.db.select({ status: deliveryAttempts.status, n: count() }).from(deliveryAttempts).groupBy(deliveryAttempts.status)).map((r) => [r.status, r.n]));
    // Once all are routed (one attempt each): one in flight and at least one claimed ahead (how many a
    // claim found queued depends on timing, up to what a slot holds), while the others wait queued.
    await waitFor(
      async () => {
        const { queued = 0, delivering = 0 } = await statuses();
        return queued + delivering === events && delivering >= 2 && delivering <= HELD_PER_SLOT;
      },
      { what: "one row in flight, more claimed ahead" },
    );

    const stopping = server.stop();
    release();
    await stopping;
    expect(await statuses()).toEqual({ success: 1, queued: events - 1 });
    expect(await reader.db.$count(deliveryAttempts, isNotNull(deliveryAttempts.leaseUntil))).toBe(0);
    expect(sink.requests).toHaveLength(1);
    await reader.close();
    rmSync(server.dataDir, { recursive: true, force: true });
    await dropStore(server.dataDir);
  });
});

describe("a destination resumed while the worker still holds it as paused", () => {
  it("delivers its rows at once instead of claiming and handing them back until the cached status expires", async () => {
    const server = await startTestServer({ HOOKRELAY_DELIVERY_CONCURRENCY: "1" });
    try {
      const key = await server.apiKey();
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      sink.respond = async (r) => {
        if (r.path === "/hold") await held;
        return new Response("ok");
      };
      // One slot: A (to another destination) holds it while B is claimed ahead.
      const a = await pipeline(server, key, { url: `${sink.url}/hold` });
      const b = await pipeline(server, key, { url: `${sink.url}/resumed` });
      await sendEvent(server, a.sourceId, { a: 1 });
      await sink.waitFor(1);
      const eventB = await sendEvent(server, b.sourceId, { b: 1 });
      const statusOfB = async () => (await listAttempts(server, key, { event_id: eventB }))[0]?.status;
      await waitFor(async () => (await statusOfB()) === "delivering", { what: "B claimed ahead" });

      // Paused after B was claimed: B's turn loads the destination as paused (the worker caches it) and hands B back.
      expect((await call(server, "PATCH", `/v1/destinations/${b.destinationId}`, { key, body: { status: "paused" } })).status).toBe(200);
      release();
      await waitFor(async () => (await statusOfB()) === "queued", { what: "B handed back" });

      const resumedAt = Date.now();
      expect((await call(server, "PATCH", `/v1/destinations/${b.destinationId}`, { key, body: { status: "active" } })).status).toBe(200);
      const [got] = await waitFor(async () => {
        const rows = sink.requests.filter((r) => r.path === "/resumed");
        return rows.length > 0 ? rows : null;
      }, { what: "B delivered" });
      // The cached `paused` lives for a second; a delivery that waited for it to expire comes that much later.
      expect(got!.receivedAt - resumedAt).toBeLessThan(500);
    } finally {
      await server.close();
    }
  });
});
