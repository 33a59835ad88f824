import { eq } from "drizzle-orm";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { flushCounters } from "../../src/db/pg/counters";
import { countIngestRequest, findIngestSource, writeEvent, type EventWrite, type StoredEventsHook, type WriteResult } from "../../src/db/ingestStore";
import { onCommit } from "../../src/db/transaction";
import { connections, deliveryAttempts, destinations, environments, events, organizations, sources } from "../../src/db/schema";
import { type Store } from "../../src/db/store";
import { openStore } from "../../src/db/openStore";
import { FilterRuleCache } from "../../src/domain/deliveries";
import type { Deps } from "../../src/domain/deps";
import type { BusMessage } from "../../src/core/bus";
import { ingestRouting, routePendingEvents } from "../../src/delivery/router";
import { describeOnly, emptyPgDatabase, onPostgres } from "../helpers/database";

/**
 * Ingest's group commit on PostgreSQL: the events of one turn are written
 * as one batch (one multi-row INSERT), dedup and request_limit hold when
 * batches of several processes write the same source at once, and routing
 * queues the first tries inside the batch's transaction.
 */
let cluster: { url: string; stop(): void };
let dataDir: string;
let store: Store;
/** A second process on the same database. */
let other: Store;

const ORG = "org_pgingest";
const ENV = "env_pgingest";
const AT = "2026-03-01T00:00:00.000Z";

beforeAll(async () => {
  if (!onPostgres) return;
  cluster = await emptyPgDatabase();
  dataDir = mkdtempSync(join(tmpdir(), "hookrelay-pg-ingest-"));
  store = await openStore({ dataDir, databaseUrl: cluster.url });
  other = await openStore({ dataDir, databaseUrl: cluster.url });
  await store.db.insert(organizations).values({ id: ORG, name: "o", slug: "o", createdAt: AT });
  await store.db.insert(environments).values({ id: ENV, orgId: ORG, name: "production", slug: "production", createdAt: AT, updatedAt: AT });
}, 60_000);

afterAll(async () => {
  if (!onPostgres) return;
  await other?.close();
  await store?.close();
  cluster?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

let n = 0;
/** A fresh source; each test works on its own. */
async function newSource(fields: Partial<typeof sources.$inferInsert> = {}): Promise<string> {
  const id = `src_pg${++n}`;
  await store.db.insert(sources).values({ id, orgId: ORG, envId: ENV, slug: id, name: id, createdAt: AT, updatedAt: AT, ...fields });
  return id;
}

const write = (sourceId: string, extra: Partial<EventWrite> = {}): EventWrite => ({
  sourceId,
  orgId: ORG,
  envId: ENV,
  method: "POST",
  path: "/",
  query: null,
  contentType: "application/json",
  sourceIp: "127.0.0.1",
  headers: "{}",
  body: new TextEncoder().encode('{"kind":"a"}'),
  verificationStatus: "skipped",
  verificationError: null,
  dedupStatus: "skipped",
  dedupKey: null,
  dedupWindowSeconds: 60,
  status: "pending",
  schemaErrors: null,
  eventType: null,
  ...extra,
});

/** A clock that moves 1 ms each time it is read: events of one batch share a received_at only because the batch reads it once. */
function tickingClock(start = Date.parse(AT)) {
  let ms = start;
  return { now: () => new Date(ms++), set: (to: number) => (ms = to) };
}

const stored = (r: WriteResult) => {
  if (r.kind !== "stored") throw new Error(`not stored: ${r.kind}`);
  return r;
};

async function sourceRow(id: string) {
  const [row] = await store.db.select().from(sources).where(eq(sources.id, id));
  return row!;
}

async function eventRow(id: string) {
  const [row] = await store.db.select().from(events).where(eq(events.id, id));
  return row!;
}

/** serve gives the ingest store its routing step when it starts it (Store.ingest.start); each test starts its own. */
let stopRouting = () => {};
function routeAtIngest(hook: StoredEventsHook | null) {
  stopRouting();
  stopRouting = hook ? store.ingest.start({ routeStored: hook }) : () => {};
}

describeOnly("postgres", "ingest on PostgreSQL", "PostgreSQL's own locking and statements, on the run's cluster", () => {
  beforeEach(() => {
    routeAtIngest(null);
  });

  it("finds a source with its numbers as numbers, and counts a handshake's request", async () => {
    const id = await newSource({ requestLimit: 1, dedupEnabled: 1 });
    expect(await findIngestSource(store.db, id)).toMatchObject({ id, org_id: ORG, status: "active", dedup_enabled: 1, request_count: 0, request_limit: 1, dedup_window_seconds: 3600 });
    expect(await findIngestSource(store.db, "src_missing")).toBeNull();
    expect(await countIngestRequest(store.db, id)).toBe(true);
    expect(await countIngestRequest(store.db, id)).toBe(false);
    expect((await sourceRow(id)).requestCount).toBe(1);
  });

  it("writes the events of one turn as one batch, all stored, byte-exact, counters moved once by the batch", async () => {
    const id = await newSource();
    const paused = await newSource({ status: "paused" });
    const clock = tickingClock();
    const body = (i: number) => new Uint8Array([0, 255, i, 10]);
    const results = (
      await Promise.all([
        ...Array.from({ length: 60 }, (_, i) => writeEvent(store.db, clock.now, write(id, { body: body(i) }))),
        writeEvent(store.db, clock.now, write(paused)),
        writeEvent(store.db, clock.now, write(paused, { status: "rejected" })),
        writeEvent(store.db, clock.now, write("src_gone")),
      ])
    );
    expect(results.slice(60).map((r) => (r.kind === "stored" ? r.status : r.kind))).toEqual(["held", "rejected", "source_gone"]);
    const ours = results.slice(0, 60).map(stored);
    // One batch: the clock was read once for all of them.
    expect(new Set(ours.map((r) => r.receivedAt)).size).toBe(1);
    expect(new Set(ours.map((r) => r.id)).size).toBe(60);
    expect(ours.every((r) => r.status === "pending")).toBe(true);
    const row = await eventRow(ours[7]!.id);
    expect(row).toMatchObject({ sourceId: id, status: "pending", payloadSize: 4, routedAt: null, receivedAt: ours[7]!.receivedAt });
    expect([...row.body]).toEqual([...body(7)]);
    // Counters of a source without a request_limit are written by the node's flush, after the batch.
    await flushCounters(store.db);
    expect(await sourceRow(id)).toMatchObject({ eventCount: 60, requestCount: 60, lastEventAt: ours[0]!.receivedAt });
    expect(await sourceRow(paused)).toMatchObject({ eventCount: 2, requestCount: 2 });
  });

  it("marks a repeated key within the window as a duplicate of the original, in the same batch and in a later one", async () => {
    const id = await newSource();
    const clock = tickingClock();
    const dedup = (key: string) => ({ dedupStatus: "unique" as const, dedupKey: key });
    const [a, b, c] = (
      await Promise.all([writeEvent(store.db, clock.now, write(id, dedup("k1"))), writeEvent(store.db, clock.now, write(id, dedup("k1"))), writeEvent(store.db, clock.now, write(id, dedup("k2")))])
    ).map(stored);
    expect(a).toMatchObject({ dedupStatus: "unique", duplicateOf: null });
    expect(b).toMatchObject({ dedupStatus: "duplicate", status: "ignored", duplicateOf: a!.id });
    expect(c).toMatchObject({ dedupStatus: "unique", duplicateOf: null });

    // A later batch, from another process: finds the original in the table.
    const later = stored(await writeEvent(other.db, clock.now, write(id, dedup("k1"))));
    expect(later).toMatchObject({ dedupStatus: "duplicate", duplicateOf: a!.id });
    expect(await eventRow(later.id)).toMatchObject({ dedupStatus: "duplicate", duplicateOf: a!.id, status: "ignored" });

    // Past the window the key is new again.
    clock.set(Date.parse(AT) + 61_000);
    expect(stored(await writeEvent(store.db, clock.now, write(id, dedup("k1"))))).toMatchObject({ dedupStatus: "unique" });
  });

  it("never stores past request_limit while two processes write the same source at once", async () => {
    const id = await newSource({ requestLimit: 7 });
    const clock = tickingClock();
    const burst = (db: Store["db"]) => Array.from({ length: 10 }, () => writeEvent(db, clock.now, write(id)));
    const results = await Promise.all([...burst(store.db), ...burst(other.db), countIngestRequest(store.db, id), countIngestRequest(other.db, id)]);
    const writes = results.slice(0, 20) as WriteResult[];
    const handshakes = results.slice(20) as boolean[];
    const storedCount = writes.filter((r) => r.kind === "stored").length;
    expect(storedCount + handshakes.filter(Boolean).length).toBe(7);
    expect(writes.filter((r) => r.kind === "limit_reached").length).toBe(20 - storedCount);
    expect(await sourceRow(id)).toMatchObject({ requestCount: 7, eventCount: storedCount });
    expect(await store.db.$count(events, eq(events.sourceId, id))).toBe(storedCount);
  });

  describe("routing", () => {
    const published: BusMessage[] = [];
    const deps = () => ({ db: store.db, store, clock: { now: () => new Date() }, bus: { publish: (m: BusMessage) => published.push(m), subscribe: () => () => {} } }) as unknown as Deps;

    /** A source with two connections: one takes every event, one only `{"kind":"b"}`. */
    async function routedSource() {
      const id = await newSource();
      for (const [name, filter] of [
        ["all", null],
        ["only-b", JSON.stringify([{ field: "body.kind", operator: "eq", value: "b" }])],
      ] as const) {
        await store.db.insert(destinations).values({ id: `dst_${id}_${name}`, orgId: ORG, envId: ENV, name, url: `http://127.0.0.1:9/${name}`, signingSecret: "s", createdAt: AT, updatedAt: AT });
        await store.db
          .insert(connections)
          .values({ id: `con_${id}_${name}`, orgId: ORG, envId: ENV, sourceId: id, destinationId: `dst_${id}_${name}`, name, filterRules: filter, createdAt: AT, updatedAt: AT });
      }
      return id;
    }

    const attemptsOf = (eventId: string) =>
      store.db
        .select({ connectionId: deliveryAttempts.connectionId, status: deliveryAttempts.status, triggerType: deliveryAttempts.triggerType, attemptNumber: deliveryAttempts.attemptNumber })
        .from(deliveryAttempts)
        .where(eq(deliveryAttempts.eventId, eventId))
        .orderBy(deliveryAttempts.connectionId);

    it("queues the first tries of a batch's events inside its transaction", async () => {
      const id = await routedSource();
      const rules = new FilterRuleCache();
      let followedUp = 0;
      routeAtIngest({
        begin: async (sourceIds) => {
          const batch = await ingestRouting(deps(), sourceIds, rules);
          return {
            takes: batch.takes,
            stored: async (events) => {
              await batch.stored(events);
              onCommit(store.db, () => followedUp++);
            },
          };
        },
        failed: (error) => {
          throw error;
        },
      });
      const clock = tickingClock();
      const body = (kind: string) => new TextEncoder().encode(JSON.stringify({ kind }));
      const [a, b] = (await Promise.all([writeEvent(store.db, clock.now, write(id, { body: body("a") })), writeEvent(store.db, clock.now, write(id, { body: body("b") }))])).map(stored);
      expect(await eventRow(a!.id)).toMatchObject({ status: "pending", routedAt: a!.receivedAt });
      expect(await attemptsOf(a!.id)).toEqual([{ connectionId: `con_${id}_all`, status: "queued", triggerType: "initial", attemptNumber: 1 }]);
      expect(await attemptsOf(b!.id)).toEqual([
        { connectionId: `con_${id}_all`, status: "queued", triggerType: "initial", attemptNumber: 1 },
        { connectionId: `con_${id}_only-b`, status: "queued", triggerType: "initial", attemptNumber: 1 },
      ]);
      await flushCounters(store.db);
      const [all] = await store.db.select().from(connections).where(eq(connections.id, `con_${id}_all`));
      expect(all).toMatchObject({ eventCount: 2, lastEventAt: a!.receivedAt });
      await new Promise((r) => setImmediate(r));
      expect(followedUp).toBe(1);
    });

    it("stores events unrouted when routing fails, for the background router, which routes them in one transaction", async () => {
      const id = await routedSource();
      routeAtIngest({
        begin: async () => ({
          takes: () => true,
          stored: async () => {
            throw new Error("routing broke");
          },
        }),
        failed: () => {},
      });
      const clock = tickingClock();
      const [a, b] = (
        await Promise.all([writeEvent(store.db, clock.now, write(id)), writeEvent(store.db, clock.now, write(id, { body: new TextEncoder().encode('{"kind":"b"}') }))])
      ).map(stored);
      expect(await eventRow(a!.id)).toMatchObject({ status: "pending", routedAt: null });
      routeAtIngest(null);

      while ((await routePendingEvents(deps(), { limit: 50 })) > 0);
      expect((await eventRow(a!.id)).routedAt).not.toBeNull();
      expect((await attemptsOf(a!.id)).map((x) => x.connectionId)).toEqual([`con_${id}_all`]);
      expect((await attemptsOf(b!.id)).map((x) => x.connectionId)).toEqual([`con_${id}_all`, `con_${id}_only-b`]);
      await flushCounters(store.db);
      const [onlyB] = await store.db.select().from(connections).where(eq(connections.id, `con_${id}_only-b`));
      expect(onlyB).toMatchObject({ eventCount: 1, lastEventAt: b!.receivedAt });
      expect(published.some((m) => m.type === "delivery.queued")).toBe(true);
    });
  });
});
