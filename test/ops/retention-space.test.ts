import { Database } from "bun:sqlite";
import { statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/db/sqlite/open";
import { pruneOldEvents } from "../../src/domain/retention";
import { createSource, ingest } from "../helpers/ingest";
import { call, startTestServer, tempDir, type TestServer } from "../helpers/server";
import { describeOnly } from "../helpers/database";
import { waitFor } from "../helpers/delivery";

let server: TestServer;
let key: string;

const sqlite = () => (server.deps.db as unknown as { $client: Database }).$client;
const pragma = (name: string) => Object.values(sqlite().query(`PRAGMA ${name}`).get() as Record<string, number>)[0]!;
const daysAgo = (d: number) => new Date(Date.now() - d * 86_400_000).toISOString();

/**
 * Copies the whole WAL into the database file and empties it, so the file's
 * size is the database's. The server's checkpoint thread may be checkpointing
 * at that moment: SQLite then answers busy and does nothing, so try again.
 */
async function checkpointFully() {
  await waitFor(async () => (sqlite().query("PRAGMA wal_checkpoint(TRUNCATE)").get() as { busy: number }).busy === 0, { what: "a full checkpoint", timeoutMs: 30_000 });
}

/** Doubles the source's events `times` times with SQL (fresh ids), so a test has a backlog without sending it all. */
function multiplyEvents(sourceId: string, times: number) {
  const columns = (sqlite().query("PRAGMA table_info(events)").all() as { name: string }[]).map((c) => c.name);
  const select = columns.map((c) => (c === "id" ? "'evt_' || lower(hex(randomblob(16)))" : c === "dedup_key" ? "NULL" : c)).join(", ");
  for (let i = 0; i < times; i++) sqlite().exec(`INSERT INTO events (${columns.join(", ")}) SELECT ${select} FROM events WHERE source_id = '${sourceId}'`);
}

describeOnly("sqlite", "retention pruning gives the space back", "the SQLite file's own free pages and auto_vacuum; PostgreSQL reclaims space with its own VACUUM", () => {
  // A server each: what one test left old (say it failed before pruning) is not pruned by the next.
  beforeEach(async () => {
    server = await startTestServer({ HOOKRELAY_RETENTION_DAYS: "7" });
    key = await server.apiKey();
  });
  afterEach(() => server.close());

  it("shrinks the database file after pruning (auto_vacuum=INCREMENTAL), and keeps the newer events", async () => {
    expect(pragma("auto_vacuum")).toBe(2);
    const source = await createSource(server, key, { name: "bulky" });
    const body = JSON.stringify({ pad: "x".repeat(16 * 1024) });
    for (let i = 0; i < 10; i++) await Promise.all(Array.from({ length: 20 }, () => ingest(server, source.id, { body })));
    multiplyEvents(source.id, 2); // 800 events, about 13 MB
    const keep = (await ingest(server, source.id, { body: '{"recent":true}' })).body.event_id;
    sqlite().query("UPDATE events SET received_at = ? WHERE source_id = ? AND id != ?").run(daysAgo(8), source.id, keep);
    await checkpointFully();
    const file = join(server.dataDir, "hookrelay.db");
    const before = statSync(file).size;
    expect(before).toBeGreaterThan(12 * 1024 * 1024);

    expect(await pruneOldEvents(server.deps, { batch: 100 })).toBe(800);
    expect(pragma("freelist_count")).toBe(0);
    await checkpointFully();
    const after = statSync(file).size;
    expect(after).toBeLessThan(before / 4);
    expect((await call(server, "GET", `/v1/events/${keep}`, { key })).status).toBe(200);
  });

  it("answers ingest between its batches while it prunes a backlog", async () => {
    const source = await createSource(server, key, { name: "backlog" });
    for (let i = 0; i < 5; i++) await Promise.all(Array.from({ length: 20 }, (_, n) => ingest(server, source.id, { body: JSON.stringify({ n }) })));
    multiplyEvents(source.id, 6); // 6400 events
    sqlite().query("UPDATE events SET received_at = ? WHERE source_id = ?").run(daysAgo(8), source.id);

    const live = await createSource(server, key, { name: "live" });
    const latencies: { start: number; end: number }[] = [];
    let pruning = true;
    const sender = (async () => {
      while (pruning) {
        const start = performance.now();
        expect((await ingest(server, live.id, { body: "{}" })).status).toBe(200);
        latencies.push({ start, end: performance.now() });
      }
    })();
    await Bun.sleep(0);
    const started = performance.now();
    const deleted = await pruneOldEvents(server.deps, { batch: 200 });
    const ended = performance.now();
    pruning = false;
    await sender;

    expect(deleted).toBe(6400);
    // Requests were answered while it pruned (none are, when the batches do not yield). The sender has one
    // request out at a time, so none of them waited for the whole prune. No bound in milliseconds, nor as a
    // share of the prune: one pause of a busy machine can take most of either, and failed both.
    const during = latencies.filter((l) => l.end > started && l.end < ended);
    expect(during.length).toBeGreaterThan(0);
  });
});

describeOnly("sqlite", "a database made before auto_vacuum=INCREMENTAL", "the SQLite file's own free pages and auto_vacuum; PostgreSQL reclaims space with its own VACUUM", () => {
  it("is converted once when it is opened", () => {
    const dir = tempDir("hookrelay-vacuum-");
    const first = openDatabase(dir);
    first.sqlite.exec("PRAGMA auto_vacuum = NONE");
    first.sqlite.exec("VACUUM");
    expect(first.sqlite.query("PRAGMA auto_vacuum").get()).toEqual({ auto_vacuum: 0 });
    first.close();

    const again = openDatabase(dir);
    try {
      expect(again.sqlite.query("PRAGMA auto_vacuum").get()).toEqual({ auto_vacuum: 2 });
      expect(again.sqlite.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
      expect(again.sqlite.query("PRAGMA journal_size_limit").get()).toEqual({ journal_size_limit: 64 * 1024 * 1024 });
    } finally {
      again.close();
    }
  });
});
