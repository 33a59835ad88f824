/**
 * Events search, two builds by turns on one filled store (docs/performance.md,
 * "Reads at scale"): the server's CPU per request and the wall median of each
 * search read, build A then B then A … on the same data, so a drift of the
 * machine's speed falls on both.
 * `bun scripts/bench-search.ts --a <binary A> [--b dist/hookrelay] [--store sqlite|postgres] [--events 500000] [--rounds 4] [--runs 15]`
 * `--data-dir <dir> [--database-url <url>]` reuses a store filled before (as by
 * scripts/bench-reads.ts or scripts/fill.ts, with the bench admin) instead of filling a new one;
 * `--pg-data <cluster data dir>` also counts that cluster's CPU (its postmaster and backends),
 * where a PostgreSQL search spends most of its time.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startPgCluster } from "../test/helpers/postgres";
import { ADMIN, adminKey, api, cpuSeconds, machine, numberArg, root } from "./bench/lib";

const strArg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : def;
};
const builds = { A: strArg("a", ""), B: strArg("b", join(root, "dist/hookrelay")) };
if (!builds.A) throw new Error("--a <binary> is required");
const store = strArg("store", "sqlite");
const total = numberArg("events", 500_000);
const rounds = numberArg("rounds", 4);
const runs = numberArg("runs", 15);
const SECRET_KEY = "bench secret key, the same on every start";

const reuse = strArg("data-dir", "");
const givenUrl = strArg("database-url", "");
const pg = store === "postgres" && !givenUrl ? await startPgCluster({ settings: ["-c synchronous_commit=off"] }) : null;
const databaseUrl = givenUrl || pg?.url;
const env: Record<string, string> = databaseUrl ? { HOOKRELAY_DATABASE_URL: databaseUrl, HOOKRELAY_SECRET_KEY: SECRET_KEY } : {};
const dataDir = reuse || mkdtempSync(join(tmpdir(), "hookrelay-bench-search-"));

interface Server {
  child: ChildProcess;
  url: string;
  pid: number;
}
async function serve(bin: string): Promise<Server> {
  const child = spawn(bin, ["serve", "--port", "0", "--host", "127.0.0.1", "--data-dir", dataDir, "--log-level", "warn"], {
    env: { ...process.env, HOOKRELAY_ADMIN_EMAIL: ADMIN.email, HOOKRELAY_ADMIN_PASSWORD: ADMIN.password, ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let seen = "";
    child.stderr!.on("data", (d: Buffer) => {
      seen += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(seen);
      if (m) resolve(m[1]!);
    });
    child.once("exit", (code) => reject(new Error(`serve exited ${code}: ${seen}`)));
  });
  return { child, url, pid: child.pid! };
}
async function halt(s: Server) {
  s.child.kill("SIGTERM");
  await new Promise((r) => s.child.once("exit", r));
}

console.log(`machine: ${machine()}; load average ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`);
let s = await serve(builds.A);
const key = await adminKey(s.url);
const sourceIds: string[] = [];
if (reuse) {
  for (const source of (await api(s.url, key, "GET", "/sources")).sources) sourceIds.push(source.id);
  await halt(s);
} else {
  const destination = (await api(s.url, key, "POST", "/destinations", { name: "sink", url: "http://127.0.0.1:9/hook" })).destination;
  await api(s.url, key, "PATCH", `/destinations/${destination.id}`, { status: "paused" });
  for (const name of ["stripe", "github", "shopify"]) {
    const source = (await api(s.url, key, "POST", "/sources", { name })).source;
    sourceIds.push(source.id);
    await api(s.url, key, "POST", "/connections", { name: `${name} to sink`, source_id: source.id, destination_id: destination.id });
  }
  await halt(s);
  const t0 = performance.now();
  const fill = spawnSync("bun", [join(root, "scripts/fill.ts"), "--events", String(total), ...(databaseUrl ? ["--database-url", databaseUrl] : ["--data-dir", dataDir])], { cwd: root, stdio: ["ignore", "ignore", "inherit"] });
  if (fill.status !== 0) throw new Error("fill failed");
  console.log(`${store}: filled ${total} events in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

s = await serve(builds.A);
const anEvent = (await api(s.url, key, "GET", "/events?limit=1&offset=1000")).events[0];
await halt(s);
const reads = [
  { name: "search id prefix", path: `/events?limit=50&search=${anEvent.id.slice(0, 16)}` },
  { name: "search body text", path: "/events?limit=50&search=cus_4242" },
  { name: "search, no match", path: "/events?limit=50&search=no-such-text" },
  { name: "search + source_id", path: `/events?limit=50&search=cus_42&source_id=${sourceIds[1]}` },
];

const pgData = strArg("pg-data", "");
/** CPU seconds of the cluster: the postmaster and its children (the backends serving hookrelay). */
function pgCpuSeconds(): number {
  if (!pgData) return 0;
  const postmaster = Number(readFileSync(join(pgData, "postmaster.pid"), "utf8").split("\n")[0]);
  let sum = 0;
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
      if (Number(pid) === postmaster || Number(fields[1]) === postmaster) sum += (Number(fields[11]) + Number(fields[12])) / 100;
    } catch {
      // gone meanwhile
    }
  }
  return sum;
}

const results: Record<string, Record<string, { wall: number[]; cpu: number[]; db: number[] }>> = {};
for (let r = 0; r < rounds; r++) {
  for (const [label, bin] of Object.entries(builds)) {
    s = await serve(bin);
    for (const read of reads) {
      for (let w = 0; w < 2; w++) await get(s.url, read.path);
      const wall: number[] = [];
      const c0 = cpuSeconds(s.pid).process;
      const d0 = pgCpuSeconds();
      for (let i = 0; i < runs; i++) {
        const w0 = performance.now();
        await get(s.url, read.path);
        wall.push(performance.now() - w0);
      }
      const cpu = ((cpuSeconds(s.pid).process - c0) * 1000) / runs;
      const db = ((pgCpuSeconds() - d0) * 1000) / runs;
      const slot = ((results[read.name] ??= {})[label] ??= { wall: [], cpu: [], db: [] });
      slot.wall.push(median(wall));
      slot.cpu.push(cpu);
      slot.db.push(db);
    }
    await halt(s);
  }
}
console.log(`load average after: ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`);
console.log(`\n${store} ${reuse ? "(reused store)" : `${total / 1000}k`}, ${rounds} rounds A B, ${runs} requests each: median over rounds of (wall median ms; server CPU ms per request)`);
console.log(`| read | A wall | B wall | A CPU/req | B CPU/req | CPU A/B |${pgData ? " A db CPU/req | B db CPU/req | db CPU A/B |" : ""}`);
console.log(`| --- | --- | --- | --- | --- | --- |${pgData ? " --- | --- | --- |" : ""}`);
for (const [name, by] of Object.entries(results)) {
  const a = by.A!;
  const b = by.B!;
  console.log(`| ${name} | ${median(a.wall).toFixed(1)} | ${median(b.wall).toFixed(1)} | ${median(a.cpu).toFixed(1)} | ${median(b.cpu).toFixed(1)} | ${(median(a.cpu) / Math.max(0.01, median(b.cpu))).toFixed(2)} |${pgData ? ` ${median(a.db).toFixed(1)} | ${median(b.db).toFixed(1)} | ${(median(a.db) / Math.max(0.01, median(b.db))).toFixed(2)} |` : ""}`);
}
pg?.stop();
if (!reuse) rmSync(dataDir, { recursive: true, force: true });

function median(xs: number[]) {
  const s = [...xs].sort((x, y) => x - y);
  return s[Math.floor(s.length / 2)]!;
}
async function get(base: string, path: string) {
  const res = await fetch(`${base}/v1${path}`, { headers: { "x-api-key": key } });
  const json = (await res.json()) as any;
  if (!res.ok) throw new Error(`GET ${path} → ${res.status} ${JSON.stringify(json)}`);
  return json;
}
