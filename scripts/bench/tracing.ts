/**
 * Tracing's cost (docs/performance.md, "Tracing"): the same load on the
 * compiled binary with tracing off and on (every request sampled,
 * OTEL_TRACES_SAMPLER=always_on, exported to a local receiver), in
 * interleaved pairs, since this machine's speed drifts within minutes.
 * Goal: on ≥ 90% of off. `bench:ingest -- --tracing`, `bench:delivery -- --tracing`.
 */
import { join } from "node:path";
import { adminKey, api, cpuSeconds, load, root, startBunProcess, startHookrelay, until, type Proc } from "./lib";

export interface TracingRun {
  mode: "off" | "on";
  rate: number;
  /** The server's CPU time (user + system, all threads) per request or delivery, µs: steadier than the rate on a busy machine. */
  cpuMicros: number;
  /** The same, its main thread alone (the JavaScript thread: the one that limits the rate; trace export runs on a worker). */
  mainMicros?: number;
  spans: number;
}

async function receiver(): Promise<Proc> {
  return startBunProcess([join(root, "scripts/bench/otlpSink.ts")]);
}

async function spansAt(r: Proc): Promise<number> {
  return ((await (await fetch(`${r.url}/stats`)).json()) as { spans: number }).spans;
}

const envFor = (mode: "off" | "on", r: Proc): Record<string, string> => (mode === "on" ? { OTEL_EXPORTER_OTLP_ENDPOINT: r.url, OTEL_TRACES_SAMPLER: "always_on" } : {});

/** Ingest req/s (hmac verification on, NORMAL sync) off and on, `rounds` pairs. */
export async function benchIngestTracing(opts: { rounds: number; seconds: number; connections: number; body: string; headers: Record<string, string>; secret: string }): Promise<TracingRun[]> {
  const r = await receiver();
  const runs: TracingRun[] = [];
  try {
    for (let round = 0; round < opts.rounds; round++) {
      for (const mode of round % 2 === 0 ? (["off", "on"] as const) : (["on", "off"] as const)) {
        const hr = await startHookrelay(envFor(mode, r));
        try {
          const key = await adminKey(hr.url);
          const created = await api(hr.url, key, "POST", "/sources", { name: `bench-${mode}`, verification_enabled: true, verification_type: "hmac-sha256", verification_secret: opts.secret, verification_header: "x-signature" });
          const url = `${hr.url}/v1/ingest/${(created.source ?? created).id}`;
          load({ url, connections: 8, seconds: 1, body: opts.body, headers: opts.headers });
          const before = await spansAt(r);
          const cpuBefore = cpuSeconds(hr.pid);
          const result = load({ url, connections: opts.connections, seconds: opts.seconds, body: opts.body, headers: opts.headers });
          // The spans of the run reach the receiver within the batch delay.
          await Bun.sleep(1500);
          const cpuAfter = cpuSeconds(hr.pid);
          await hr.stop();
          const micros = (seconds: number) => Math.round((seconds / result.ok2xx) * 1e6);
          runs.push({ mode, rate: result.requestsPerSec, cpuMicros: micros(cpuAfter.process - cpuBefore.process), mainMicros: micros(cpuAfter.main - cpuBefore.main), spans: (await spansAt(r)) - before });
        } catch (error) {
          await hr.stop();
          throw error;
        }
      }
    }
  } finally {
    await r.stop();
  }
  return runs;
}

/**
 * Delivery drain rate off and on: `backlog` events stored while the
 * destination is paused, then resumed; deliveries/s until the sink has them all.
 */
export async function benchDeliveryTracing(opts: { rounds: number; backlog: number; concurrency: number; connections: number; sinkUrl: string; sinkCount: () => Promise<number> }): Promise<TracingRun[]> {
  const r = await receiver();
  const runs: TracingRun[] = [];
  try {
    for (let round = 0; round < opts.rounds; round++) {
      for (const mode of round % 2 === 0 ? (["off", "on"] as const) : (["on", "off"] as const)) {
        const hr = await startHookrelay({ HOOKRELAY_DELIVERY_CONCURRENCY: String(opts.concurrency), ...envFor(mode, r) });
        try {
          const key = await adminKey(hr.url);
          const source = (await api(hr.url, key, "POST", "/sources", { name: "bench" })).source;
          const destination = (await api(hr.url, key, "POST", "/destinations", { name: "sink", url: `${opts.sinkUrl}/hook`, status: "paused" })).destination;
          await api(hr.url, key, "POST", "/connections", { name: "bench", source_id: source.id, destination_id: destination.id });
          const ingestUrl = `${hr.url}/v1/ingest/${source.id}`;
          let stored = 0;
          while (stored < opts.backlog) {
            const batch = load({ url: ingestUrl, connections: opts.connections, seconds: 2, body: `{"type":"order.created","sent_at":0}`, headers: { "content-type": "application/json" } });
            stored += batch.ok2xx;
          }
          const sinkBefore = await opts.sinkCount();
          const spansBefore = await spansAt(r);
          const started = performance.now();
          const cpuBefore = cpuSeconds(hr.pid);
          await api(hr.url, key, "PATCH", `/destinations/${destination.id}`, { status: "active" });
          await until(async () => (await opts.sinkCount()) - sinkBefore >= stored, 600_000, `${mode}: backlog drained`);
          const seconds = (performance.now() - started) / 1000;
          await Bun.sleep(1500);
          const cpuAfter = cpuSeconds(hr.pid);
          await hr.stop();
          const micros = (cpu: number) => Math.round((cpu / stored) * 1e6);
          runs.push({ mode, rate: Math.round(stored / seconds), cpuMicros: micros(cpuAfter.process - cpuBefore.process), mainMicros: micros(cpuAfter.main - cpuBefore.main), spans: (await spansAt(r)) - spansBefore });
        } catch (error) {
          await hr.stop();
          throw error;
        }
      }
    }
  } finally {
    await r.stop();
  }
  return runs;
}

/** One table: each run, then the mean of each mode and on's share of off. */
export function printTracingRuns(what: string, runs: TracingRun[]) {
  console.log(`| run | tracing | ${what} | server CPU µs each | main thread µs each | spans exported |`);
  console.log("| --- | --- | --- | --- | --- | --- |");
  runs.forEach((run, i) => console.log(`| ${i + 1} | ${run.mode} | ${run.rate} | ${run.cpuMicros} | ${run.mainMicros ?? "-"} | ${run.mode === "on" ? run.spans : "-"} |`));
  const median = (mode: "off" | "on", pick: (r: TracingRun) => number) => {
    const of = runs.filter((r) => r.mode === mode).map(pick).sort((a, b) => a - b);
    return of.length % 2 ? of[(of.length - 1) / 2]! : (of[of.length / 2 - 1]! + of[of.length / 2]!) / 2;
  };
  const rateShare = median("on", (r) => r.rate) / median("off", (r) => r.rate);
  // The server is CPU-bound under this load: the rate it can reach goes as 1 / CPU per operation.
  const cpuShare = median("off", (r) => r.cpuMicros) / median("on", (r) => r.cpuMicros);
  const mainShare = runs.every((r) => r.mainMicros !== undefined) ? median("off", (r) => r.mainMicros!) / median("on", (r) => r.mainMicros!) : NaN;
  console.log(`\nmedians: rate on/off ${Math.round(rateShare * 100)}%; CPU per operation off/on (the rate a server alone on its cores would reach) ${Math.round(cpuShare * 100)}%; main thread off/on ${Math.round(mainShare * 100)}% (goal ≥ 90%)`);
}
