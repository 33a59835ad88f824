/**
 * Ingest throughput against a bare Bun server, same load, same machine.
 * `npm run bench:ingest [-- --seconds 10 --connections 64]`
 * `npm run bench:ingest -- --tracing [--pairs 8 --seconds 3]`: tracing off against on by turns of
 * `seconds`, every request sampled to a local OTLP receiver (scripts/bench/tracing.ts; goal ≥ 90%).
 * `npm run bench:ingest -- --collection [--rounds 2]`: ingest without and
 * with one collection attached to the source (docs/decisions.md D14: within 10%).
 * Goals (docs/performance.md): NORMAL ≥ 50% of bare req/s, FULL ≥ 30%, with
 * hmac-sha256 verification on and every 200 on disk; p99 at half of peak load
 * within 2× bare p99 + 10 ms.
 */
import { createHmac } from "node:crypto";
import { benchIngestTracing, printTracingRuns } from "./bench/tracing";
import { adminKey, api, cpuSeconds, ensureBinary, load, machine, numberArg, peakRssMiB, startBareServer, startHookrelay, type LoadResult } from "./bench/lib";

const tracing = process.argv.includes("--tracing");
// With --tracing, the length of each burst (scripts/bench/tracing.ts).
const seconds = numberArg("seconds", tracing ? 3 : 10);
const connections = numberArg("connections", 64);

const secret = "bench-secret";
const body = JSON.stringify({ type: "order.created", data: { id: "ord_123", amount: 4200, currency: "eur", items: [{ sku: "a", qty: 1 }] } });
const signature = "sha256=" + createHmac("sha256", secret).update(body).digest("hex");
const headers = { "content-type": "application/json", "x-signature": signature };

ensureBinary();
console.log(`machine: ${machine()}; load: autocannon, ${connections} connections, ${seconds} s per ${tracing ? "burst" : "run"}\n`);

if (tracing) {
  printTracingRuns("req/s", await benchIngestTracing({ pairs: numberArg("pairs", 8), seconds, connections, body, headers, secret }));
  process.exit(0);
}

if (process.argv.includes("--collection")) {
  await benchWithCollection();
  process.exit(0);
}

/** The server's CPU per acknowledged request during one load, µs: all threads and the main thread (steadier than req/s on a shared machine). */
function measured(pid: number, run: () => LoadResult): LoadResult & { cpu: number; main: number } {
  const before = cpuSeconds(pid);
  const result = run();
  const after = cpuSeconds(pid);
  const micros = (s: number) => Math.round((s / Math.max(1, result.ok2xx)) * 1e6);
  return { ...result, cpu: micros(after.process - before.process), main: micros(after.main - before.main) };
}

const bare = await startBareServer();
const bareResult = measured(bare.pid, () => load({ url: `${bare.url}/`, connections, seconds, body, headers }));
const bareHalf = load({ url: `${bare.url}/`, connections, seconds, body, headers, rate: Math.round(bareResult.requestsPerSec / 2) });
const bareRss = peakRssMiB(bare.pid);
await bare.stop();

const rows: string[][] = [["server", "req/s", "p50 ms", "p99 ms", "p99 at ½ peak", "peak RSS MiB", "ratio", "CPU µs/req (main)", "CPU ratio", "200s", "stored"]];
rows.push(["bare Bun.serve", String(bareResult.requestsPerSec), String(bareResult.p50), String(bareResult.p99), String(bareHalf.p99), String(bareRss), "100%", `${bareResult.cpu} (${bareResult.main})`, "100%", String(bareResult.ok2xx), "-"]);

for (const sync of ["normal", "full"] as const) {
  const hr = await startHookrelay({ HOOKRELAY_SYNC: sync });
  const key = await adminKey(hr.url);
  const created = await api(hr.url, key, "POST", "/sources", {
    name: `bench-${sync}`,
    verification_enabled: true,
    verification_type: "hmac-sha256",
    verification_secret: secret,
    verification_header: "x-signature",
  });
  const source = created.source ?? created;
  const url = `${hr.url}/v1/ingest/${source.id}`;
  // Warm up so the first seconds of the measured run are not start-up.
  load({ url, connections: 8, seconds: 1, body, headers });
  const before = await storedCount(hr.url, key, source.id);
  const full = measured(hr.pid, () => load({ url, connections, seconds, body, headers }));
  const half = load({ url, connections, seconds, body, headers, rate: Math.round(full.requestsPerSec / 2) });
  const stored = (await storedCount(hr.url, key, source.id)) - before;
  const acknowledged = full.ok2xx + half.ok2xx;
  const rss = peakRssMiB(hr.pid);
  rows.push([`hookrelay (${sync.toUpperCase()})`, String(full.requestsPerSec), String(full.p50), String(full.p99), String(half.p99), String(rss), `${Math.round((full.requestsPerSec / bareResult.requestsPerSec) * 100)}%`, `${full.cpu} (${full.main})`, `${Math.round((bareResult.cpu / full.cpu) * 100)}%`, String(acknowledged), String(stored)]);
  if (stored < acknowledged) console.error(`LOST EVENTS with sync=${sync}: ${acknowledged} acknowledged, ${stored} stored`);
  if (full.non2xx + half.non2xx + full.errors + half.errors > 0) console.error(`sync=${sync}: ${full.non2xx + half.non2xx} non-2xx, ${full.errors + half.errors} errors`);
  await hr.stop();
}

const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
for (const r of rows) console.log("| " + r.map((c, i) => c.padEnd(widths[i]!)).join(" | ") + " |");

async function storedCount(base: string, key: string, sourceId: string) {
  const page = await api(base, key, "GET", `/events?source_id=${sourceId}&limit=1`);
  return page.pagination.total as number;
}

/**
 * The same source without and with one collection built from it, in
 * interleaved pairs (the machine's speed drifts). Every request carries a
 * new customer id, so each event creates a record and a changelog entry:
 * the builder's most expensive case. Verification is off in both runs so
 * the two differ only by the collection. After the load, how long the
 * builder took to catch up with what was ingested.
 */
async function benchWithCollection() {
  const rounds = numberArg("rounds", 1);
  const varied = JSON.stringify({ type: "customer.updated", data: { id: "cus_[<id>]", email: "someone@example.com", plan: "pro", currency: "eur" } });
  const jsonHeaders = { "content-type": "application/json" };
  const rows: string[][] = [["server (NORMAL)", "req/s", "p50 ms", "p99 ms", "200s", "stored", "records", "caught up after s"]];
  const rates: Record<string, number[]> = { without: [], with: [] };
  for (let round = 0; round < rounds; round++) {
    for (const mode of ["without", "with"] as const) {
      const hr = await startHookrelay({ HOOKRELAY_SYNC: "normal" });
      const key = await adminKey(hr.url);
      const source = (await api(hr.url, key, "POST", "/sources", { name: `bench-${mode}` })).source;
      const collection = mode === "with" ? (await api(hr.url, key, "POST", "/collections", { source_id: source.id, key_path: "data.id" })).collection : null;
      const url = `${hr.url}/v1/ingest/${source.id}`;
      load({ url, connections: 8, seconds: 1, body: varied, headers: jsonHeaders, idReplacement: true });
      const before = await storedCount(hr.url, key, source.id);
      const run = load({ url, connections, seconds, body: varied, headers: jsonHeaders, idReplacement: true });
      const stored = (await storedCount(hr.url, key, source.id)) - before;
      let records = "-";
      let caughtUp = "-";
      if (collection) {
        const started = performance.now();
        for (;;) {
          const c = (await api(hr.url, key, "GET", `/collections/${collection.id}`)).collection;
          if (c.events_pending === 0) {
            records = String(c.record_count);
            break;
          }
          await Bun.sleep(50);
        }
        caughtUp = ((performance.now() - started) / 1000).toFixed(1);
      }
      rates[mode]!.push(run.requestsPerSec);
      rows.push([`${mode} a collection`, String(run.requestsPerSec), String(run.p50), String(run.p99), String(run.ok2xx), String(stored), records, caughtUp]);
      if (run.non2xx + run.errors > 0) console.error(`${mode}: ${run.non2xx} non-2xx, ${run.errors} errors`);
      await hr.stop();
    }
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const r of rows) console.log("| " + r.map((c, i) => c.padEnd(widths[i]!)).join(" | ") + " |");
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const ratio = mean(rates.with!) / mean(rates.without!);
  console.log(`\nwith a collection: ${Math.round(ratio * 1000) / 10}% of the throughput without (goal: at least 90%)`);
}
