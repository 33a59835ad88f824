/**
 * The compiled binary on PostgreSQL against the same binary on SQLite (docs/decisions.md D12), and two
 * nodes on one PostgreSQL against one (docs/decisions.md D13).
 * `npm run bench:postgres [-- --seconds 10 --connections 64 --concurrency 32 --rounds 1 --durable --statements]`
 * `npm run bench:postgres -- --nodes 2`: PostgreSQL only, one node then two on the same database.
 *
 * Each run, on a fresh store (a throwaway PostgreSQL cluster on this machine, test/helpers/postgres.ts,
 * or a fresh SQLite data dir), with a local receiver (scripts/bench/sink.ts) behind one
 * source → connection → destination, the destination paused:
 * 1. ingest: autocannon (64 connections in all, split over the nodes' ports) POSTs to the source for
 *    `seconds`: acknowledged events/s, and every 200 checked stored. Each event is routed to a queued
 *    delivery, so the run also builds the backlog for 2.
 * 2. drain: once every event is routed, the destination is resumed (on every node: until nodes hear
 *    each other's edits, a node's worker wakes on its own edit or its slow poll) and the time until the
 *    receiver has the whole backlog is measured: deliveries/s.
 * For both, CPU per event from /proc/<pid>/stat: the serve processes, and PostgreSQL's processes (the
 * postmaster, its live backends and workers, and what its exited children used), so the result carries
 * to a machine where the database has cores of its own.
 *
 * The cluster runs PostgreSQL's defaults except `synchronous_commit=off` (a commit is acknowledged
 * before its WAL is flushed: durable across a crash of hookrelay or of PostgreSQL's processes, not of
 * the machine; SQLite's default NORMAL is the same promise). `--durable` keeps synchronous_commit on.
 * `--statements` loads pg_stat_statements and prints, per run, the statements by total time with their
 * calls per event: the round trips each phase costs.
 * Goals (docs/decisions.md D14): ≥ 5,000 events/s ingested, ≥ 5,000 deliveries/s drained on PostgreSQL.
 * Goal (docs/decisions.md D14): a second node adds throughput rather than contention.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { SQL } from "bun";
import { startPgCluster, type PgCluster } from "../test/helpers/postgres";
import { adminKey, api, ensureBinary, loadAsync, machine, numberArg, root, startBunProcess, startHookrelay, type Proc, metric, until } from "./bench/lib";

const nodeCounts = numberArg("nodes", 1) > 1 ? [1, numberArg("nodes", 1)] : [1];
const seconds = numberArg("seconds", 10);
const connections = numberArg("connections", 64);
const concurrency = numberArg("concurrency", 32);
const rounds = numberArg("rounds", 1);
const durable = process.argv.includes("--durable");
const statements = process.argv.includes("--statements");

const body = JSON.stringify({ type: "order.created", data: { id: "ord_123", amount: 4200, currency: "eur", items: [{ sku: "a", qty: 1 }] } });
const headers = { "content-type": "application/json" };
const SECRET_KEY = "bench secret key, the same on every node";

type Store = "sqlite" | "postgres";
interface Run {
  store: Store;
  nodes: number;
  acked: number;
  stored: number;
  ingestRate: number;
  ingestP99: number;
  ingestCpu: Cpu;
  backlog: number;
  drainRate: number;
  drainSeconds: number;
  drainCpu: Cpu;
  deliveredBy: number[];
  top: string[];
}
/** CPU µs per event: the serve processes together, and PostgreSQL's. */
interface Cpu {
  serve: number;
  pg: number;
}

ensureBinary();
const pgSettings = [...(process.env.BENCH_PG_SETTINGS ? [process.env.BENCH_PG_SETTINGS] : []), ...(durable ? [] : ["-c synchronous_commit=off"]), ...(statements ? ["-c shared_preload_libraries=pg_stat_statements", "-c pg_stat_statements.track=all"] : [])];
console.log(`machine: ${machine()}; load average ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`);
console.log(`ingest: autocannon, ${connections} connections, ${seconds} s; delivery concurrency ${concurrency} per node; PostgreSQL 15${pgSettings.length ? ` with ${pgSettings.join(" ")}` : " defaults"}\n`);

const plan: [Store, number][] = nodeCounts.length > 1 ? nodeCounts.map((n) => ["postgres", n]) : [["sqlite", 1], ["postgres", 1]];
const runs: Run[] = [];
for (let round = 0; round < rounds; round++) {
  for (const [store, nodes] of plan) {
    const r = await benchRun(store, nodes);
    runs.push(r);
    console.log(
      `${label(r)}: ingested ${r.acked} (stored ${r.stored}) at ${r.ingestRate}/s, p99 ${r.ingestP99} ms; drained ${r.backlog} in ${r.drainSeconds.toFixed(1)} s at ${r.drainRate}/s (per node ${r.deliveredBy.join(" + ")}); CPU µs per event ingest ${fmtCpu(r.ingestCpu)}, per delivery ${fmtCpu(r.drainCpu)}`,
    );
    if (r.top.length) console.log(r.top.map((l) => `    ${l}`).join("\n"));
  }
}

console.log("");
const rows: string[][] = [["store, nodes", "ingest events/s", "p99 ms", "CPU µs/event serve + pg", "drain deliveries/s", "backlog", "CPU µs/delivery serve + pg", "delivered per node"]];
for (const r of runs) rows.push([label(r), String(r.ingestRate), String(r.ingestP99), fmtCpu(r.ingestCpu), String(r.drainRate), String(r.backlog), fmtCpu(r.drainCpu), r.deliveredBy.join(" / ")]);
const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
for (const r of rows) console.log("| " + r.map((c, i) => c.padEnd(widths[i]!)).join(" | ") + " |");

function label(r: Run) {
  return `${r.store === "postgres" ? "PostgreSQL" : "SQLite"}, ${r.nodes} node${r.nodes > 1 ? "s" : ""}`;
}
function fmtCpu(c: Cpu) {
  return `${c.serve} + ${c.pg}`;
}

async function benchRun(store: Store, nodeCount: number): Promise<Run> {
  const pg = store === "postgres" ? await startPgCluster({ settings: pgSettings }) : null;
  const sink = await startBunProcess([join(root, "scripts/bench/sink.ts")]);
  const nodes: Proc[] = [];
  try {
    const env: Record<string, string> = { HOOKRELAY_DELIVERY_CONCURRENCY: String(concurrency), ...(pg ? { HOOKRELAY_DATABASE_URL: pg.url, HOOKRELAY_SECRET_KEY: SECRET_KEY } : {}) };
    // The first node migrates and creates the admin; the others join a database that has both.
    nodes.push(await startHookrelay(env));
    const key = await adminKey(nodes[0]!.url);
    const source = (await api(nodes[0]!.url, key, "POST", "/sources", { name: "bench" })).source;
    const destination = (await api(nodes[0]!.url, key, "POST", "/destinations", { name: "sink", url: `${sink.url}/hook` })).destination;
    await api(nodes[0]!.url, key, "PATCH", `/destinations/${destination.id}`, { status: "paused" });
    await api(nodes[0]!.url, key, "POST", "/connections", { name: "bench", source_id: source.id, destination_id: destination.id });
    while (nodes.length < nodeCount) nodes.push(await startHookrelay(env));
    const ingestUrls = nodes.map((n) => `${n.url}/v1/ingest/${source.id}`);
    const postgres = pg ? await pgProcesses(pg) : null;
    const cpu = () => ({ serve: nodes.reduce((s, n) => s + processCpu(n.pid), 0), pg: postgres ? postgres.cpu() : 0 });

    // A second of warm-up on every node (JIT, pools); its events join the backlog.
    await Promise.all(ingestUrls.map((url) => loadAsync({ url, connections: 8, seconds: 1, body, headers })));
    if (pg && statements) await resetStatements(pg);
    const ingestBefore = cpu();
    const loads = await Promise.all(ingestUrls.map((url) => loadAsync({ url, connections: Math.ceil(connections / nodeCount), seconds, body, headers })));
    const ingestAfter = cpu();
    const acked = loads.reduce((s, l) => s + l.ok2xx, 0);
    const failed = loads.reduce((s, l) => s + l.non2xx + l.errors, 0);
    if (failed > 0) console.error(`${store}, ${nodeCount} nodes: ${failed} requests not answered 200`);
    const top = pg && statements ? await topStatements(pg, acked, "ingest") : [];

    const stored = (await api(nodes[0]!.url, key, "GET", `/events?source_id=${source.id}&limit=1`)).pagination.total as number;
    if (stored < acked) console.error(`LOST EVENTS on ${store}: ${acked} acknowledged, ${stored} stored`);
    await until(async () => (await metric(nodes[0]!.url, "hookrelay_delivery_queue_depth")) >= stored, 300_000, "every event routed");
    const backlog = await metric(nodes[0]!.url, "hookrelay_delivery_queue_depth");

    if (pg && statements) await resetStatements(pg);
    const deliveredBefore = await Promise.all(nodes.map((n) => deliveredOk(n.url)));
    const drainBefore = cpu();
    const drainStart = performance.now();
    // Resumed on every node: each one's worker wakes on its own edit (no node hears another's yet).
    await Promise.all(nodes.map((n) => api(n.url, key, "PATCH", `/destinations/${destination.id}`, { status: "active" })));
    await until(async () => (await sinkCount(sink.url)) >= backlog, 600_000, "backlog drained");
    const drainSeconds = (performance.now() - drainStart) / 1000;
    const drainAfter = cpu();
    const deliveredBy = (await Promise.all(nodes.map((n) => deliveredOk(n.url)))).map((d, i) => d - deliveredBefore[i]!);
    if (pg && statements) top.push(...(await topStatements(pg, backlog, "drain")));

    const perEvent = (before: { serve: number; pg: number }, after: { serve: number; pg: number }, n: number): Cpu => ({
      serve: Math.round(((after.serve - before.serve) / n) * 1e6),
      pg: Math.round(((after.pg - before.pg) / n) * 1e6),
    });
    return {
      store,
      nodes: nodeCount,
      acked,
      stored,
      ingestRate: Math.round(acked / seconds),
      ingestP99: Math.max(...loads.map((l) => l.p99)),
      ingestCpu: perEvent(ingestBefore, ingestAfter, acked),
      backlog,
      drainRate: Math.round(backlog / drainSeconds),
      drainSeconds,
      drainCpu: perEvent(drainBefore, drainAfter, backlog),
      deliveredBy,
      top,
    };
  } finally {
    for (const n of nodes) await n.stop();
    await sink.stop();
    pg?.stop();
  }
}

/** CPU seconds (user + system) of one process so far, or 0 once it is gone. */
function processCpu(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/**
 * The cluster's processes: the postmaster (found by the port on its command line) and its children.
 * cpu() sums the postmaster's own time, what its exited children used (cutime + cstime, counted once
 * they are reaped), and every live child's.
 */
async function pgProcesses(pg: PgCluster) {
  const port = new URL(pg.url).port;
  const postmaster = readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .find((pid) => {
      try {
        const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
        return cmd[0]!.endsWith("/postgres") && cmd.join(" ").includes(`-p ${port}`);
      } catch {
        return false;
      }
    });
  if (!postmaster) throw new Error(`no postmaster on port ${port}`);
  const parentOf = (pid: string) => {
    try {
      return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")[1];
    } catch {
      return null;
    }
  };
  return {
    cpu() {
      const own = readFileSync(`/proc/${postmaster}/stat`, "utf8").split(") ")[1]!.split(" ");
      let total = (Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14])) / 100;
      for (const pid of readdirSync("/proc")) if (/^\d+$/.test(pid) && parentOf(pid) === postmaster) total += processCpu(Number(pid));
      return total;
    },
  };
}

async function resetStatements(pg: PgCluster) {
  const client = new SQL({ url: pg.url, max: 1 });
  await client`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`;
  await client`SELECT pg_stat_statements_reset()`;
  await client.close();
}

/** The statements of a phase by total time: calls per event, and the share of the phase's database time. */
async function topStatements(pg: PgCluster, events: number, phase: string): Promise<string[]> {
  const client = new SQL({ url: pg.url, max: 1 });
  const rows = (await client`
    SELECT calls::float8 AS calls, total_exec_time::float8 AS ms, rows::float8 AS rows, regexp_replace(query, '\\s+', ' ', 'g') AS query
    FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_statements%' ORDER BY total_exec_time DESC LIMIT 8`) as { calls: number; ms: number; rows: number; query: string }[];
  const [all] = (await client`SELECT sum(calls)::float8 AS calls, sum(total_exec_time)::float8 AS ms FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_statements%'`) as { calls: number; ms: number }[];
  await client.close();
  const lines = [`${phase}: ${(all!.calls / events).toFixed(3)} statements per event, ${Math.round((all!.ms * 1000) / events)} µs of execution per event`];
  for (const r of rows) lines.push(`${phase}: ${(r.calls / events).toFixed(3)}/event, ${Math.round((r.ms / all!.ms) * 100)}%, ${(r.rows / Math.max(r.calls, 1)).toFixed(1)} rows/call: ${r.query.slice(0, 160)}`);
  return lines;
}

async function deliveredOk(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  let n = 0;
  for (const m of text.matchAll(/^hookrelay_deliveries_total\{([^}]*)\} (\S+)$/gm)) if (m[1]!.includes('"success"')) n += Number(m[2]);
  return n;
}

async function sinkCount(base: string): Promise<number> {
  return ((await (await fetch(`${base}/stats`)).json()) as { count: number }).count;
}

