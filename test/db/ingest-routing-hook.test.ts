import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ingestStoreOf, writeEvent, type EventWrite, type StoredEventsHook } from "../../src/db/ingestStore";
import { onCommit } from "../../src/db/transaction";
import { openDatabase, type OpenDb } from "../../src/db/sqlite/open";
import { createSource } from "../helpers/ingest";
import { scopeOf, type TestScope } from "../helpers/rows";
import type { TestServer } from "../helpers/server";
import { describeOnly } from "../helpers/database";
import { useServer } from "../helpers/fixture";

/**
 * The hook every ingest group commit runs (serve routes events there)
 * decides each pending event before it is inserted and writes after the
 * inserts in a savepoint of its own: when it throws, what it wrote rolls
 * back, the events are stored all the same (`pending`, unrouted, for the
 * background router), and `failed` decides what happens after the commit.
 * On a data dir whose server has stopped, so nothing else writes.
 */
let server: TestServer, key: string;
let store: OpenDb;
let scope: TestScope;
let sourceId: string;

useServer({}, (s) => ({ server, key } = s));
beforeAll(async () => {
  scope = await scopeOf(server, key);
  sourceId = (await createSource(server, key, { name: "hooked" })).id;
  await server.stop();
  store = openDatabase(server.dataDir);
});
afterAll(() => store.close());

const write = (): EventWrite => ({
  sourceId,
  orgId: scope.orgId,
  envId: scope.envId,
  method: "POST",
  path: "/",
  query: null,
  contentType: "application/json",
  sourceIp: "127.0.0.1",
  headers: "{}",
  body: new TextEncoder().encode("{}"),
  verificationStatus: "skipped",
  verificationError: null,
  dedupStatus: "skipped",
  dedupKey: null,
  dedupWindowSeconds: 0,
  status: "pending",
  schemaErrors: null,
  eventType: null,
});

const routedAt = (id: string) => store.sqlite.query("SELECT status, routed_at AS routedAt FROM events WHERE id = ?1").get(id) as { status: string; routedAt: string | null };
/** serve gives the ingest store its routing step when it starts it (Store.ingest.start); each test starts its own. */
let stopRouting = () => {};
function routeAtIngest(hook: StoredEventsHook | null) {
  stopRouting();
  stopRouting = hook ? ingestStoreOf(store.db).start({ routeStored: hook }) : () => {};
}
const idOf = (r: Awaited<ReturnType<typeof writeEvent>>) => (r.kind === "stored" ? r.id : "");

describeOnly("sqlite", "the group commit's stored-events hook", "drives the SQLite ingest store over the stopped server's file", () => {
  it("decides each pending event before its insert, so it is stored routed (or ignored), and runs the follow-up after the commit", async () => {
    let seen: string[] = [];
    let followedUp = false;
    let asked = 0;
    routeAtIngest({
      begin: () => ({
        takes: (w) => asked++ === 0 && w.sourceId === sourceId,
        stored: (events) => {
          seen = events.map((e) => e.id);
          onCommit(store.db, () => (followedUp = true));
        },
      }),
      failed: (error) => {
        throw error;
      },
    });
    const [a, b] = await Promise.all([writeEvent(store.db, () => new Date(), write()), writeEvent(store.db, () => new Date(), write())]);
    expect(seen.sort()).toEqual([idOf(a!), idOf(b!)].sort());
    expect(routedAt(idOf(a!))).toEqual({ status: "pending", routedAt: expect.any(String) });
    expect(routedAt(idOf(b!))).toEqual({ status: "ignored", routedAt: expect.any(String) });
    await new Promise((r) => setImmediate(r));
    expect(followedUp).toBe(true);
  });

  it("rolls back what a failing hook wrote, stores the events pending and unrouted, and what `failed` hands to onCommit runs after the commit", async () => {
    let failure: unknown = null;
    let followedUp = false;
    routeAtIngest({
      begin: () => ({
        takes: () => false,
        stored: (events) => {
          store.sqlite.query("UPDATE events SET event_type = 'written' WHERE id = ?1").run(events[0]!.id);
          throw new Error("routing broke");
        },
      }),
      failed: (error) => {
        failure = error;
        onCommit(store.db, () => (followedUp = true));
      },
    });
    const result = await writeEvent(store.db, () => new Date(), write());
    expect(result.kind).toBe("stored");
    expect(store.sqlite.query("SELECT status, routed_at, event_type FROM events WHERE id = ?1").get(idOf(result))).toEqual({ status: "pending", routed_at: null, event_type: null });
    expect((failure as Error).message).toBe("routing broke");
    await new Promise((r) => setImmediate(r));
    expect(followedUp).toBe(true);
  });

  it("stores an event the hook cannot decide now (takes → null) pending and unrouted, and still runs the follow-up", async () => {
    let followedUp = false;
    let storedRouted: string[] | null = null;
    let asked = 0;
    routeAtIngest({
      // The first event waits for the background router (a regex rule decides it); the second is decided here.
      begin: () => ({
        takes: () => (asked++ === 0 ? null : true),
        stored: (events) => {
          storedRouted = events.map((e) => e.id);
          onCommit(store.db, () => (followedUp = true));
        },
      }),
      failed: (error) => {
        throw error;
      },
    });
    const [deferred, decided] = await Promise.all([writeEvent(store.db, () => new Date(), write()), writeEvent(store.db, () => new Date(), write())]);
    expect(routedAt(idOf(deferred!))).toEqual({ status: "pending", routedAt: null });
    expect(routedAt(idOf(decided!))).toEqual({ status: "pending", routedAt: expect.any(String) });
    expect(storedRouted).toEqual([idOf(decided!)]);
    await new Promise((r) => setImmediate(r));
    expect(followedUp).toBe(true);

    // Nothing decided in the batch at all: the follow-up (which wakes the router) runs all the same.
    followedUp = false;
    asked = 0;
    routeAtIngest({
      begin: () => ({ takes: () => null, stored: () => onCommit(store.db, () => (followedUp = true)) }),
      failed: (error) => {
        throw error;
      },
    });
    const alone = await writeEvent(store.db, () => new Date(), write());
    expect(routedAt(idOf(alone))).toEqual({ status: "pending", routedAt: null });
    await new Promise((r) => setImmediate(r));
    expect(followedUp).toBe(true);
  });

  it("stores every event of the batch unrouted when deciding one of them throws", async () => {
    let failure: unknown = null;
    let asked = 0;
    routeAtIngest({
      begin: () => ({
        takes: () => {
          if (asked++ === 1) throw new Error("no connections today");
          return true;
        },
        stored: () => {},
      }),
      failed: (error) => {
        failure = error;
      },
    });
    const results = await Promise.all([1, 2, 3].map(() => writeEvent(store.db, () => new Date(), write())));
    for (const r of results) expect(routedAt(idOf(r))).toEqual({ status: "pending", routedAt: null });
    expect((failure as Error).message).toBe("no connections today");
    routeAtIngest(null);
  });
});
