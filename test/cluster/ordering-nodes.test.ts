import { asc, eq } from "drizzle-orm";
import { afterAll, beforeAll, expect, it } from "vitest";
import { deliveryAttempts, events } from "../../src/db/schema";
import { describeOnly, TEST_SECRET_KEY } from "../helpers/database";
import { startTestServer, tempDir, type TestServer } from "../helpers/server";
import { pipeline, sendEvent, waitFor } from "../helpers/delivery";

/**
 * Ordered delivery on two nodes sharing one PostgreSQL database (docs/delivery.md,
 * "Ordered delivery"): both claim from the connection's backlog, yet each
 * key has at most one delivery at the receiver at a time, and each key's
 * events arrive in the order received (received_at, then id): for a sender
 * that waits for each answer, the order sent.
 */
describeOnly("postgres", "ordered delivery on two nodes", "several serve nodes need a shared PostgreSQL", () => {
  let a: TestServer;
  let b: TestServer;
  let key: string;
  const KEYS = 40;
  const PER_KEY = 5;

  beforeAll(async () => {
    a = await startTestServer({ HOOKRELAY_DELIVERY_CONCURRENCY: "4" });
    b = await startTestServer({ HOOKRELAY_DELIVERY_CONCURRENCY: "4", HOOKRELAY_DATABASE_URL: a.storeEnv.HOOKRELAY_DATABASE_URL!, HOOKRELAY_SECRET_KEY: TEST_SECRET_KEY }, tempDir());
    key = await a.apiKey();
  }, 30_000);
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it("one delivery per key at a time across both nodes, each key in the order received", async () => {
    const arrivals = new Map<string, string[]>();
    const inFlight = new Map<string, number>();
    let overlap = 0;
    const sink = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      async fetch(req) {
        const body = (await req.json()) as { k: string; n: number };
        const now = (inFlight.get(body.k) ?? 0) + 1;
        inFlight.set(body.k, now);
        if (now > 1) overlap++;
        await Bun.sleep(10 + Math.random() * 20);
        arrivals.set(body.k, [...(arrivals.get(body.k) ?? []), req.headers.get("x-hookrelay-event-id")!]);
        inFlight.set(body.k, inFlight.get(body.k)! - 1);
        return new Response("ok");
      },
    });
    try {
      const p = await pipeline(a, key, { url: `http://127.0.0.1:${sink.port}/o`, connection: { ordered: true, ordering_key: "body.k" } });
      // Every key's events are sent one after the other (each once the one before was answered), alternately to
      // each node; all keys at once. The order a key's sender saw its events accepted is the order they must arrive in.
      const sent = new Map<string, string[]>();
      await Promise.all(
        Array.from({ length: KEYS }, async (_, k) => {
          const ids: string[] = [];
          for (let n = 0; n < PER_KEY; n++) ids.push(await sendEvent((n + k) % 2 === 0 ? a : b, p.sourceId, { k: `key${k}`, n }));
          sent.set(`key${k}`, ids);
        }),
      );
      await waitFor(async () => [...arrivals.values()].reduce((s, l) => s + l.length, 0) >= KEYS * PER_KEY, { timeoutMs: 60_000, what: "every event delivered" });

      // The store's order, (received_at, id), agrees with the order sent.
      const stored = await a.deps.db
        .select({ id: events.id, body: events.body, receivedAt: events.receivedAt })
        .from(events)
        .where(eq(events.sourceId, p.sourceId))
        .orderBy(asc(events.receivedAt), asc(events.id));
      const expected = new Map<string, string[]>();
      for (const e of stored) {
        const k = (JSON.parse(Buffer.from(e.body as Uint8Array).toString()) as { k: string }).k;
        expected.set(k, [...(expected.get(k) ?? []), e.id]);
      }
      expect(expected).toEqual(sent);
      expect(overlap).toBe(0);
      for (let k = 0; k < KEYS; k++) expect(arrivals.get(`key${k}`)).toEqual(sent.get(`key${k}`));
      // Both nodes took part.
      const claimers = await a.deps.db.selectDistinct({ by: deliveryAttempts.claimedBy }).from(deliveryAttempts).where(eq(deliveryAttempts.connectionId, p.connectionId));
      expect(new Set(claimers.map((r) => r.by))).toEqual(new Set([a.deps.node!.id, b.deps.node!.id]));
    } finally {
      sink.stop(true);
    }
  }, 90_000);
});
