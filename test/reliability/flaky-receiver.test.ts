import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, type TestServer } from "../helpers/server";
import { startFlakySink, type FlakySink } from "../helpers/flakySink";
import { listAttempts, pipeline, sendEvent, waitFor } from "../helpers/delivery";
import { useServer } from "../helpers/fixture";

/**
 * Reliability (docs/decisions.md D6): a receiver that fails 30% of requests, hangs some
 * past the timeout and resets some connections. Every event must end
 * delivered or in the DLQ; none lost, none delivered to the wrong destination.
 */
let server: TestServer, key: string, sink: FlakySink;

useServer({ env: { HOOKRELAY_DELIVERY_CONCURRENCY: "16" } }, (s) => ({ server, key } = s));
beforeAll(async () => {
  sink = await startFlakySink({ seed: 20260101, error: 0.3, hang: 0.05, reset: 0.05, hangMs: 1500 });
});
afterAll(async () => {
  await sink.close();
});

describe("a flaky receiver", () => {
  it("ends every event delivered or in the DLQ, each at the destination it was meant for", async () => {
    const retry = { retry_strategy: "linear", retry_interval_seconds: 1, max_retries: 3, timeout_ms: 400 };
    const a = await pipeline(server, key, { url: `${sink.url}/a`, destination: retry });
    const b = await pipeline(server, key, { url: `${sink.url}/b`, destination: retry });
    const sent: { id: string; dest: "a" | "b" }[] = [];
    await Promise.all(
      Array.from({ length: 4 }, async (_, w) => {
        for (let i = 0; i < 30; i++) {
          const dest = (i + w) % 2 === 0 ? "a" : "b";
          const id = await sendEvent(server, dest === "a" ? a.sourceId : b.sourceId, { dest, n: w * 100 + i });
          sent.push({ id, dest });
        }
      }),
    );

    const statuses = await waitFor(
      async () => {
        const res = await call(server, "GET", "/v1/events?limit=100&status=pending", { key });
        return res.body.pagination.total === 0 ? true : null;
      },
      { timeoutMs: 20_000, what: "no event left pending" },
    );
    expect(statuses).toBe(true);

    const delivered = new Set<string>();
    const failed = new Set<string>();
    for (const status of ["delivered", "failed"] as const) {
      let cursor: string | null = null;
      do {
        const page: { status: number; body: any } = await call(server, "GET", `/v1/events?limit=100&status=${status}${cursor ? `&cursor=${cursor}` : ""}`, { key });
        for (const e of page.body.events) (status === "delivered" ? delivered : failed).add(e.id);
        cursor = page.body.pagination.next_cursor;
      } while (cursor);
    }
    // None lost: every event answered 200 ended one way or the other.
    for (const { id } of sent) expect(delivered.has(id) || failed.has(id), id).toBe(true);
    expect(delivered.size + failed.size).toBe(sent.length);
    expect(failed.size).toBeLessThan(sent.length / 4); // the flakiness is survivable, not fatal

    // Delivered events really got a 2xx, at the right destination.
    const byEvent = new Map<string, typeof sink.requests>();
    for (const r of sink.requests) {
      const id = String(r.headers["x-hookrelay-event-id"]);
      const list = byEvent.get(id) ?? [];
      list.push(r);
      byEvent.set(id, list);
      const body = JSON.parse(r.body) as { dest: string };
      expect(r.path, "sent to the wrong destination").toBe(`/${body.dest}`);
    }
    for (const { id } of sent) {
      const answers = (byEvent.get(id) ?? []).map((r) => r.answer);
      if (delivered.has(id)) expect(answers, id).toContain("ok");
      else expect(answers.length, id).toBe(4); // 1 + max_retries, then the DLQ
    }

    // The DLQ holds exactly the failed events, one row each; nothing is left outstanding.
    const dlq = [...(await listAttempts(server, key, { is_dlq: "1", destination_id: a.destinationId })), ...(await listAttempts(server, key, { is_dlq: "1", destination_id: b.destinationId }))];
    expect(new Set(dlq.map((d) => d.event_id))).toEqual(failed);
    expect(dlq).toHaveLength(failed.size);
    expect(await listAttempts(server, key, { status: "queued" })).toEqual([]);
    expect(await listAttempts(server, key, { status: "delivering" })).toEqual([]);
    expect(sink.requests.some((r) => r.answer === "reset")).toBe(true);
    expect(sink.requests.some((r) => r.answer === "hang")).toBe(true);
  });
});
