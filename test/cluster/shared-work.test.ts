import { and, eq, inArray } from "drizzle-orm";
import { afterAll, beforeAll, expect, it } from "vitest";
import { liveNodes } from "../../src/cluster/nodes";
import { NODE_TIMEOUT_MS } from "../../src/core/node";
import { HELD_PER_SLOT } from "../../src/delivery/worker";
import { flushCounters } from "../../src/db/pg/counters";
import { connections, deliveryAttempts, events, nodes, sources } from "../../src/db/schema";
import { iso } from "../../src/core/clock";
import { describeOnly, TEST_SECRET_KEY } from "../helpers/database";
import { call, startTestServer, tempDir, type TestServer } from "../helpers/server";
import { startSink, type Sink } from "../helpers/sink";
import { pipeline, sendEvent, waitFor } from "../helpers/delivery";
import { createSource, ingest } from "../helpers/ingest";
import { spawnServe } from "../ops/helpers";

/**
 * docs/scaling.md, "Shared work": two serve nodes in this process on one
 * PostgreSQL database share the delivery queue and hold de-duplication,
 * request limits, counters and rate limits together.
 */
describeOnly("postgres", "two nodes on one database", "several serve nodes need a shared PostgreSQL", () => {
  let a: TestServer;
  let b: TestServer;
  let key: string;
  let sink: Sink;
  /** Each survivor's delivery concurrency. */
  const CONCURRENCY = 4;

  beforeAll(async () => {
    a = await startTestServer({ HOOKRELAY_DELIVERY_CONCURRENCY: String(CONCURRENCY) });
    b = await startTestServer(
      { HOOKRELAY_DELIVERY_CONCURRENCY: String(CONCURRENCY), HOOKRELAY_DATABASE_URL: a.storeEnv.HOOKRELAY_DATABASE_URL!, HOOKRELAY_SECRET_KEY: TEST_SECRET_KEY },
      tempDir(),
    );
    key = await a.apiKey();
    sink = startSink();
  }, 30_000);
  afterAll(async () => {
    await b?.close();
    await a?.close();
    sink?.close();
  });

  const db = () => a.deps.db;
  const nodeIds = () => [a.deps.node!.id, b.deps.node!.id];
  /** The sink's requests for each event id. */
  const deliveriesByEvent = () => {
    const out = new Map<string, number>();
    for (const r of sink.requests) {
      const id = r.headers["x-hookrelay-event-id"]!;
      out.set(id, (out.get(id) ?? 0) + 1);
    }
    return out;
  };

  it("both nodes claim from one backlog and every event is delivered exactly once", async () => {
    // A slow receiver keeps a backlog, so both nodes' workers claim from it.
    sink.respond = async () => {
      await Bun.sleep(20);
      return new Response("ok");
    };
    const p = await pipeline(a, key, { url: `${sink.url}/shared` });
    const sent = await Promise.all(Array.from({ length: 120 }, (_, i) => sendEvent(i % 2 === 0 ? a : b, p.sourceId, { i })));

    await waitFor(async () => sent.every((id) => deliveriesByEvent().has(id)), { timeoutMs: 30_000, what: "every event delivered" });
    const counts = deliveriesByEvent();
    expect(sent.map((id) => counts.get(id))).toEqual(sent.map(() => 1));
    const rows = await db().select({ claimedBy: deliveryAttempts.claimedBy }).from(deliveryAttempts).where(eq(deliveryAttempts.destinationId, p.destinationId));
    expect(rows).toHaveLength(120);
    expect(new Set(rows.map((r) => r.claimedBy))).toEqual(new Set(nodeIds()));
    sink.respond = () => new Response("ok");
  }, 60_000);

  it("the claims of a node whose heartbeat is late go to a survivor; a live node's are left to it, also by a node starting up", async () => {
    const p = await pipeline(a, key, { url: `${sink.url}/orphans`, destination: { status: "paused" } });
    const sent = await Promise.all(Array.from({ length: 4 }, (_, i) => sendEvent(a, p.sourceId, { i })));
    const now = Date.now();
    const lease = iso(new Date(now + 10 * 60_000));
    // Two nodes that claimed these rows: one stopped heartbeating (a kill -9), one is alive (its heartbeat is fresh for the next 15 s).
    const dead = "node_dead" + now;
    const alive = "node_alive" + now;
    await db().insert(nodes).values([
      { id: dead, version: "test", hostname: "h", pid: 1, address: "", startedAt: iso(new Date(now - 60_000)), lastHeartbeatAt: iso(new Date(now - NODE_TIMEOUT_MS - 1000)), stoppedAt: null },
      { id: alive, version: "test", hostname: "h", pid: 2, address: "", startedAt: iso(new Date(now)), lastHeartbeatAt: iso(new Date(now)), stoppedAt: null },
    ]);
    const rows = await db().select({ id: deliveryAttempts.id, eventId: deliveryAttempts.eventId }).from(deliveryAttempts).where(eq(deliveryAttempts.destinationId, p.destinationId));
    const byEvent = new Map(rows.map((r) => [r.eventId, r.id]));
    const deadRows = sent.slice(0, 2).map((e) => byEvent.get(e)!);
    const aliveRows = sent.slice(2).map((e) => byEvent.get(e)!);
    await db().update(deliveryAttempts).set({ status: "delivering", leaseUntil: lease, claimedBy: dead }).where(inArray(deliveryAttempts.id, deadRows));
    await db().update(deliveryAttempts).set({ status: "delivering", leaseUntil: lease, claimedBy: alive }).where(inArray(deliveryAttempts.id, aliveRows));
    const aliveClaims = () =>
      db().select({ status: deliveryAttempts.status, claimedBy: deliveryAttempts.claimedBy, leaseUntil: deliveryAttempts.leaseUntil }).from(deliveryAttempts).where(inArray(deliveryAttempts.id, aliveRows));
    const untouched = aliveRows.map(() => ({ status: "delivering", claimedBy: alive, leaseUntil: lease }));

    try {
      await call(a, "PATCH", `/v1/destinations/${p.destinationId}`, { key, body: { status: "active" } });
      // The survivors' reaper (every 3 s) hands the dead node's rows back; one of them delivers each once.
      await waitFor(async () => sent.slice(0, 2).every((id) => deliveriesByEvent().has(id)), { timeoutMs: 15_000, what: "the dead node's claims delivered" });
      expect(sent.slice(0, 2).map((id) => deliveriesByEvent().get(id))).toEqual([1, 1]);
      // The same pass saw the live node's claims and left them.
      expect(await aliveClaims()).toEqual(untouched);

      // A third node starting up releases no live node's claims either.
      const c = await startTestServer({ HOOKRELAY_DATABASE_URL: a.storeEnv.HOOKRELAY_DATABASE_URL!, HOOKRELAY_SECRET_KEY: TEST_SECRET_KEY }, tempDir());
      await c.close();
      expect(await aliveClaims()).toEqual(untouched);
      expect(sent.slice(2).some((id) => deliveriesByEvent().has(id))).toBe(false);
    } finally {
      await db().update(deliveryAttempts).set({ status: "queued", leaseUntil: null, claimedBy: null }).where(inArray(deliveryAttempts.id, aliveRows));
      await db().delete(nodes).where(inArray(nodes.id, [dead, alive]));
    }
  }, 60_000);

  it("a node killed mid-delivery (kill -9) has its claims delivered by a survivor once its heartbeat is late", async () => {
    const hanging = startSink();
    let hang = true;
    hanging.respond = async () => {
      while (hang) await Bun.sleep(20);
      return new Response("ok");
    };
    let x: Awaited<ReturnType<typeof spawnServe>> | undefined;
    try {
      // The survivors are filled first, so only the doomed node can claim what comes next. A worker claims
      // while fewer than `concurrency` rows wait ready behind its sending slots (src/delivery/worker.ts); with
      // its four requests hanging and at least four more ready, it claims nothing more. A claim on PostgreSQL
      // is fair between destinations, so how many each takes at once varies: wait for at least that many.
      const full = CONCURRENCY * HELD_PER_SLOT;
      const blocker = await pipeline(a, key, { url: `${hanging.url}/block`, destination: { status: "paused" } });
      await Promise.all(Array.from({ length: 2 * full }, (_, i) => sendEvent(i % 2 === 0 ? a : b, blocker.sourceId, { i })));
      await call(a, "PATCH", `/v1/destinations/${blocker.destinationId}`, { key, body: { status: "active" } });
      await waitFor(
        async () => {
          const rows = await db().select({ by: deliveryAttempts.claimedBy }).from(deliveryAttempts).where(and(eq(deliveryAttempts.destinationId, blocker.destinationId), eq(deliveryAttempts.status, "delivering")));
          return nodeIds().every((id) => rows.filter((r) => r.by === id).length >= 2 * CONCURRENCY);
        },
        { timeoutMs: 20_000, what: "both survivors holding all the rows they may" },
      );

      // A third node in a process of its own, so it can die for real.
      x = await spawnServe(tempDir(), { env: { HOOKRELAY_DATABASE_URL: a.storeEnv.HOOKRELAY_DATABASE_URL!, HOOKRELAY_SECRET_KEY: TEST_SECRET_KEY } });
      const xId = (await liveNodes(db(), new Date())).map((n) => n.id).find((id) => !nodeIds().includes(id))!;
      expect(xId).toBeTruthy();
      const p = await pipeline(a, key, { url: `${hanging.url}/doomed`, destination: { status: "paused" } });
      const sent = await Promise.all(Array.from({ length: 6 }, (_, i) => sendEvent(a, p.sourceId, { i })));
      await call(a, "PATCH", `/v1/destinations/${p.destinationId}`, { key, body: { status: "active" } });
      // The doomed node claims every row and has each at the receiver when it dies.
      await waitFor(
        async () => {
          const rows = await db().select({ eventId: deliveryAttempts.eventId, status: deliveryAttempts.status, by: deliveryAttempts.claimedBy }).from(deliveryAttempts).where(eq(deliveryAttempts.destinationId, p.destinationId));
          const arrived = new Set(hanging.requests.map((r) => r.headers["x-hookrelay-event-id"]));
          return rows.length === 6 && rows.every((r) => r.status === "delivering" && r.by === xId && arrived.has(r.eventId));
        },
        { timeoutMs: 20_000, what: "the doomed node's deliveries in flight" },
      );

      process.kill(x.pid, "SIGKILL");
      await x.exited;
      hang = false;
      // Its rows stay `delivering` until its heartbeat is NODE_TIMEOUT_MS late; then a survivor sends each again.
      const settled = await waitFor(
        async () => {
          const rows = await db().select({ status: deliveryAttempts.status, by: deliveryAttempts.claimedBy }).from(deliveryAttempts).where(eq(deliveryAttempts.destinationId, p.destinationId));
          return rows.length === 6 && rows.every((r) => r.status === "success") && rows;
        },
        { timeoutMs: NODE_TIMEOUT_MS + 15_000, intervalMs: 200, what: "the killed node's deliveries done by a survivor" },
      );
      expect(settled.every((r) => nodeIds().includes(r.by!))).toBe(true);
      const byEvent = new Map<string, number>();
      for (const r of hanging.requests.filter((r) => r.path === "/doomed")) byEvent.set(r.headers["x-hookrelay-event-id"]!, (byEvent.get(r.headers["x-hookrelay-event-id"]!) ?? 0) + 1);
      // In flight when it died: sent once by it, once more by a survivor.
      expect(sent.map((id) => byEvent.get(id))).toEqual(sent.map(() => 2));
    } finally {
      hang = false;
      if (x?.pid && (await Promise.race([x.exited.then(() => true), Bun.sleep(0).then(() => false)])) === false) process.kill(x.pid, "SIGKILL");
      hanging.close();
    }
  }, 60_000);

  it("the same provider retry sent to both nodes at once is stored as one unique event", async () => {
    const s = await createSource(a, key, { name: "dedup-across-nodes", dedup_enabled: true, dedup_strategy: "header", dedup_field: "idempotency-key" });
    const keys = Array.from({ length: 20 }, (_, i) => `retry-${i}`);
    const results = await Promise.all(keys.flatMap((k) => [a, b, a, b].map((node) => ingest(node, s.id, { body: "{}", headers: { "idempotency-key": k } }))));
    expect(results.every((r) => r.status === 200)).toBe(true);
    const stored = await db().select({ key: events.dedupKey, status: events.dedupStatus }).from(events).where(eq(events.sourceId, s.id));
    expect(stored).toHaveLength(80);
    for (const k of keys) expect(stored.filter((e) => e.key === k && e.status === "unique")).toHaveLength(1);
  }, 30_000);

  it("an ephemeral source's request_limit holds exactly across nodes", async () => {
    const s = await createSource(a, key, { name: "limited-across-nodes", is_ephemeral: true, request_limit: 10 });
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => ingest(i % 2 ? a : b, s.id, { body: `{"i":${i}}` })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(10);
    const [row] = await db().select({ requestCount: sources.requestCount }).from(sources).where(eq(sources.id, s.id));
    expect(row!.requestCount).toBe(10);
  }, 30_000);

  it("counters on sources and connections are right once both nodes have flushed", async () => {
    const p = await pipeline(a, key, { url: `${sink.url}/counted` });
    const sent = await Promise.all(Array.from({ length: 50 }, (_, i) => sendEvent(i % 2 ? a : b, p.sourceId, { i })));
    await waitFor(async () => sent.every((id) => deliveriesByEvent().has(id)), { timeoutMs: 20_000, what: "all delivered" });
    await flushCounters(a.deps.db);
    await flushCounters(b.deps.db);
    const [source] = await db().select().from(sources).where(eq(sources.id, p.sourceId));
    const [connection] = await db().select().from(connections).where(eq(connections.id, p.connectionId));
    const [last] = await db().select({ at: events.receivedAt }).from(events).where(eq(events.sourceId, p.sourceId)).orderBy(events.receivedAt).limit(50);
    expect(source).toMatchObject({ eventCount: 50, requestCount: 50 });
    expect(connection).toMatchObject({ eventCount: 50 });
    expect(source!.lastEventAt! >= last!.at).toBe(true);
    // Either node's API shows the same numbers.
    for (const node of [a, b]) expect((await call(node, "GET", `/v1/sources/${p.sourceId}`, { key })).body.source).toMatchObject({ event_count: 50, request_count: 50 });
  }, 40_000);

  it("a destination's rate limit holds across both nodes: at most 10% over, and both nodes send their share", async () => {
    // Each node sends limit / live nodes: wait until both have counted the other (one heartbeat interval).
    await waitFor(async () => (await db().select().from(nodes).where(and(inArray(nodes.id, nodeIds())))).length === 2, { what: "both nodes registered" });
    // Only these two live (a node killed by an earlier test drops out once its heartbeat is late).
    await waitFor(async () => (await liveNodes(db(), new Date())).length === 2, { timeoutMs: NODE_TIMEOUT_MS + 5_000, what: "two live nodes" });
    await Bun.sleep(5_500); // the pacer's share is refreshed every heartbeat interval (5 s); nothing to observe from outside
    const rate = 10;
    const p = await pipeline(a, key, { url: `${sink.url}/paced`, destination: { rate_limit_per_second: rate } });
    const before = sink.requests.length;
    await Promise.all(Array.from({ length: 120 }, (_, i) => sendEvent(i % 2 ? a : b, p.sourceId, { i })));
    // The window starts once every event is stored: before, a busy machine may still be ingesting,
    // and a pacer with nothing due would look slow.
    const stored = Date.now();
    const paced = () => sink.requests.slice(before).filter((r) => r.path === "/paced" && r.receivedAt >= stored);
    await waitFor(async () => paced().length >= 42, { timeoutMs: 30_000, what: "42 paced deliveries after the last event was stored" });
    const times = paced().map((r) => r.receivedAt);
    const start = times[0]!;
    const window = 4000;
    const inWindow = times.filter((t) => t >= start && t < start + window).length;
    // At most limit × seconds + 10% (a window may hold one extra start at its edge). The floor
    // is looser: on a busy machine a node may send late, never early; what it must show is that
    // both nodes send (one node alone would send its half share, 50%).
    expect(inWindow).toBeLessThanOrEqual(Math.ceil(rate * (window / 1000) * 1.1) + 1);
    expect(inWindow).toBeGreaterThanOrEqual(Math.floor(rate * (window / 1000) * 0.75));
  }, 60_000);

  it("an application's rate limit holds across both nodes: at most 10% over, and both nodes send their share", async () => {
    // Both nodes have counted each other by now (the test above waited a heartbeat interval).
    const rate = 10;
    const app = await call(a, "POST", "/v1/applications", { key, body: { name: "Paced app", uid: "paced-app", rate_limit: rate } });
    expect(app.status).toBe(201);
    const endpoint = await call(a, "POST", `/v1/applications/${app.body.application.id}/endpoints`, { key, body: { url: `${sink.url}/app-paced` } });
    expect(endpoint.status).toBe(201);
    const before = sink.requests.length;
    const sent = await Promise.all(
      Array.from({ length: 120 }, (_, i) => call(i % 2 ? a : b, "POST", `/v1/applications/${app.body.application.id}/messages`, { key, body: { event_type: "order.paid", payload: { i } } })),
    );
    expect(sent.every((r) => r.status === 202)).toBe(true);
    // As above: the window starts once every message is stored.
    const stored = Date.now();
    const paced = () => sink.requests.slice(before).filter((r) => r.path === "/app-paced" && r.receivedAt >= stored);
    await waitFor(async () => paced().length >= 42, { timeoutMs: 30_000, what: "42 paced deliveries after the last message was stored" });
    const times = paced().map((r) => r.receivedAt);
    const start = times[0]!;
    const window = 4000;
    const inWindow = times.filter((t) => t >= start && t < start + window).length;
    expect(inWindow).toBeLessThanOrEqual(Math.ceil(rate * (window / 1000) * 1.1) + 1);
    expect(inWindow).toBeGreaterThanOrEqual(Math.floor(rate * (window / 1000) * 0.75));
  }, 60_000);
});
