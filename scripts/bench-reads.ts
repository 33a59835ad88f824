/**
 * Reads at scale (docs/performance.md, "Reads at scale"): the medians of the
 * dashboard's and the lists' requests over HTTP against the compiled binary,
 * on a store filled with N events.
 * `bun scripts/bench-reads.ts [--sizes 50000,500000,1000000] [--stores sqlite,postgres] [--runs 15] [--span-days D]`
 * (`--span-days` is handed to scripts/fill.ts: 1 puts every event in the dashboard's window, a busy day).
 *
 * Per store: `serve` on a fresh data dir (or a throwaway PostgreSQL cluster,
 * test/helpers/postgres.ts), three sources, one destination (paused: the
 * worker has nothing to do) and a connection from each source; then for each
 * size, serve is stopped, scripts/fill.ts adds events up to the size, serve
 * starts again on the same store and every read is timed: two warm-up
 * requests, then `runs` timed ones, median and p90 in ms.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { startPgCluster, type PgCluster } from "../test/helpers/postgres";
import { adminKey, api, ensureBinary, machine, numberArg, root, startHookrelay } from "./bench/lib";

const listArg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return (i > 0 ? process.argv[i + 1]! : def).split(",");
};
const sizes = listArg("sizes", "50000,500000,1000000").map(Number);
const stores = listArg("stores", "sqlite,postgres");
const runs = numberArg("runs", 15);
const spanDays = process.argv.includes("--span-days") ? ["--span-days", String(numberArg("span-days", 365))] : [];
const SECRET_KEY = "bench secret key, the same on every start";

interface Read {
  name: string;
  path: string;
}
interface Figure {
  store: string;
  size: number;
  name: string;
  median: number;
  p90: number;
}

ensureBinary();
console.log(`machine: ${machine()}; load average ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`);
console.log(`sizes ${sizes.join(", ")}; ${runs} timed requests a read after 2 warm-ups\n`);

const figures: Figure[] = [];
for (const store of stores) await benchStore(store);

console.log("\n| read | " + stores.flatMap((s) => sizes.map((n) => `${s} ${n / 1000}k`)).join(" | ") + " |");
console.log("| --- | " + stores.flatMap(() => sizes.map(() => "---")).join(" | ") + " |");
for (const name of [...new Set(figures.map((f) => f.name))]) {
  const cells = stores.flatMap((s) => sizes.map((n) => figures.find((f) => f.store === s && f.size === n && f.name === name)));
  console.log(`| ${name} | ` + cells.map((f) => (f ? `${f.median.toFixed(1)} (p90 ${f.p90.toFixed(1)})` : "–")).join(" | ") + " |");
}

async function benchStore(store: string) {
  const pg: PgCluster | null = store === "postgres" ? await startPgCluster({ settings: ["-c synchronous_commit=off"] }) : null;
  const env: Record<string, string> = pg ? { HOOKRELAY_DATABASE_URL: pg.url, HOOKRELAY_SECRET_KEY: SECRET_KEY } : {};
  let hr = await startHookrelay(env);
  const dataDir = hr.dataDir;
  try {
    const key = await adminKey(hr.url);
    const destination = (await api(hr.url, key, "POST", "/destinations", { name: "sink", url: "http://127.0.0.1:9/hook" })).destination;
    await api(hr.url, key, "PATCH", `/destinations/${destination.id}`, { status: "paused" });
    const sourceIds: string[] = [];
    for (const name of ["stripe", "github", "shopify"]) {
      const source = (await api(hr.url, key, "POST", "/sources", { name })).source;
      sourceIds.push(source.id);
      await api(hr.url, key, "POST", "/connections", { name: `${name} to sink`, source_id: source.id, destination_id: destination.id });
    }
    let filled = 0;
    for (const size of sizes) {
      await stopKeepingData(hr);
      const fill = spawnSync("bun", [join(root, "scripts/fill.ts"), "--events", String(size - filled), ...spanDays, ...(pg ? ["--database-url", pg.url] : ["--data-dir", dataDir])], { cwd: root, stdio: ["ignore", "inherit", "inherit"] });
      if (fill.status !== 0) throw new Error("fill failed");
      filled = size;
      hr = await startHookrelay(env, dataDir);
      const anEvent = (await api(hr.url, key, "GET", "/events?limit=1&offset=1000")).events[0];
      const reads: Read[] = [
        { name: "GET /v1/stats (dashboard)", path: "/stats" },
        { name: "GET /v1/cluster (dashboard)", path: "/cluster" },
        { name: "events, first page", path: "/events?limit=50" },
        { name: "events, source_id", path: `/events?limit=50&source_id=${sourceIds[1]}` },
        { name: "events, status=failed", path: "/events?limit=50&status=failed" },
        { name: "events, source_id + status=failed", path: `/events?limit=50&status=failed&source_id=${sourceIds[2]}` },
        { name: "events, search id prefix", path: `/events?limit=50&search=${anEvent.id.slice(0, 16)}` },
        { name: "events, search body text", path: "/events?limit=50&search=cus_4242" },
        { name: "events, after (last 7 days)", path: `/events?limit=50&after=${new Date(Date.now() - 7 * 86400_000).toISOString()}` },
        { name: "events, offset 1000", path: "/events?limit=50&offset=1000" },
        { name: "attempts, first page", path: "/delivery-attempts?limit=50" },
        { name: "attempts, destination_id", path: `/delivery-attempts?limit=50&destination_id=${destination.id}` },
        { name: "attempts, status=failed", path: "/delivery-attempts?limit=50&status=failed" },
        { name: "attempts, is_dlq=1", path: "/delivery-attempts?limit=50&is_dlq=1" },
        { name: "attempts, event_id", path: `/delivery-attempts?limit=50&event_id=${anEvent.id}` },
      ];
      for (const read of reads) {
        const times = await timeRead(hr.url, key, read.path);
        record(store, size, read.name, times);
      }
      // A cursor walk: the 20th page's request alone, and the walk to it.
      const page20: number[] = [];
      const walk: number[] = [];
      for (let r = 0; r < Math.max(3, Math.floor(runs / 3)); r++) {
        let cursor: string | null = null;
        const w0 = performance.now();
        for (let p = 1; p <= 20; p++) {
          const t0 = performance.now();
          const body = await get(hr.url, key, `/events?limit=50${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
          if (p === 20) page20.push(performance.now() - t0);
          cursor = body.pagination.next_cursor;
        }
        walk.push(performance.now() - w0);
      }
      record(store, size, "events, cursor page 20", page20);
      record(store, size, "events, cursor walk pages 1-20 (whole walk)", walk);
    }
  } finally {
    await hr.stop();
    pg?.stop();
  }
}

function record(store: string, size: number, name: string, times: number[]) {
  const sorted = [...times].sort((a, b) => a - b);
  const f = { store, size, name, median: sorted[Math.floor(sorted.length / 2)]!, p90: sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.9))]! };
  figures.push(f);
  console.log(`${store} ${size}: ${name}: median ${f.median.toFixed(1)} ms, p90 ${f.p90.toFixed(1)} ms`);
}

async function get(base: string, key: string, path: string) {
  const res = await fetch(`${base}/v1${path}`, { headers: { "x-api-key": key } });
  const json = (await res.json()) as any;
  if (!res.ok) throw new Error(`GET ${path} → ${res.status} ${JSON.stringify(json)}`);
  return json;
}

async function timeRead(base: string, key: string, path: string): Promise<number[]> {
  for (let w = 0; w < 2; w++) await get(base, key, path);
  const times: number[] = [];
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now();
    await get(base, key, path);
    times.push(performance.now() - t0);
  }
  return times;
}

/** Stops serve without removing its data dir (Proc.stop removes it). */
async function stopKeepingData(hr: { child: import("node:child_process").ChildProcess }) {
  hr.child.kill("SIGTERM");
  await new Promise((r) => hr.child.once("exit", r));
}
