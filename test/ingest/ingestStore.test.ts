import { Database } from "bun:sqlite";
import { rmSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { writeEvent, type EventWrite } from "../../src/db/ingestStore";
import { openDatabase, type OpenDb } from "../../src/db/sqlite/open";
import { bootstrap } from "../../src/domain/bootstrap";
import { manualClock } from "../../src/core/clock";
import { tempDir } from "../helpers/server";
import { describeOnly } from "../helpers/database";

let store: OpenDb;
let dir: string;
let write: (sourceId: string, extra?: Partial<EventWrite>) => EventWrite;
const clock = manualClock(new Date("2026-03-01T00:00:00.000Z"));

beforeEach(async () => {
  dir = tempDir();
  store = openDatabase(dir);
  await bootstrap(store.db, clock, { email: "a@b.c", password: "long enough password" });
  const { id: orgId } = store.sqlite.query("select id from organizations").get() as { id: string };
  const { id: envId } = store.sqlite.query("select id from environments").get() as { id: string };
  const insertSource = store.sqlite.prepare(
    "insert into sources (id, org_id, env_id, slug, name, status, request_limit, created_at, updated_at) values (?, ?, ?, ?, ?, ?, ?, 'x', 'x')",
  );
  insertSource.run("src_a", orgId, envId, "a", "a", "active", null);
  insertSource.run("src_p", orgId, envId, "p", "p", "paused", null);
  insertSource.run("src_l", orgId, envId, "l", "l", "active", 2);
  write = (sourceId, extra = {}) => ({
    sourceId,
    orgId,
    envId,
    method: "POST",
    path: "/",
    query: null,
    contentType: null,
    sourceIp: null,
    headers: "{}",
    body: new Uint8Array([1]),
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
});
afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

const counters = (id: string) => store.sqlite.query("select event_count, request_count, last_event_at from sources where id = ?").get(id);

describeOnly("sqlite", "group commit writer", "the bun:sqlite group-commit writer itself, over its own file", () => {
  it("writes one turn's events in one batch: statuses, budgets and counters per source", async () => {
    const now = () => clock.now();
    const results = await Promise.all([
      writeEvent(store.db, now, write("src_a")),
      writeEvent(store.db, now, write("src_p")),
      writeEvent(store.db, now, write("src_p", { status: "rejected" })),
      writeEvent(store.db, now, write("src_l")),
      writeEvent(store.db, now, write("src_l")),
      writeEvent(store.db, now, write("src_l")),
      writeEvent(store.db, now, write("src_gone")),
    ]);
    expect(results.map((r) => (r.kind === "stored" ? r.status : r.kind))).toEqual(["pending", "held", "rejected", "pending", "pending", "limit_reached", "source_gone"]);
    expect(counters("src_a")).toEqual({ event_count: 1, request_count: 1, last_event_at: "2026-03-01T00:00:00.000Z" });
    expect(counters("src_p")).toMatchObject({ event_count: 2, request_count: 2 });
    expect(counters("src_l")).toMatchObject({ event_count: 2, request_count: 2 });
  });

  it("marks a repeated key within the window as a duplicate of the first, even in the same batch", async () => {
    const now = () => clock.now();
    const dedup = { dedupStatus: "unique" as const, dedupKey: "k1" };
    const [a, b] = await Promise.all([writeEvent(store.db, now, write("src_a", dedup)), writeEvent(store.db, now, write("src_a", dedup))]);
    expect(a).toMatchObject({ kind: "stored", dedupStatus: "unique", duplicateOf: null });
    expect(b).toMatchObject({ kind: "stored", dedupStatus: "duplicate", status: "ignored", duplicateOf: a.kind === "stored" ? a.id : "" });
    clock.advance(61_000);
    expect(await writeEvent(store.db, now, write("src_a", dedup))).toMatchObject({ dedupStatus: "unique" });
  });

  it("fails only the bad row of a batch; the others are stored", async () => {
    const now = () => clock.now();
    const bad = write("src_a", { body: null as unknown as Uint8Array });
    const settled = await Promise.allSettled([writeEvent(store.db, now, write("src_a")), writeEvent(store.db, now, bad), writeEvent(store.db, now, write("src_a"))]);
    expect(settled.map((s) => s.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(counters("src_a")).toMatchObject({ event_count: 2, request_count: 2 });
    expect((store.sqlite.query("select count(*) as n from events").get() as { n: number }).n).toBe(2);
  });

  it("fails the whole batch when the database is locked, then writes the next one once it is free", async () => {
    const now = () => clock.now();
    const holder = new Database(store.path);
    holder.exec("BEGIN IMMEDIATE");
    store.sqlite.exec("PRAGMA busy_timeout = 0");
    try {
      const settled = await Promise.allSettled([writeEvent(store.db, now, write("src_a")), writeEvent(store.db, now, write("src_a"))]);
      expect(settled.map((s) => s.status)).toEqual(["rejected", "rejected"]);
    } finally {
      holder.exec("ROLLBACK");
      holder.close();
      store.sqlite.exec("PRAGMA busy_timeout = 5000");
    }
    expect(await writeEvent(store.db, now, write("src_a"))).toMatchObject({ kind: "stored" });
    expect(counters("src_a")).toMatchObject({ event_count: 1, request_count: 1 });
  });

  it("keeps received_at and ids in commit order even when the clock goes back", async () => {
    const now = () => clock.now();
    const first = await writeEvent(store.db, now, write("src_a"));
    clock.advance(-5000);
    const second = await writeEvent(store.db, now, write("src_a"));
    if (first.kind !== "stored" || second.kind !== "stored") throw new Error("not stored");
    expect(second.receivedAt >= first.receivedAt).toBe(true);
    expect(second.id > first.id).toBe(true);
  });
});
