import { eq } from "drizzle-orm";
import { afterAll, describe, expect, it } from "vitest";
import { applyBatch, buildCollection } from "../../src/catalog/builder";
import { planEvent, rulesOf } from "../../src/catalog/plan";
import { newId } from "../../src/contracts/ids";
import { collections, events } from "../../src/db/schema";
import { readHorizonMs } from "../../src/db/horizon";
import { inWriteTurn } from "../../src/db/writeTurn";
import { manualClock } from "../../src/core/clock";
import { startClockedServer } from "../helpers/clockedServer";
import { createSourceId, sendEvent } from "../helpers/delivery";
import { scopeOf, type TestScope } from "../helpers/rows";
import { startTestServer, type TestServer } from "../helpers/server";
import { changelog, createCollection, getCollection, waitBuilt } from "./helpers";

/**
 * The builder's position never skips an event committed after it read a
 * batch (builder.ts): events of the clock's current millisecond wait for the
 * next pass, and a batch is cut where another writer committed an event
 * between its read and its write.
 */
const servers: TestServer[] = [];
afterAll(() => Promise.all(servers.map((s) => s.close())));

const collectionRow = async (server: TestServer, id: string) => (await server.deps.db.select().from(collections).where(eq(collections.id, id)))[0]!;

describe("events of the clock's current millisecond", () => {
  it("are left for a later pass, and built once the clock has moved on", async () => {
    const clock = manualClock();
    const { server, key } = await startClockedServer(clock);
    servers.push(server);
    const source = await createSourceId(server, key);
    const c = await createCollection(server, key, { source_id: source, key_path: "id" });
    const id = await sendEvent(server, source, { id: "now" });

    const pass = await buildCollection(server.deps, await collectionRow(server, c.id));
    expect(pass).toMatchObject({ handled: 0, more: false, heldBack: true });
    expect(await getCollection(server, key, c.id)).toMatchObject({ events_pending: 1, position_event_id: null, record_count: 0 });

    // On PostgreSQL the builder stays the read horizon behind the clock (src/db/horizon.ts).
    clock.advance(1 + readHorizonMs(server.deps.db));
    const built = await waitBuilt(server, key, c.id);
    expect(built).toMatchObject({ position_event_id: id, record_count: 1 });
  });
});

describe("an event committed between a batch's read and its write", () => {
  it("cuts the batch before it, so it is built in its place and nothing is skipped", async () => {
    const server = await startTestServer();
    servers.push(server);
    const key = await server.apiKey();
    const scope = await scopeOf(server, key);
    // The server's own builder polls too: should it build the collection between this test's read and its
    // write (a busy machine stretches that gap past its poll), the batch is refused as stale, as it must be.
    // The scenario then starts again on a new collection.
    for (let round = 1; ; round++) {
      const source = await createSourceId(server, key);
      const c = await createCollection(server, key, { source_id: source, key_path: "id" });
      const base = Date.now() - 1000 - readHorizonMs(server.deps.db);
      const insert = async (ms: number, n: number) => {
        const id = newId("event");
        const body = Buffer.from(JSON.stringify({ id: "k", n }));
        await server.deps.db.insert(events).values(storedEvent(scope, source, id, body, new Date(base + ms).toISOString()));
        return id;
      };
      const first = await insert(0, 1);
      const third = await insert(20, 3);

      // The batch as the builder read it, before another writer's event landed between its two events.
      const row = await collectionRow(server, c.id);
      const read = await server.deps.db.select().from(events).where(eq(events.sourceId, source));
      const plans = await Promise.all(read.sort((a, b) => a.receivedAt.localeCompare(b.receivedAt)).map((e) => planEvent(e, rulesOf(row))));
      const second = await insert(10, 2);

      const applied = await inWriteTurn(server.deps.db, () => applyBatch(server.deps, row, plans));
      if (applied === "stale" && round < 5 && (await collectionRow(server, c.id)).positionEventId !== row.positionEventId) continue;
      expect(applied).toEqual({ handled: 1, heldBack: false, cut: true });
      expect((await collectionRow(server, c.id)).positionEventId).toBe(first);
      await builtInOrder(c.id, [third, second, first]);
      return;
    }

    async function builtInOrder(id: string, eventIds: string[]) {
      // The next passes continue from there: the late event comes second, as received.
      for (let i = 0; i < 5 && (await getCollection(server, key, id)).events_pending > 0; i++) await buildCollection(server.deps, await collectionRow(server, id));
      const log = await changelog(server, key, id, "k");
      expect(log.map((e) => e.event_id)).toEqual(eventIds);
      expect(log.map((e) => JSON.parse(e.after_data).n)).toEqual([3, 2, 1]);
    }
  });

  it("discards a batch whose collection was rebuilt or moved on meanwhile", async () => {
    const server = await startTestServer();
    servers.push(server);
    const key = await server.apiKey();
    const source = await createSourceId(server, key);
    const c = await createCollection(server, key, { source_id: source, key_path: "id" });
    await sendEvent(server, source, { id: "a" });
    await waitBuilt(server, key, c.id);
    const stale = await collectionRow(server, c.id);
    await server.request(`/v1/collections/${c.id}`, { method: "PATCH", headers: { "x-api-key": key, "content-type": "application/json" }, body: JSON.stringify({ key_path: "other" }) });
    const applied = await inWriteTurn(server.deps.db, () => applyBatch(server.deps, stale, []));
    expect(applied).toBe("stale");
  });
});

function storedEvent(scope: TestScope, sourceId: string, id: string, body: Buffer, receivedAt: string) {
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
