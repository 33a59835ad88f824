import { SQL } from "bun";
import { afterAll, beforeAll, expect, it } from "vitest";
import { parseSse } from "../../cli/sse";
import { collections, events } from "../../src/db/schema";
import { POSTGRES_READ_HORIZON_MS } from "../../src/db/horizon";
import type { BusMessage } from "../../src/core/bus";
import { describeOnly } from "../helpers/database";
import { createSourceId, pipeline, sendEvent, waitFor } from "../helpers/delivery";
import { createCollection, records, waitBuilt } from "../catalog/helpers";
import { scopeOf, type TestScope } from "../helpers/rows";
import { call, startTestServer, tempDir, type TestServer } from "../helpers/server";
import { startSink, type Sink } from "../helpers/sink";
import { newId } from "../../src/contracts/ids";
import { eq } from "drizzle-orm";

/**
 * Nodes hear each other (docs/scaling.md, "Nodes hear each other"): two serve nodes on one PostgreSQL
 * database. What one node publishes after its commit reaches the other
 * through LISTEN/NOTIFY: SSE streams, workers and caches on every node.
 */
describeOnly("postgres", "nodes on one database hear each other", "LISTEN/NOTIFY between serve nodes", () => {
  let a: TestServer;
  let b: TestServer;
  let key: string;
  let url: string;
  let sink: Sink;
  let admin: SQL;

  beforeAll(async () => {
    a = await startTestServer();
    url = a.storeEnv.HOOKRELAY_DATABASE_URL!;
    // A second node: its own data dir, the first one's database.
    b = await startTestServer({ HOOKRELAY_DATABASE_URL: url, HOOKRELAY_SECRET_KEY: a.storeEnv.HOOKRELAY_SECRET_KEY! }, tempDir());
    key = await a.apiKey();
    sink = startSink();
    admin = new SQL({ url, max: 1 });
  });
  afterAll(async () => {
    sink?.close();
    await admin?.close();
    await b?.close();
    await a?.close();
  });

  /** The messages that reach `server`'s bus from now on. */
  const heard = (server: TestServer) => {
    const got: BusMessage[] = [];
    const stop = server.deps.bus.subscribe((m) => got.push(m));
    return { got, stop };
  };

  /** An SSE stream of `server`'s events, opened (its first write, `: connected`, came). */
  const openStream = async (server: TestServer) => {
    const controller = new AbortController();
    const res = await server.request("/v1/events/stream", { headers: { "x-api-key": key }, signal: controller.signal });
    expect(res.status).toBe(200);
    const messages = parseSse(res.body as unknown as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]();
    return {
      async next(timeoutMs = 5000) {
        let timer: ReturnType<typeof setTimeout> | undefined;
        const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error("no SSE message in time")), timeoutMs)));
        try {
          return await Promise.race([messages.next(), late]);
        } finally {
          clearTimeout(timer);
        }
      },
      close: () => controller.abort(),
    };
  };

  it("an SSE stream on node A sees an event ingested through node B", async () => {
    const source = await createSourceId(a, key);
    const stream = await openStream(a);
    // The stream's first message is only sent once it listens; a retry line follows the comment.
    const sent = await sendEvent(b, source, { hello: "from b" });
    const msg = await stream.next();
    expect(msg.done).toBe(false);
    expect(msg.value!.id).toBe(sent);
    expect(JSON.parse(msg.value!.data)).toMatchObject({ id: sent, source_id: source });
    stream.close();
  });

  it("a delivery queued through node B's API wakes node A's worker", async () => {
    const p = await pipeline(b, key, { url: sink.url });
    const onA = heard(a);
    const before = sink.requests.length;
    await sendEvent(b, p.sourceId, { n: 1 });
    await waitFor(async () => onA.got.some((m) => m.type === "delivery.queued"), { timeoutMs: 1000, what: "delivery.queued on node A" });
    onA.stop();
    await sink.waitFor(before + 1, 2000);
  });

  it("node A's own messages do not come back to it, and a turn's messages travel together", async () => {
    const onA = heard(a);
    const onB = heard(b);
    for (let i = 0; i < 300; i++) a.deps.bus.publish({ type: "collection.updated", collectionId: `col_${i}` });
    a.deps.bus.publish({ type: "delivery.queued" });
    await waitFor(async () => onB.got.some((m) => m.type === "delivery.queued"), { timeoutMs: 2000, what: "the batch on node B" });
    expect(onB.got.filter((m) => m.type === "collection.updated")).toHaveLength(300);
    // Published once on A (in process), never a second time from PostgreSQL.
    expect(onA.got.filter((m) => m.type === "delivery.queued")).toHaveLength(1);
    onA.stop();
    onB.stop();
  });

  it("a source edited on node B is seen by node A's ingest as soon as A hears of it", async () => {
    const source = await createSourceId(a, key);
    await sendEvent(a, source, { before: true });
    const onA = heard(a);
    const edited = await call(b, "PATCH", `/v1/sources/${source}`, { key, body: { ip_allowlist: ["10.9.9.9"] } });
    expect(edited.status).toBe(200);
    // A keeps a copy of the source for up to a second (src/ingest/sourceCache.ts); the notification drops it.
    await waitFor(async () => onA.got.some((m) => m.type === "source.updated" && m.sourceId === source), { timeoutMs: 1000, what: "source.updated on node A" });
    onA.stop();
    const res = await a.request(`/v1/ingest/${source}`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(res.status).toBe(403);
  });

  it("a destination edited on node B drops node A's cached copy", async () => {
    const onA = heard(a);
    const p = await pipeline(a, key, { url: sink.url });
    const edited = await call(b, "PATCH", `/v1/destinations/${p.destinationId}`, { key, body: { url: `${sink.url}/moved` } });
    expect(edited.status).toBe(200);
    await waitFor(async () => onA.got.some((m) => m.type === "destination.updated" && m.destinationId === p.destinationId), { timeoutMs: 1000, what: "destination.updated on node A" });
    onA.stop();
  });

  it("after node A's listening connection is killed, A listens again, its streams reconnect, and notifications resume", async () => {
    const onA = heard(a);
    const stream = await openStream(a);
    const killed = (await admin`SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity
                                WHERE datname = current_database() AND query ILIKE 'LISTEN%' AND pid <> pg_backend_pid()`) as { ok: boolean }[];
    expect(killed.length).toBeGreaterThan(0);
    await waitFor(async () => onA.got.some((m) => m.type === "bus.resumed"), { timeoutMs: 10_000, what: "bus.resumed on node A" });
    // The stream ends, so its client reconnects and reads what it missed from the list.
    expect((await stream.next()).done).toBe(true);

    const source = await createSourceId(a, key);
    const again = await openStream(a);
    const sent = await sendEvent(b, source, { after: "reconnect" });
    expect((await again.next()).value!.id).toBe(sent);
    again.close();
    onA.stop();
  });

  it("a collection on node A builds an event that node B committed late with an earlier received_at", async () => {
    const source = await createSourceId(a, key);
    const c = await createCollection(a, key, { source_id: source, key_path: "id" });
    const scope = await scopeOf(a, key);
    // Node A stores and announces an event; then node B's event commits, stamped earlier by B's clock
    // (B's ingest transaction was slower, or B's clock trails A's): as if B stamped it before A's.
    const first = await sendEvent(a, source, { id: "first" });
    const [stored] = await a.deps.db.select({ receivedAt: events.receivedAt }).from(events).where(eq(events.id, first));
    const earlier = new Date(Date.parse(stored!.receivedAt) - 100).toISOString();
    await b.deps.db.insert(events).values(storedEvent(scope, source, newId("event"), { id: "late" }, earlier));
    await waitFor(async () => (await records(a, key, c.id)).records?.length === 2, { timeoutMs: 5 * POSTGRES_READ_HORIZON_MS, what: "both records" });
    const built = await waitBuilt(a, key, c.id);
    expect(built).toMatchObject({ record_count: 2, position_event_id: first });
    const [row] = await a.deps.db.select().from(collections).where(eq(collections.id, c.id));
    expect(row!.eventsProcessed).toBe(2);
  });
});

function storedEvent(scope: TestScope, sourceId: string, id: string, data: unknown, receivedAt: string) {
  const body = Buffer.from(JSON.stringify(data));
  return {
    id,
    orgId: scope.orgId,
    envId: scope.envId,
    sourceId,
    method: "POST",
    path: "/",
    contentType: "application/json",
    headers: "{}",
    body,
    payloadSize: body.byteLength,
    verificationStatus: "skipped",
    dedupStatus: "skipped",
    status: "ignored",
    receivedAt,
    routedAt: receivedAt,
  };
}
