import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { createHmac } from "node:crypto";
import { copyFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { FIXTURE_SECRET_KEY } from "../../scripts/make-upgrade-fixture";
import { cli, ensureBinary, BINARY } from "../cli/helpers";
import { describeOnly, emptyDatabaseUrl } from "../helpers/database";
import { tempDir } from "../helpers/server";
import { startSink, type Sink } from "../helpers/sink";
import { waitFor } from "../helpers/delivery";
import { spawnServe, type ServeProcess } from "./helpers";

/**
 * `hookrelay migrate` with the compiled binary (docs/operations.md, "Moving
 * between stores"): the 0.1.0 release's database, upgraded by opening it,
 * moved to PostgreSQL and back to a new data dir. Every table's count and
 * checksum is checked by migrate itself; here the API's listings are
 * compared, and each side is served: an old ingest URL still ingests, the
 * deliveries queued before the move go out after it, each exactly once.
 */
const fixtureDir = join(import.meta.dirname, "../fixtures/db");
const fixture = JSON.parse(readFileSync(join(fixtureDir, "0.1.0.json"), "utf8")) as { api_key: string; source_id: string; verification_secret: string };

/** SQLite (no database URL) or PostgreSQL, with the fixture's secret key either way; one public URL, so ingest URLs compare equal whichever port a server has. */
const BASE_URL = "https://hooks.example.test";
const sqliteEnv = { HOOKRELAY_DATABASE_URL: "", HOOKRELAY_SECRET_KEY: FIXTURE_SECRET_KEY, HOOKRELAY_BASE_URL: BASE_URL };
const pgEnv = (url: string) => ({ HOOKRELAY_DATABASE_URL: url, HOOKRELAY_SECRET_KEY: FIXTURE_SECRET_KEY, HOOKRELAY_BASE_URL: BASE_URL });
const cliEnvOf = (extra: Record<string, string> = {}) => ({ PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: tempDir("hookrelay-migrate-home-"), NO_COLOR: "1", ...extra });

async function api(server: ServeProcess, method: string, path: string, body?: unknown) {
  const res = await fetch(server.url + "/v1" + path, { method, headers: { "x-api-key": fixture.api_key, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as any };
}

let ingestCount = 0;
/** A request to the fixture source's ingest URL as GitHub signs it; answers the event id. */
async function ingest(server: ServeProcess): Promise<string> {
  const body = JSON.stringify({ action: "opened", n: ++ingestCount });
  const signature = "sha256=" + createHmac("sha256", fixture.verification_secret).update(body).digest("hex");
  const res = await fetch(`${server.url}/v1/ingest/${fixture.source_id}`, { method: "POST", headers: { "x-hub-signature-256": signature, "x-github-delivery": `migrate-${ingestCount}-${Date.now()}`, "content-type": "application/json" }, body });
  expect(res.status).toBe(200);
  return ((await res.json()) as { event_id: string }).event_id;
}

/** What an operator sees of the instance through the API: lists of configuration, events and attempts. */
async function listings(server: ServeProcess) {
  const get = async (path: string, key: string) => {
    const res = await api(server, "GET", path);
    expect(res.status, path).toBe(200);
    return res.body[key];
  };
  return {
    sources: await get("/sources?limit=100", "sources"),
    destinations: await get("/destinations?limit=100", "destinations"),
    connections: await get("/connections?limit=100", "connections"),
    events: await get("/events?limit=100", "events"),
    attempts: await get("/delivery-attempts?limit=100", "delivery_attempts"),
  };
}

/** The environment as `hookrelay export` writes it (docs/config-as-code.md), with its secrets: the same bytes on every store the data moved to. */
async function exported(server: ServeProcess): Promise<string> {
  const res = await fetch(server.url + "/v1/config/export?include_secrets=true", { headers: { "x-api-key": fixture.api_key } });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  expect(text).toContain("version: 1");
  return text;
}

/** Each request the sink got, by event id: a redelivery would count twice. */
const deliveriesById = (sink: Sink) => {
  const counts: Record<string, number> = {};
  for (const r of sink.requests) counts[r.headers["x-hookrelay-event-id"]!] = (counts[r.headers["x-hookrelay-event-id"]!] ?? 0) + 1;
  return counts;
};

describeOnly("postgres", "hookrelay migrate between a SQLite data dir and PostgreSQL", "it moves data between both stores: the run's PostgreSQL cluster is the other side", () => {
  const dirA = tempDir("hookrelay-migrate-a-");
  const dirB = tempDir("hookrelay-migrate-b-");
  let pgUrl: string;
  let sink: Sink;
  let server: ServeProcess | undefined;
  let destinationId: string;
  const queued: string[] = [];
  let onPg: Awaited<ReturnType<typeof listings>>;
  let exportOnPg: string;

  beforeAll(async () => {
    await ensureBinary();
    copyFileSync(join(fixtureDir, "0.1.0.db"), join(dirA, "hookrelay.db"));
    pgUrl = await emptyDatabaseUrl();
    sink = startSink();
  });
  afterAll(async () => {
    await server?.stop();
    sink?.close();
  });
  /** A failed test stops the server it started, so the next one finds its store free. */
  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });

  it("on the 0.1.0 database (upgraded by serving it), queues deliveries to a paused destination", async () => {
    server = await spawnServe(dirA, { binary: true, env: sqliteEnv });
    const dest = await api(server, "POST", "/destinations", { name: "after the move", url: sink.url, status: "paused" });
    expect(dest.status, JSON.stringify(dest.body)).toBe(201);
    destinationId = dest.body.destination.id;
    const conn = await api(server, "POST", "/connections", { name: "to the moved destination", source_id: fixture.source_id, destination_id: destinationId });
    expect(conn.status, JSON.stringify(conn.body)).toBe(201);
    for (let i = 0; i < 3; i++) queued.push(await ingest(server));
    await waitFor(async () => ((await api(server!, "GET", `/delivery-attempts?limit=100&destination_id=${destinationId}`)).body.delivery_attempts?.length ?? 0) >= 3 || null, { what: "three queued deliveries" });
    expect(await server.stop()).toBe(0);
    server = undefined;
  }, 90_000);

  it("copies it to PostgreSQL, table by table on stderr, every count and checksum checked", async () => {
    const run = await cli(["migrate", "--from", dirA, "--to", pgUrl, "--json"], { env: cliEnvOf(), binary: true });
    expect(run.stderr).toContain("verifying counts and checksums");
    expect(run.code, run.stderr).toBe(0);
    const result = run.json();
    expect(result.resumed).toBe(false);
    const byName = Object.fromEntries(result.tables.map((t: { name: string; rows: number }) => [t.name, t.rows]));
    expect(byName.events).toBeGreaterThanOrEqual(4);
    expect(byName.sources).toBeGreaterThanOrEqual(1);
    expect(run.stderr).toMatch(/\[\d+\/\d+\] events: copying \d+ rows/);
    // Counted apart from migrate's own check: every table of both stores, by SQL.
    const sqlite = new Database(join(dirA, "hookrelay.db"), { readonly: true });
    const pg = new SQL({ url: pgUrl, max: 1 });
    try {
      for (const { name, rows } of result.tables as { name: string; rows: number }[]) {
        const [{ n }] = (await pg.unsafe(`SELECT count(*)::int AS n FROM "${name}"`)) as [{ n: number }];
        const local = sqlite.query(`SELECT count(*) AS n FROM "${name}"`).get() as { n: number };
        expect([name, n, local.n]).toEqual([name, rows, rows]);
      }
      // The planner has statistics of what was copied (src/db/portable/loader.ts, refreshPlannerStatistics): never analyzed, reltuples is -1.
      const [{ n: estimated }] = (await pg.unsafe(`SELECT reltuples::int AS n FROM pg_class WHERE relname = 'events'`)) as [{ n: number }];
      expect(estimated).toBe(byName.events);
    } finally {
      sqlite.close();
      await pg.close();
    }
  }, 60_000);

  it("refuses a target that holds data, saying --resume continues an interrupted one", async () => {
    const run = await cli(["migrate", "--from", dirA, "--to", pgUrl], { env: cliEnvOf(), binary: true });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/holds data .*events \(\d+\).*--resume/);
  }, 60_000);

  it("refuses a source a server is running on, naming it", async () => {
    server = await spawnServe(dirA, { binary: true, env: sqliteEnv });
    const run = await cli(["migrate", "--from", dirA, "--to", await emptyDatabaseUrl()], { env: cliEnvOf(), binary: true });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`hookrelay serve (PID ${server.pid}) is running on data dir ${dirA}`);
  }, 60_000);

  it("serves on PostgreSQL: the same listings, the old ingest URL ingests, and the queued deliveries go out once the destination is resumed", async () => {
    const [before, exportBefore] = await (async () => {
      const s = await spawnServe(dirA, { binary: true, env: sqliteEnv });
      try {
        return [await listings(s), await exported(s)] as const;
      } finally {
        await s.stop();
      }
    })();
    server = await spawnServe(tempDir("hookrelay-migrate-pg-"), { binary: true, env: pgEnv(pgUrl) });
    expect(await listings(server)).toEqual(before);
    expect(await exported(server)).toBe(exportBefore);
    expect((await api(server, "PATCH", `/destinations/${destinationId}`, { status: "active" })).status).toBe(200);
    await sink.waitFor(3);
    const fresh = await ingest(server);
    await sink.waitFor(4);
    expect(deliveriesById(sink)).toEqual(Object.fromEntries([...queued, fresh].map((id) => [id, 1])));
    queued.push(fresh);
    onPg = await listings(server);
    exportOnPg = await exported(server);
    expect(await server.stop()).toBe(0);
    server = undefined;
  }, 90_000);

  it("copies PostgreSQL back into a new data dir, which serves the same listings and delivers nothing twice", async () => {
    const run = await cli(["migrate", "--from", pgUrl, "--to", dirB, "--json"], { env: cliEnvOf(), binary: true });
    expect(run.code, run.stderr).toBe(0);
    server = await spawnServe(dirB, { binary: true, env: sqliteEnv });
    expect(await listings(server)).toEqual(onPg);
    expect(await exported(server)).toBe(exportOnPg);
    const fresh = await ingest(server);
    await sink.waitFor(5);
    // The new event's delivery went out after the worker had the whole queue before it: nothing older was sent again.
    expect(deliveriesById(sink)).toEqual(Object.fromEntries([...queued, fresh].map((id) => [id, 1])));
    expect(await server.stop()).toBe(0);
    server = undefined;
  }, 90_000);

  it("continues an interrupted migrate with --resume, and refuses to continue without it", async () => {
    // Enough events that the copy takes a while: a kill lands inside it.
    const db = new Database(join(dirB, "hookrelay.db"));
    db.exec("BEGIN");
    const columns = (db.query("SELECT name FROM pragma_table_info('events')").all() as { name: string }[]).map((c) => c.name);
    const copy = db.prepare(`INSERT INTO events (${columns.join(", ")}) SELECT ${columns.map((c) => (c === "id" ? "?1" : c)).join(", ")} FROM events WHERE id = ?2`);
    for (let i = 0; i < 40_000; i++) copy.run(`evt_bulk_${String(i).padStart(6, "0")}`, queued[0]!);
    copy.finalize();
    db.exec("COMMIT");
    db.close();
    const target = await emptyDatabaseUrl();
    const proc = Bun.spawn([BINARY, "migrate", "--from", dirB, "--to", target], { env: cliEnvOf(), stdout: "pipe", stderr: "pipe" });
    const probe = new SQL({ url: target, max: 1 });
    try {
      await waitFor(
        async () => {
          const [row] = (await probe.unsafe("SELECT count(*)::int AS n FROM events").catch(() => [{ n: 0 }])) as { n: number }[];
          return row!.n > 0 || null;
        },
        { what: "the copy of events under way", intervalMs: 5 },
      );
      proc.kill("SIGKILL");
      await proc.exited;
      const [{ n }] = (await probe.unsafe("SELECT count(*)::int AS n FROM events")) as [{ n: number }];
      expect(n).toBeLessThan(40_000);

      const again = await cli(["migrate", "--from", dirB, "--to", target], { env: cliEnvOf(), binary: true });
      expect(again.code).toBe(1);
      expect(again.stderr).toContain("--resume");

      const resumed = await cli(["migrate", "--from", dirB, "--to", target, "--resume", "--json"], { env: cliEnvOf(), binary: true });
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stderr).toMatch(/sources: \d+ rows already copied/);
      const result = resumed.json();
      expect(result.resumed).toBe(true);
      expect(result.tables.find((t: { name: string }) => t.name === "sources").copied).toBe(false);
      const events = result.tables.find((t: { name: string }) => t.name === "events");
      expect(events.copied).toBe(true);
      expect(events.rows).toBeGreaterThan(40_000);
      const [{ n: after }] = (await probe.unsafe("SELECT count(*)::int AS n FROM events")) as [{ n: number }];
      expect(after).toBe(events.rows);
    } finally {
      proc.kill("SIGKILL");
      await probe.close();
    }
  }, 180_000);
});
