import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { onEventsStored, writeEvent, type EventWrite } from "../../src/db/ingestStore";
import { openDatabase, type OpenDb } from "../../src/db/open";
import { createSource } from "../helpers/ingest";
import { scopeOf, type TestScope } from "../helpers/rows";
import { startTestServer, type TestServer } from "../helpers/server";

/**
 * The hook every ingest group commit runs (serve routes events there) is in
 * a savepoint of its own: when it throws, what it wrote rolls back, the
 * events are stored all the same (`pending`, unrouted, for the background
 * router), and `failed` decides what happens after the commit.
 * On a data dir whose server has stopped, so nothing else writes.
 */
let server: TestServer;
let store: OpenDb;
let scope: TestScope;
let sourceId: string;

beforeAll(async () => {
  server = await startTestServer();
  const key = await server.apiKey();
  scope = await scopeOf(server, key);
  sourceId = (await createSource(server, key, { name: "hooked" })).id;
  await server.stop();
  store = openDatabase(server.dataDir);
});
afterAll(async () => {
  store.close();
  await server.close();
});

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

describe("the group commit's stored-events hook", () => {
  it("sees the batch's pending events inside the transaction and runs its follow-up after the commit", async () => {
    let seen: string[] = [];
    let followedUp = false;
    onEventsStored(store.db, {
      stored: (events) => {
        seen = events.map((e) => e.id);
        return () => (followedUp = true);
      },
      failed: (error) => {
        throw error;
      },
    });
    const [a, b] = await Promise.all([writeEvent(store.db, () => new Date(), write()), writeEvent(store.db, () => new Date(), write())]);
    expect(a!.kind === "stored" && b!.kind === "stored").toBe(true);
    expect(seen.sort()).toEqual([a, b].map((r) => (r!.kind === "stored" ? r!.id : "")).sort());
    await new Promise((r) => setImmediate(r));
    expect(followedUp).toBe(true);
  });

  it("rolls back what a failing hook wrote, still stores the events, and runs what `failed` returns", async () => {
    let failure: unknown = null;
    let followedUp = false;
    onEventsStored(store.db, {
      stored: (events) => {
        store.sqlite.query("UPDATE events SET status = 'ignored', routed_at = 'x' WHERE id = ?1").run(events[0]!.id);
        throw new Error("routing broke");
      },
      failed: (error) => {
        failure = error;
        return () => (followedUp = true);
      },
    });
    const result = await writeEvent(store.db, () => new Date(), write());
    expect(result.kind).toBe("stored");
    const id = result.kind === "stored" ? result.id : "";
    expect(store.sqlite.query("SELECT status, routed_at FROM events WHERE id = ?1").get(id)).toEqual({ status: "pending", routed_at: null });
    expect((failure as Error).message).toBe("routing broke");
    await new Promise((r) => setImmediate(r));
    expect(followedUp).toBe(true);
    onEventsStored(store.db, null);
  });
});
