/**
 * What exporting one span costs, stage by stage (docs/performance.md,
 * "Tracing", fourth round): `bun scripts/bench/spanExport.ts [--batches 40 --turns 5]`.
 * Ingest-like spans (the plain SERVER span, src/observability/plainSpan.ts,
 * with the attributes src/api/ingestFastPath.ts sets) in batches of 512, each
 * stage timed by the process's CPU time (user + system, every thread) per
 * span. The receiver (scripts/bench/otlpSink.ts) runs in its own process, so
 * the HTTP stages count the client's side only.
 */
import { ROOT_CONTEXT, SpanKind } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { JsonTraceSerializer, ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { AlwaysOnSampler, BatchSpanProcessor, type ReadableSpan, type SpanExporter, type SpanProcessor } from "@opentelemetry/sdk-trace-base";
import { join } from "node:path";
import { postOtlpJson } from "../../src/observability/otlpHttp";
import { envelopeOf, OtlpJsonBatch } from "../../src/observability/otlpJson";
import { plainSpans } from "../../src/observability/plainSpan";
import { numberArg, root, startBunProcess } from "./lib";

const BATCH = 512;
const batches = numberArg("batches", 40);

const ended: ReadableSpan[] = [];
const processor: SpanProcessor = { onStart() {}, onEnd: (s) => void ended.push(s), forceFlush: async () => {}, shutdown: async () => {} };
const resource = resourceFromAttributes({ "service.name": "hookrelay", "service.version": "0.0.0" });
const startPlain = plainSpans({ sampler: new AlwaysOnSampler(), processor, resource, scope: { name: "hookrelay", version: "0.0.0" } });
for (let i = 0; i < BATCH * batches; i++) {
  const span = startPlain(
    "POST /v1/ingest/{source}",
    SpanKind.SERVER,
    { "http.request.method": "POST", "http.route": "/v1/ingest/{source}", "url.scheme": "http", "user_agent.original": "autocannon", "hookrelay.source.id": "src_01JABCDEFGHJKMNPQRSTVWXYZ0" },
    ROOT_CONTEXT,
  );
  span.setAttributes({ "hookrelay.event.id": `evt_01JABCDEFGHJKMNPQRSTV${String(i).padStart(5, "0")}`, "hookrelay.verification_status": "verified", "hookrelay.dedup_status": "unique" });
  span.setAttribute("http.response.status_code", 200);
  span.setAttribute("client.address", "127.0.0.1");
  span.end();
}
const groups: ReadableSpan[][] = [];
for (let i = 0; i < ended.length; i += BATCH) groups.push(ended.slice(i, i + BATCH));

function cpu(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}

let last = 0;

async function stage<T>(name: string, inputs: T[], run: (input: T) => unknown | Promise<unknown>): Promise<unknown[]> {
  for (const input of inputs.slice(0, 3)) await run(input); // warm-up
  Bun.gc(true);
  const before = cpu();
  const t0 = performance.now();
  const out: unknown[] = [];
  for (const input of inputs) out.push(await run(input));
  const micros = (cpu() - before) / (inputs.length * BATCH);
  const wall = ((performance.now() - t0) * 1000) / (inputs.length * BATCH);
  last = micros;
  console.log(`${name.padEnd(66)} ${micros.toFixed(2).padStart(6)} µs CPU/span  ${wall.toFixed(2).padStart(6)} µs wall/span`);
  return out;
}

const sink = await startBunProcess([join(root, "scripts/bench/otlpSink.ts")]);
const url = `${sink.url}/v1/traces`;
try {
  console.log(`${groups.length} batches of ${BATCH} ingest spans`);
  // The official exporter (the export worker ran it until commit f2faa7a, where this script also timed the records crossing to it).
  await stage("JsonTraceSerializer.serializeRequest", groups, (g) => JsonTraceSerializer.serializeRequest(g));
  await stage("ProtobufTraceSerializer.serializeRequest", groups, (g) => ProtobufTraceSerializer.serializeRequest(g));
  // The main thread's share before the encoding: the batch processor's queue and batches (a no-op exporter behind it).
  const batcher = new BatchSpanProcessor({ export: (_spans, done) => done({ code: 0 }), shutdown: async () => {} }, { maxQueueSize: BATCH * 2, maxExportBatchSize: BATCH, scheduledDelayMillis: 1000 });
  await stage("BatchSpanProcessor.onEnd + forceFlush", groups, async (g) => {
    for (const span of g) batcher.onEnd(span);
    await batcher.forceFlush();
  });
  // What hookrelay sends with now (src/observability/spanQueue.ts), stage by stage.
  const envelope = envelopeOf({ resource, scope: { name: "hookrelay", version: "0.0.0" } });
  const written = (g: ReadableSpan[]) => {
    const batch = new OtlpJsonBatch(envelope, new Uint8Array(640 * 1024));
    for (const span of g) batch.add(span);
    return batch.finish();
  };
  const bodies = (await stage("OtlpJsonBatch (src/observability/otlpJson.ts)", groups, written)) as Uint8Array<ArrayBuffer>[];
  await stage("postOtlpJson (src/observability/otlpHttp.ts): fetch, kept alive", bodies, async (b) => {
    const result = await postOtlpJson(url, {}, b);
    if (result.code !== 0) throw result.error;
  });
  console.log(`body: ${(bodies[0]!.length / BATCH).toFixed(0)} bytes/span (JSON)`);
  // The whole export, official against ours, by turns: this machine's speed drifts within seconds.
  const exporter = new OTLPTraceExporter({ url, concurrencyLimit: 1000 });
  const exportWith = (e: SpanExporter) => (g: ReadableSpan[]) => new Promise<void>((resolve, reject) => e.export(g, (r) => (r.code === 0 ? resolve() : reject(r.error))));
  // What src/observability/spanQueue.ts does per batch: each span's text, the request around them, fetch.
  const ours = async (g: ReadableSpan[]) => {
    const result = await postOtlpJson(url, {}, written(g));
    if (result.code !== 0) throw result.error;
  };
  const turns = { official: [] as number[], ours: [] as number[] };
  for (let turn = 0; turn < numberArg("turns", 5); turn++) {
    turns.official.push(await stage(`OTLPTraceExporter.export (encoding + node:http), turn ${turn + 1}`, groups, exportWith(exporter)).then(() => last));
    turns.ours.push(await stage(`OtlpJsonBatch + fetch (spanQueue.ts), turn ${turn + 1}`, groups, ours).then(() => last));
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const ratios = turns.official.map((o, i) => o / turns.ours[i]!);
  console.log(`medians: official ${median(turns.official).toFixed(2)} µs/span, ours ${median(turns.ours).toFixed(2)} µs/span; official/ours by pair ${ratios.map((r) => r.toFixed(1)).join(" ")}`);
  await exporter.shutdown();
} finally {
  await sink.stop();
}
