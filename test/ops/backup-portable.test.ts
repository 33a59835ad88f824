import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { inArray, sql } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { openStore } from "../../src/db/openStore";
import { pgRows } from "../../src/db/pg/rows";
import { events } from "../../src/db/schema";
import { cli, ensureBinary } from "../cli/helpers";
import { describeOnly, emptyDatabaseUrl, storeEnv, TEST_SECRET_KEY } from "../helpers/database";
import { tempDir } from "../helpers/server";
import { waitFor } from "../helpers/delivery";
import { adminKey, api, spawnServe, type ServeProcess } from "./helpers";

/**
 * Backups of a PostgreSQL database (docs/postgres.md, "Backups"): the
 * portable archive, made while serve runs and ingests, restored into a
 * SQLite data dir and into a fresh PostgreSQL database; and scheduled
 * backups, which only the scheduler node makes.
 */
const cliEnvOf = (extra: Record<string, string> = {}) => ({ PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: tempDir("hookrelay-bk-home-"), NO_COLOR: "1", HOOKRELAY_SECRET_KEY: TEST_SECRET_KEY, ...extra });

describeOnly("postgres", "portable backups of PostgreSQL", "they back up a PostgreSQL database (SQLite's portable form is test/db/portable-archive.test.ts)", () => {
  const servers: ServeProcess[] = [];
  beforeAll(ensureBinary);
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.stop();
  });
  afterAll(async () => {
    for (const s of servers.splice(0)) await s.stop();
  });

  it("a backup made while serve ingests holds every event acknowledged before it, and restores into a data dir and into a fresh PostgreSQL database", async () => {
    const backupDir = tempDir("hookrelay-bk-dir-");
    const server = await spawnServe(tempDir("hookrelay-bk-pg-"), { binary: true, env: { HOOKRELAY_BACKUP_DIR: backupDir } });
    servers.push(server);
    const key = await adminKey(server.url);
    const source = await api(server.url, key, "POST", "/v1/sources", { name: "busy" });
    expect(source.status).toBe(201);
    const ingestUrl = `${server.url}/v1/ingest/${source.body.source.id}`;

    // Ingest goes on, four requests at a time, for as long as the backup takes.
    const acked: string[] = [];
    let stop = false;
    const senders = Array.from({ length: 4 }, async (_, w) => {
      for (let i = 0; !stop; i++) {
        const res = await fetch(ingestUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ w, i }) });
        expect(res.status).toBe(200);
        acked.push(((await res.json()) as { event_id: string }).event_id);
      }
    });
    await waitFor(async () => acked.length >= 50 || null, { what: "ingest under way" });
    const before = [...acked];
    const out = join(tempDir("hookrelay-bk-out-"), "pg.hrbk");
    const made = await cli(["backup", "create", "--url", server.url, "--api-key", key, "--out", out, "--json"], { env: cliEnvOf(), binary: true });
    const during = acked.length;
    stop = true;
    await Promise.all(senders);
    expect(made.code, made.stderr).toBe(0);
    expect(made.json().backup).toMatchObject({ kind: "manual", format: "portable" });
    expect(made.json().backup.name).toMatch(/\.hrbk$/);
    expect(existsSync(out)).toBe(true);
    // Ingest did not wait for the backup.
    expect(acked.length).toBeGreaterThan(before.length);
    expect(during).toBeGreaterThan(before.length);

    const list = await cli(["backup", "list", "--url", server.url, "--api-key", key, "--json"], { env: cliEnvOf(), binary: true });
    expect(list.json().backups.map((b: { name: string; format: string }) => [b.name, b.format])).toContainEqual([made.json().backup.name, "portable"]);

    const dataDir = tempDir("hookrelay-bk-restored-sqlite-");
    const pgTarget = await emptyDatabaseUrl();
    for (const target of [["--data-dir", dataDir], ["--database-url", pgTarget]]) {
      const restored = await cli(["backup", "restore", out, ...target, "--json"], { env: cliEnvOf(), binary: true });
      expect(restored.code, restored.stderr).toBe(0);
      expect(restored.json()).toMatchObject({ source: "postgres", replaced_database_kept_as: null });
      const store = await openStore({ dataDir, databaseUrl: target[0] === "--database-url" ? target[1] : undefined });
      try {
        const found = await store.db.select({ id: events.id }).from(events).where(inArray(events.id, before));
        expect(found.length).toBe(before.length);
        if (target[0] === "--database-url") {
          // The planner has statistics of what was loaded (src/db/portable/loader.ts, refreshPlannerStatistics): never analyzed, reltuples is -1.
          const [stats] = await pgRows<{ n: number }>(store.db, sql`SELECT reltuples::int AS n FROM pg_class WHERE relname = 'events'`);
          expect(stats!.n).toBeGreaterThanOrEqual(before.length);
        }
      } finally {
        await store.close();
      }
    }

    // Served from the restored PostgreSQL database, the old ingest URL still ingests (the same source id).
    const again = await spawnServe(tempDir("hookrelay-bk-pg2-"), { binary: true, env: { HOOKRELAY_DATABASE_URL: pgTarget } });
    servers.push(again);
    const res = await fetch(`${again.url}/v1/ingest/${source.body.source.id}`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(res.status).toBe(200);

    // Into a database that holds data: refused, nothing changed.
    const refused = await cli(["backup", "restore", out, "--database-url", pgTarget], { env: cliEnvOf(), binary: true });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("holds data");
  }, 120_000);

  it("scheduled backups on PostgreSQL: only the scheduler node writes them; without a backup dir serve refuses to start", async () => {
    const shared = await storeEnv(tempDir("hookrelay-bk-shared-"));
    const url = shared.HOOKRELAY_DATABASE_URL!;
    await expect(spawnServe(tempDir("hookrelay-bk-nodir-"), { binary: true, env: { HOOKRELAY_DATABASE_URL: url, HOOKRELAY_BACKUP_INTERVAL: "1h" } })).rejects.toThrow(/HOOKRELAY_BACKUP_INTERVAL with a database URL needs HOOKRELAY_BACKUP_DIR/);

    const backupDir = tempDir("hookrelay-bk-scheduled-");
    const env = { HOOKRELAY_DATABASE_URL: url, HOOKRELAY_BACKUP_INTERVAL: "1h", HOOKRELAY_BACKUP_DIR: backupDir, HOOKRELAY_LOG_FORMAT: "json" };
    const a = await spawnServe(tempDir("hookrelay-bk-node-a-"), { binary: true, env });
    servers.push(a);
    const b = await spawnServe(tempDir("hookrelay-bk-node-b-"), { binary: true, env });
    servers.push(b);
    const key = await adminKey(a.url);
    const cluster = await waitFor(async () => {
      const res = await api(a.url, key, "GET", "/v1/cluster");
      const nodes = res.body.nodes as { address: string; scheduler: boolean }[];
      return nodes?.length === 2 && nodes.some((n) => n.scheduler) ? nodes : null;
    }, { what: "two nodes, one the scheduler" });
    const scheduled = await waitFor(async () => {
      const files = readdirSync(backupDir).filter((f) => /^hookrelay-scheduled-.*\.hrbk$/.test(f));
      return files.length > 0 ? files : null;
    }, { what: "a scheduled backup" });
    expect(scheduled).toHaveLength(1);
    const scheduler = cluster.find((n) => n.scheduler)!;
    const [writer, other] = scheduler.address === a.url ? [a, b] : [b, a];
    await waitFor(async () => writer.output().includes("scheduled backup written") || null, { what: "the scheduler's log line" });
    expect(other.output()).not.toContain("scheduled backup written");
    // It is a sound archive: restored into a data dir.
    const restored = await cli(["backup", "restore", join(backupDir, scheduled[0]!), "--data-dir", tempDir("hookrelay-bk-from-scheduled-"), "--json"], { env: cliEnvOf(), binary: true });
    expect(restored.code, restored.stderr).toBe(0);
  }, 120_000);
});
