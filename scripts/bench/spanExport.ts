/**
 * What exporting one span costs, stage by stage (docs/performance.md,
 * "Tracing", fourth round): `bun scripts/bench/spanExport.ts [--batches 40]`.
 * Ingest-like spans (the plain SERVER span, src/observability/plainServerSpan.ts,
 * with the attributes src/api/ingestFastPath.ts sets) in batches of 512, each
 * stage timed by the process's CPU time (user + system, every thread) per
 * span. The receiver (scripts/bench/otlpSink.ts) runs in its own process, so
 * the HTTP stages count the client's side only.
 */
import { SpanKind, ROOT_CONTEXT } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { JsonTraceSerializer, ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { AlwaysOnSampler, type ReadableSpan, type SpanProcessor } from "@opentelemetry/sdk-trace-base";
import { join } from "node:path";
import { postOtlpJson } from "../../src/observability/otlpHttp";
import { otlpJsonRequest } from "../../src/observability/otlpJson";
import { plainServerSpans } from "../../src/observability/plainServerSpan";
import { readableOf, recordOf, type ExportBatch } from "../../src/observability/spanRecord";
import { numberArg, root, startBunProcess } from "./lib";

const BATCH = 512;
const batches = numberArg("batches", 40);

const ended: ReadableSpan[] = [];
const processor: SpanProcessor = { onStart() {}, onEnd: (s) => void ended.push(s), forceFlush: async () => {}, shutdown: async () => {} };
const resource = resourceFromAttributes({ "service.name": "hookrelay", "service.version": "0.0.0" });
const start = plainServerSpans({ sampler: new AlwaysOnSampler(), processor, resource, scope: { name: "hookrelay", version: "0.0.0" } });
for (let i = 0; i < BATCH * batches; i++) {
  const span = start(
    "POST /v1/ingest/{source}",
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

async function stage<T>(name: string, inputs: T[], run: (input: T) => unknown | Promise<unknown>): Promise<unknown[]> {
  for (const input of inputs.slice(0, 3)) await run(input); // warm-up
  Bun.gc(true);
  const before = cpu();
  const t0 = performance.now();
  const out: unknown[] = [];
  for (const input of inputs) out.push(await run(input));
  const micros = (cpu() - before) / (inputs.length * BATCH);
  const wall = ((performance.now() - t0) * 1000) / (inputs.length * BATCH);
  console.log(`${name.padEnd(58)} ${micros.toFixed(2).padStart(6)} µs CPU/span  ${wall.toFixed(2).padStart(6)} µs wall/span`);
  return out;
}

const sink = await startBunProcess([join(root, "scripts/bench/otlpSink.ts")]);
const url = `${sink.url}/v1/traces`;
try {
  console.log(`${groups.length} batches of ${BATCH} ingest spans`);
  // The main thread's side today (src/observability/workerExporter.ts).
  const texts = (await stage("main: recordOf + JSON.stringify (today)", groups, (g) => JSON.stringify({ id: 1, url, headers: {}, resource: { ...g[0]!.resource.attributes }, spans: g.map(recordOf) } satisfies ExportBatch))) as string[];
  // The worker's side today (src/observability/spanExportWorker.ts).
  const parsed = (await stage("worker: JSON.parse", texts, (t) => JSON.parse(t))) as ExportBatch[];
  const rebuilt = (await stage("worker: readableOf (rebuild ReadableSpans)", parsed, (b) => b.spans.map((r) => readableOf(r, resourceFromAttributes(b.resource))))) as ReadableSpan[][];
  await stage("worker: JsonTraceSerializer.serializeRequest", rebuilt, (g) => JsonTraceSerializer.serializeRequest(g));
  await stage("worker: ProtobufTraceSerializer.serializeRequest", rebuilt, (g) => ProtobufTraceSerializer.serializeRequest(g));
  const exporter = new OTLPTraceExporter({ url, concurrencyLimit: 1000 });
  await stage("worker: OTLPTraceExporter.export (encode + node:http)", rebuilt, (g) => new Promise<void>((resolve, reject) => exporter.export(g, (r) => (r.code === 0 ? resolve() : reject(r.error)))));
  await exporter.shutdown();
  // Candidates.
  const bodies = (await stage("otlpJsonRequest on ReadableSpans (main or worker)", groups, (g) => otlpJsonRequest(g))) as string[];
  await stage("otlpJsonRequest on rebuilt spans (worker)", rebuilt, (g) => otlpJsonRequest(g));
  await stage("postOtlpJson: fetch, connections kept alive", bodies, async (b) => {
    const result = await postOtlpJson(url, {}, b);
    if (result.code !== 0) throw result.error;
  });
  console.log(`body: ${(bodies[0]!.length / BATCH).toFixed(0)} bytes/span (JSON)`);
} finally {
  await sink.stop();
}
