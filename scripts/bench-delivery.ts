/**
 * Delivery throughput and lag of the compiled binary against a bare fetch
 * loop to the same receiver, same machine, same concurrency.
 * `npm run bench:delivery [-- --backlog 100000 --seconds 10 --concurrency 32 --steady-rate 0 --drain-only]`
 * `npm run bench:delivery -- --ordered [--keys 1000 --backlog 20000] [--latency-ms 20]`: ordered delivery with 1,000 keys and with one
 * key against unordered (scripts/bench/ordered.ts; goals: ≥ 50% of unordered, one key at the round-trip rate).
 * `npm run bench:delivery -- --tracing [--pairs 6 --turn-seconds 1.5 --backlog 200000]`: the drain with tracing
 * off against on by turns of `turn-seconds`, every request sampled to a local OTLP receiver
 * (scripts/bench/tracing.ts; goal ≥ 90%).
 *
 * 1. bare: a loop of fetch POSTs from Bun to the sink, `concurrency` at once:
 *    the physical limit of this machine for these requests. The request is
 *    the one a delivery sends (captured from a first delivery: its headers,
 *    signature included, and body); a second loop sends a minimal request
 *    (one header), as rounds one to five measured it.
 * 2. drain: N events stored while the destination is paused, then resumed:
 *    deliveries/s draining the backlog, and the server's RSS with it queued.
 *    The bare loop with a delivery's request runs again right after: this
 *    machine's speed drifts within minutes, and a share is only as good as
 *    the bare rate it divides by, so the drain is held to both.
 * 3. steady: events sent at half of the ingest rate measured in 2 while
 *    deliveries run (after one unmeasured second at that rate): lag from the
 *    sender's timestamp to arrival at the sink (p50/p99), and whether the
 *    queue stays flat.
 * Goals (docs/decisions.md D14): drain ≥ 50% of bare (its share of each bare loop is printed); at half ingest peak the
 * backlog does not grow, lag p50 < 20 ms and p99 < 100 ms; RSS < 200 MB; RSS under 120 MB idle after the drain
 * (`--idle-seconds`, default 30: read 1 s, 5 s and that long after it).
 */
import { join } from "node:path";
import { benchDeliveryTracing, printTracingRuns } from "./bench/tracing";
import { benchOrdered } from "./bench/ordered";
import { adminKey, api, cpuSeconds, ensureBinary, machine, numberArg, peakRssMiB, resetPeakRss, root, rssMiB, rssPartsMiB, startBunProcess, startHookrelay, type Proc, metric, until } from "./bench/lib";

const backlog = numberArg("backlog", 100_000);
const seconds = numberArg("seconds", 10);
const concurrency = numberArg("concurrency", 32);
const ingestConnections = numberArg("connections", 64);
/** Steady-phase ingest rate; 0 (default): half the ingest peak measured in phase 2. */
const steadyRate = numberArg("steady-rate", 0);
/** How long the server idles after the drain before its RSS is read for the last time (the memory goal in docs/performance.md: RSS idle after draining 100k). */
const idleSeconds = numberArg("idle-seconds", 30);
/** The sink answers this many ms late (`--latency-ms 20`): a destination across a network, the one-key ordered goal's real setting. */
process.env.SINK_LATENCY_MS = String(numberArg("latency-ms", 0));

ensureBinary();
console.log(`machine: ${machine()}; delivery concurrency ${concurrency}; ${process.argv.includes("--tracing") ? "tracing off and on by turns" : `backlog ${backlog}; ${seconds} s runs`}\n`);

const sink = await startSink();
const results: [string, string][] = [];

if (process.argv.includes("--ordered")) {
  await benchOrdered({ sink, sinkCount: async () => (await sinkStats()).count, resetSink });
  await sink.stop();
  process.exit(0);
}

if (process.argv.includes("--tracing")) {
  const runs = await benchDeliveryTracing({ pairs: numberArg("pairs", 6), seconds: numberArg("turn-seconds", 1.5), backlog: numberArg("backlog", 200_000), concurrency, connections: ingestConnections, sinkUrl: sink.url, sinkCount: async () => (await sinkStats()).count });
  printTracingRuns("deliveries/s draining the backlog", runs);
  await sink.stop();
  process.exit(0);
}

// The server and its route first: one event delivered to the sink's /capture shows what a delivery sends.
const hr = await startHookrelay({ HOOKRELAY_DELIVERY_CONCURRENCY: String(concurrency) });
const key = await adminKey(hr.url);
const source = (await api(hr.url, key, "POST", "/sources", { name: "bench" })).source;
const destination = (await api(hr.url, key, "POST", "/destinations", { name: "sink", url: `${sink.url}/capture` })).destination;
await api(hr.url, key, "POST", "/connections", { name: "bench", source_id: source.id, destination_id: destination.id });
const ingestUrl = `${hr.url}/v1/ingest/${source.id}`;
await (await fetch(ingestUrl, { method: "POST", headers: { "content-type": "application/json" }, body: `{"type":"order.created","n":0}` })).arrayBuffer();
await until(async () => (await captured()) !== null, 30_000, "a first delivery");
const delivery = (await captured())!;
await api(hr.url, key, "PATCH", `/destinations/${destination.id}`, { url: `${sink.url}/hook`, status: "paused" });
// From here on: the setup's admin password hashing (argon2id, 64 MiB for a moment) is not the backlog's doing.
const rssAtSetup = peakRssMiB(hr.pid);
const peakReset = resetPeakRss(hr.pid);

// 1. The bare loops (the server idles meanwhile, its destination paused): the same request a delivery
// sends (its headers, signature included, and its body), which is the physical limit the drain is held
// to; and a minimal one (one header of ours), as every round before the sixth measured it.
const { host: _host, "content-length": _length, connection: _connection, ...deliveryHeaders } = delivery.headers;
const deliveryRequest = { method: delivery.method, headers: deliveryHeaders, body: delivery.body };
const bare = await measureBare("a delivery's request", `${sink.url}/bare`, deliveryRequest);
const bareMinimal = await measureBare("a minimal request", `${sink.url}/bare`, {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ type: "order.created", data: { id: "ord_123", amount: 4200 } }),
});
console.log(`  (a delivery's request: ${Object.keys(deliveryHeaders).length} headers besides host, content-length and connection; ${Buffer.byteLength(delivery.body)} bytes of body)`);

// 2. Drain a backlog.
const preload = await paced(ingestUrl, { total: backlog, rate: Infinity, connections: ingestConnections, stamp: false });
console.log(`preloaded ${preload.ok} events at ${preload.rate}/s (ingest peak with delivery paused)`);
await until(async () => (await metric(hr.url, "hookrelay_delivery_queue_depth")) >= preload.ok, 120_000, "every event routed");
const rssQueued = rssMiB(hr.pid);
const rssPeakQueued = peakRssMiB(hr.pid);
await resetSink();
const drainStart = performance.now();
const cpuBefore = cpuSeconds(hr.pid);
const sinkCpuBefore = cpuSeconds(sink.pid);
await api(hr.url, key, "PATCH", `/destinations/${destination.id}`, { status: "active" });
await until(async () => (await sinkStats()).count >= preload.ok, 600_000, "backlog drained");
const drainSeconds = (performance.now() - drainStart) / 1000;
const cpuAfter = cpuSeconds(hr.pid);
const cpuPerDelivery = (which: "process" | "main") => Math.round(((cpuAfter[which] - cpuBefore[which]) / preload.ok) * 1e6);
// The receiver shares the machine: on few cores its CPU per request bounds what is left for the server.
const sinkCpuPerDelivery = Math.round(((cpuSeconds(sink.pid).process - sinkCpuBefore.process) / preload.ok) * 1e6);
const drainRate = Math.round(preload.ok / drainSeconds);
const rssDrained = peakRssMiB(hr.pid);
// The memory goal is RSS idle after a drain (docs/performance.md): the server is left alone (its destination drained, nothing
// arriving) while the bare loop runs in this process, then for `idle-seconds` more; RSS is read along the way.
const idleFrom = performance.now();
const idleSamples: { at: number; rss: number }[] = [];
const idleSampler = setInterval(() => idleSamples.push({ at: (performance.now() - idleFrom) / 1000, rss: rssMiB(hr.pid) }), 500);
const bareAfter = await measureBare("a delivery's request, again after the drain", `${sink.url}/bare`, deliveryRequest);
const share = (rate: number) => `${Math.round((drainRate / rate) * 100)}%`;
const shareOfBare = `${share(bare.rate)} / ${share(bareAfter.rate)} of bare before / after it, ${share(bareMinimal.rate)} of the minimal bare`;
console.log(`drained ${preload.ok} in ${drainSeconds.toFixed(1)} s: ${drainRate}/s (${shareOfBare}); server CPU per delivery ${cpuPerDelivery("process")} µs, main thread ${cpuPerDelivery("main")} µs; receiver ${sinkCpuPerDelivery} µs`);
await Bun.sleep(Math.max(0, idleSeconds * 1000 - (performance.now() - idleFrom)));
clearInterval(idleSampler);
const idleParts = rssPartsMiB(hr.pid);
const idleAt = (s: number) => idleSamples.find((x) => x.at >= s)?.rss ?? idleParts.rss;
const rssIdle = `${idleAt(1)} / ${idleAt(5)} / ${idleParts.rss} (anonymous ${idleParts.anon}, binary and files ${idleParts.file}, shared ${idleParts.shmem})`;
if (process.env.BENCH_RSS_TIMELINE) console.log(`RSS after the drain, every 0.5 s: ${idleSamples.map((x) => x.rss).join(" ")}`);
console.log(`RSS idle after the drain, 1 s / 5 s / ${idleSeconds} s: ${rssIdle} MiB`);
results.push(["ingest peak while paused (events/s)", String(preload.rate)]);
results.push([`drain ${preload.ok} backlog (deliveries/s)`, `${drainRate} (${shareOfBare}), ${drainSeconds.toFixed(1)} s`]);
results.push(["server CPU per drained delivery: process / main thread; receiver (µs)", `${cpuPerDelivery("process")} / ${cpuPerDelivery("main")}; ${sinkCpuPerDelivery}`]);
results.push(["RSS with the backlog queued: now / peak while ingesting it (MiB)", `${rssQueued} / ${rssPeakQueued}`]);
results.push([`peak RSS through the drain (MiB${peakReset ? "" : ", since start"})`, String(rssDrained)]);
results.push([`RSS idle after the drain, 1 s / 5 s / ${idleSeconds} s after it (MiB)`, rssIdle]);
results.push(["peak RSS during the setup, admin login's password hash included (MiB)", String(rssAtSetup)]);

// 3. Steady state at half of the ingest peak.
if (process.argv.includes("--drain-only")) {
  await hr.stop();
  await sink.stop();
  printResults();
  process.exit(0);
}
const half = steadyRate || Math.round(preload.rate / 2);
// One second at the same rate first, not measured: the load generator opens its connections and the
// server's JIT settles on the mixed path (the first second's lag is mostly connection setup).
await resetSink();
const warmUp = await paced(ingestUrl, { total: half, rate: half, connections: ingestConnections, stamp: false });
await until(async () => (await sinkStats()).count >= warmUp.ok, 60_000, "warm-up deliveries");
await resetSink();
const depthBefore = await metric(hr.url, "hookrelay_delivery_queue_depth");
const steadyCpuBefore = cpuSeconds(hr.pid);
const steady = await paced(ingestUrl, { total: half * seconds, rate: half, connections: ingestConnections, stamp: true });
const depthAtEnd = await metric(hr.url, "hookrelay_delivery_queue_depth");
await until(async () => (await sinkStats()).count >= steady.ok, 120_000, "steady-state deliveries");
const lag = await sinkStats();
const steadyCpuAfter = cpuSeconds(hr.pid);
const steadyCpu = (which: "process" | "main") => Math.round(((steadyCpuAfter[which] - steadyCpuBefore[which]) / steady.ok) * 1e6);
console.log(
  `steady: sent ${steady.ok} at ${steady.rate}/s; server CPU per event (ingest and delivery) ${steadyCpu("process")} µs, main thread ${steadyCpu("main")} µs; queue depth ${depthBefore} → ${depthAtEnd}; lag p50 ${lag.p50} ms, p99 ${lag.p99} ms (first half ${lag.p99FirstHalf}, second half ${lag.p99SecondHalf}), max ${lag.max} ms`,
);
results.push([`steady ingest at ${steadyRate ? "" : "½ peak, "}${steady.rate}/s: queue depth before → at end`, `${depthBefore} → ${depthAtEnd}`]);
results.push(["receive → delivery lag p50 / p99 / max (ms)", `${lag.p50} / ${lag.p99} / ${lag.max}`]);
results.push(["lag p99, first half → second half of the run (ms; growing = falling behind)", `${lag.p99FirstHalf} → ${lag.p99SecondHalf}`]);
results.push(["server CPU per event, ingest and delivery: process / main thread (µs)", `${steadyCpu("process")} / ${steadyCpu("main")}`]);
results.push([`peak RSS from the preload to the end (MiB${peakReset ? "" : ", since start"})`, String(peakRssMiB(hr.pid))]);

await hr.stop();
await sink.stop();

printResults();

function printResults() {
  console.log("");
  const w = Math.max(...results.map(([k]) => k.length));
  console.log(`| ${"measure".padEnd(w)} | value |`);
  console.log(`|${"-".repeat(w + 2)}|-------|`);
  for (const [k, v] of results) console.log(`| ${k.padEnd(w)} | ${v} |`);
}

function startSink(): Promise<Proc> {
  return startBunProcess([join(root, "scripts/bench/sink.ts")]);
}

async function sinkStats(): Promise<{ count: number; p50: number; p99: number; max: number; p99FirstHalf: number; p99SecondHalf: number }> {
  return (await fetch(`${sink.url}/stats`)).json() as never;
}
async function resetSink() {
  await fetch(`${sink.url}/reset`, { method: "POST" });
}

async function captured(): Promise<{ method: string; headers: Record<string, string>; body: string } | null> {
  return (await fetch(`${sink.url}/captured`)).json() as never;
}

interface BareRequest {
  method: string;
  headers: Record<string, string>;
  body: string;
}

/** A bare loop with its CPU per request (this process, and the receiver), printed and added to the results. */
async function measureBare(label: string, url: string, request: BareRequest): Promise<{ rate: number }> {
  const cpuBefore = cpuSeconds(process.pid);
  const sinkCpuBefore = cpuSeconds(sink.pid);
  const rate = await bareLoop(url, request, concurrency, seconds);
  const cpuAfter = cpuSeconds(process.pid);
  const perRequest = (before: number, after: number) => Math.round(((after - before) / (rate * seconds)) * 1e6);
  const sinkCpu = perRequest(sinkCpuBefore.process, cpuSeconds(sink.pid).process);
  const cpu = `${perRequest(cpuBefore.process, cpuAfter.process)} / ${perRequest(cpuBefore.main, cpuAfter.main)}; ${sinkCpu}`;
  results.push([`bare fetch loop, ${label} (requests/s)`, String(rate)]);
  results.push([`bare loop, ${label}: CPU per request, process / main thread; receiver (µs)`, cpu]);
  console.log(`bare fetch loop, ${label}: ${rate}/s; CPU per request (process / main thread; receiver) ${cpu} µs`);
  return { rate };
}

/** `conc` fetch loops sending `request` to the sink for `secs` seconds: requests/s. */
async function bareLoop(url: string, request: BareRequest, conc: number, secs: number): Promise<number> {
  const end = performance.now() + secs * 1000;
  let n = 0;
  await Promise.all(
    Array.from({ length: conc }, async () => {
      while (performance.now() < end) {
        const res = await fetch(url, { method: request.method, headers: request.headers, body: request.body });
        await res.arrayBuffer();
        n++;
      }
    }),
  );
  return Math.round(n / secs);
}

/**
 * Sends `total` events to the ingest URL with up to `connections` in flight,
 * at most `rate` per second (Infinity: as fast as it goes). With `stamp`,
 * each body carries its send time for the sink's lag measure.
 */
async function paced(url: string, opts: { total: number; rate: number; connections: number; stamp: boolean }) {
  let next = 0;
  let ok = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: opts.connections }, async () => {
      for (;;) {
        const i = next++;
        if (i >= opts.total) return;
        if (opts.rate !== Infinity) {
          const due = started + (i / opts.rate) * 1000;
          const wait = due - performance.now();
          if (wait > 0) await Bun.sleep(wait);
        }
        const body = opts.stamp ? `{"type":"order.created","n":${i},"sent_at":${Date.now()}}` : `{"type":"order.created","n":${i}}`;
        const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body });
        await res.arrayBuffer();
        if (res.status === 200) ok++;
      }
    }),
  );
  return { ok, rate: Math.round(ok / ((performance.now() - started) / 1000)) };
}

