/**
 * Tracing's cost (docs/performance.md, "Tracing"): the same load on the
 * compiled binary with tracing off and on (every request sampled,
 * OTEL_TRACES_SAMPLER=always_on, exported to a local receiver). Both servers
 * run for the whole benchmark and take the load by turns, in short bursts
 * (off on, on off, off on, ...): this machine's speed drifts by tens of
 * percent within minutes, and bursts a few seconds apart see the same
 * machine, where whole runs one after the other did not. Goal: on ≥ 90% of
 * off. `bench:ingest -- --tracing`, `bench:delivery -- --tracing`.
 */
import { join } from "node:path";
import { adminKey, api, cpuSeconds, load, loadAsync, root, startBunProcess, startHookrelay, type Proc } from "./lib";

type Mode = "off" | "on";

/** One burst: what one server did while it alone had the load. */
export interface TracingBurst {
  mode: Mode;
  /** Requests (or deliveries) a second during the burst. */
  rate: number;
  count: number;
}

export interface TracingResult {
  bursts: TracingBurst[];
  /** Per mode, over every burst: the server's CPU time (user + system, all threads) per request or delivery, µs. */
  cpuMicros: Record<Mode, number>;
  /** The same, the main thread alone (the JavaScript thread, which limits the rate). */
  mainMicros: Record<Mode, number>;
  /** Spans the receiver got from the traced server. */
  spans: number;
}

async function receiver(): Promise<Proc> {
  return startBunProcess([join(root, "scripts/bench/otlpSink.ts")]);
}

async function spansAt(r: Proc): Promise<number> {
  return ((await (await fetch(`${r.url}/stats`)).json()) as { spans: number }).spans;
}

/**
 * `--aa`: both servers untraced, to see how far apart two identical servers
 * measure on this machine (what a figure of the real comparison is worth).
 */
const aa = process.argv.includes("--aa");
const envFor = (mode: Mode, r: Proc): Record<string, string> => (mode === "on" && !aa ? { OTEL_EXPORTER_OTLP_ENDPOINT: r.url, OTEL_TRACES_SAMPLER: "always_on" } : {});

/** The turns of `pairs` pairs: off on, on off, ... so neither mode always goes first. */
function turns(pairs: number): Mode[] {
  const out: Mode[] = [];
  for (let i = 0; i < pairs; i++) out.push(...(i % 2 === 0 ? (["off", "on"] as const) : (["on", "off"] as const)));
  return out;
}

/** The traced server's last spans leave within the batch delay (1 s): waited out after every burst, so none is exported during the other server's. */
const SETTLE_MS = 1300;

/** Ingest req/s (hmac verification on, NORMAL sync), off and on by turns, `pairs` pairs of `seconds`-long bursts. */
export async function benchIngestTracing(opts: { pairs: number; seconds: number; connections: number; body: string; headers: Record<string, string>; secret: string }): Promise<TracingResult> {
  const r = await receiver();
  const servers: Partial<Record<Mode, Proc & { ingestUrl: string }>> = {};
  try {
    for (const mode of ["off", "on"] as const) {
      const hr = await startHookrelay(envFor(mode, r));
      servers[mode] = Object.assign(hr, { ingestUrl: "" });
      const key = await adminKey(hr.url);
      const created = await api(hr.url, key, "POST", "/sources", { name: `bench-${mode}`, verification_enabled: true, verification_type: "hmac-sha256", verification_secret: opts.secret, verification_header: "x-signature" });
      servers[mode]!.ingestUrl = `${hr.url}/v1/ingest/${(created.source ?? created).id}`;
      // Warm up so the first burst is not start-up.
      load({ url: servers[mode]!.ingestUrl, connections: 8, seconds: 1, body: opts.body, headers: opts.headers });
    }
    await Bun.sleep(SETTLE_MS);
    const spansBefore = await spansAt(r);
    const cpuBefore = { off: cpuSeconds(servers.off!.pid), on: cpuSeconds(servers.on!.pid) };
    const bursts: TracingBurst[] = [];
    for (const mode of turns(opts.pairs)) {
      const result = load({ url: servers[mode]!.ingestUrl, connections: opts.connections, seconds: opts.seconds, body: opts.body, headers: opts.headers });
      bursts.push({ mode, rate: result.requestsPerSec, count: result.ok2xx });
      await Bun.sleep(SETTLE_MS);
    }
    return { bursts, ...cpuPer(bursts, cpuBefore, servers), spans: (await spansAt(r)) - spansBefore };
  } finally {
    for (const s of Object.values(servers)) await s?.stop();
    await r.stop();
  }
}

/**
 * Delivery drain rate, off and on by turns: both servers store `backlog`
 * events at once while their destinations are paused, then each resumes its
 * destination and is stopped (SIGSTOP) at once. Each turn lets one server run (SIGCONT) for `seconds`
 * and stops it again; what the sink received meanwhile is that server's, as
 * the other one is stopped. Pausing the destination instead would not do:
 * a worker learns of it only when its cached copy of the destination is
 * next read.
 */
export async function benchDeliveryTracing(opts: { pairs: number; seconds: number; backlog: number; concurrency: number; connections: number; sinkUrl: string; sinkCount: () => Promise<number> }): Promise<TracingResult> {
  const r = await receiver();
  const servers: Partial<Record<Mode, Proc>> = {};
  const resume = (mode: Mode) => process.kill(servers[mode]!.pid, "SIGCONT");
  const pause = (mode: Mode) => process.kill(servers[mode]!.pid, "SIGSTOP");
  try {
    const prepared: Partial<Record<Mode, { key: string; destinationId: string; ingestUrl: string }>> = {};
    for (const mode of ["off", "on"] as const) {
      const hr = await startHookrelay({ HOOKRELAY_DELIVERY_CONCURRENCY: String(opts.concurrency), ...envFor(mode, r) });
      servers[mode] = hr;
      const key = await adminKey(hr.url);
      const source = (await api(hr.url, key, "POST", "/sources", { name: "bench" })).source;
      const destination = (await api(hr.url, key, "POST", "/destinations", { name: "sink", url: `${opts.sinkUrl}/hook`, status: "paused" })).destination;
      await api(hr.url, key, "POST", "/connections", { name: "bench", source_id: source.id, destination_id: destination.id });
      prepared[mode] = { key, destinationId: destination.id, ingestUrl: `${hr.url}/v1/ingest/${source.id}` };
    }
    // Both backlogs are stored at once, so neither server's store is older or its start-up further back
    // (one filled after the other, the second measured about 6% faster than the first, both untraced).
    await Promise.all(
      (["off", "on"] as const).map(async (mode) => {
        let stored = 0;
        while (stored < opts.backlog) {
          const batch = await loadAsync({ url: prepared[mode]!.ingestUrl, connections: opts.connections / 2, seconds: 2, body: `{"type":"order.created","sent_at":0}`, headers: { "content-type": "application/json" } });
          stored += batch.ok2xx;
        }
      }),
    );
    // The ingest spans of the backlog leave before the turns start.
    await Bun.sleep(SETTLE_MS);
    for (const mode of ["off", "on"] as const) {
      const { url } = servers[mode]!;
      const { key, destinationId } = prepared[mode]!;
      await api(url, key, "PATCH", `/destinations/${destinationId}`, { status: "active" });
      pause(mode);
    }
    const spansBefore = await spansAt(r);
    const cpuBefore = { off: cpuSeconds(servers.off!.pid), on: cpuSeconds(servers.on!.pid) };
    const bursts: TracingBurst[] = [];
    const delivered = { off: 0, on: 0 };
    for (const mode of turns(opts.pairs)) {
      const before = await opts.sinkCount();
      resume(mode);
      await Bun.sleep(opts.seconds * 1000);
      pause(mode);
      // Requests sent before the stop still reach the sink.
      await Bun.sleep(200);
      const count = (await opts.sinkCount()) - before;
      delivered[mode] += count;
      if (delivered[mode] >= opts.backlog) throw new Error(`the ${mode} server's backlog ran out: raise --backlog`);
      bursts.push({ mode, rate: Math.round(count / opts.seconds), count });
    }
    // Read before the traced server runs again for its last spans to go out: it delivers meanwhile, uncounted.
    const cpu = cpuPer(bursts, cpuBefore, servers);
    resume("on");
    await Bun.sleep(SETTLE_MS);
    pause("on");
    return { bursts, ...cpu, spans: (await spansAt(r)) - spansBefore };
  } finally {
    for (const s of Object.values(servers)) {
      if (!s) continue;
      process.kill(s.pid, "SIGCONT");
      await s.stop();
    }
    await r.stop();
  }
}

function cpuPer(bursts: TracingBurst[], before: Record<Mode, ReturnType<typeof cpuSeconds>>, servers: Partial<Record<Mode, Proc>>) {
  const cpuMicros = { off: 0, on: 0 };
  const mainMicros = { off: 0, on: 0 };
  for (const mode of ["off", "on"] as const) {
    const after = cpuSeconds(servers[mode]!.pid);
    const count = bursts.filter((b) => b.mode === mode).reduce((sum, b) => sum + b.count, 0);
    cpuMicros[mode] = Math.round(((after.process - before[mode].process) / count) * 1e6);
    mainMicros[mode] = Math.round(((after.main - before[mode].main) / count) * 1e6);
  }
  return { cpuMicros, mainMicros };
}

/** The bursts, then on's share of off: pair by pair (median), and of the totals. */
export function printTracingRuns(what: string, result: TracingResult) {
  const { bursts } = result;
  console.log(`| burst | tracing | ${what} |`);
  console.log("| --- | --- | --- |");
  bursts.forEach((b, i) => console.log(`| ${i + 1} | ${b.mode} | ${b.rate} |`));
  const ratios: number[] = [];
  for (let i = 0; i + 1 < bursts.length; i += 2) {
    const on = bursts[i]!.mode === "on" ? bursts[i]! : bursts[i + 1]!;
    const off = bursts[i]!.mode === "off" ? bursts[i]! : bursts[i + 1]!;
    ratios.push(on.rate / off.rate);
  }
  const sorted = [...ratios].sort((a, b) => a - b);
  const median = sorted.length % 2 ? sorted[(sorted.length - 1) / 2]! : (sorted[sorted.length / 2 - 1]! + sorted[sorted.length / 2]!) / 2;
  const pct = (x: number) => `${Math.round(x * 100)}%`;
  const meanRate = (mode: Mode) => {
    const of = bursts.filter((b) => b.mode === mode);
    return of.reduce((s, b) => s + b.rate, 0) / of.length;
  };
  console.log(`\nrate on/off pair by pair: ${ratios.map(pct).join(" ")}; median ${pct(median)}; of the mean rates ${pct(meanRate("on") / meanRate("off"))} (goal ≥ 90%)`);
  // The server is CPU-bound under this load: the rate it can reach goes as 1 / CPU per operation.
  console.log(`CPU µs per operation, off / on: process ${result.cpuMicros.off} / ${result.cpuMicros.on} (${pct(result.cpuMicros.off / result.cpuMicros.on)}), main thread ${result.mainMicros.off} / ${result.mainMicros.on} (${pct(result.mainMicros.off / result.mainMicros.on)})`);
  console.log(`spans exported by the traced server during the bursts: ${result.spans}`);
}
