/**
 * What one traced ingest request costs tracing's own code, start to export:
 * the SERVER span as src/api/ingestFastPath.ts and src/ingest/pipeline.ts
 * make it (start, attributes, the stored traceparent, end), handed to the
 * export pipeline of src/observability/tracing.ts, which writes and posts the
 * batches to a local receiver (its own process). CPU time of this process,
 * every thread, per span: `bun scripts/bench/spanCost.ts [--spans 200000 --turns 5]`.
 */
import { ROOT_CONTEXT } from "@opentelemetry/api";
import { join } from "node:path";
import { startTracing } from "../../src/observability/tracing";
import { traceparentOfSpan } from "../../src/observability/traceContext";
import { numberArg, root, startBunProcess } from "./lib";

const total = numberArg("spans", 200_000);
const sink = await startBunProcess([join(root, "scripts/bench/otlpSink.ts")]);
const cpu = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
const dropped = { n: 0 };
const tracing = startTracing(
  { endpoint: sink.url, serviceName: "hookrelay", serviceVersion: "0.0.0", sampler: "always_on", queueSize: 1_000_000 },
  { logger: { warn: (m) => console.error(m) }, dropped: (n) => (dropped.n += n) },
);
const headers: Record<string, string> = { host: "127.0.0.1:3000", "content-type": "application/json", "content-length": "40", "x-signature": "sha256=abc", "user-agent": "autocannon" };

async function turn(n: number): Promise<number> {
  const before = cpu();
  for (let i = 0; i < n; i++) {
    const span = tracing.serverSpan!("POST /v1/ingest/{source}", { "http.request.method": "POST", "url.scheme": "http", "url.path": "/v1/ingest/src_01JABCDEFGHJKMNPQRSTVWXYZ0", "http.route": "/v1/ingest/{source}", "user_agent.original": "autocannon" }, ROOT_CONTEXT);
    span.setAttribute("hookrelay.source.id", "src_01JABCDEFGHJKMNPQRSTVWXYZ0");
    const stored = { ...headers, "x-hookrelay-trace": traceparentOfSpan(span)! };
    if (!stored) throw new Error();
    span.setAttributes({ "hookrelay.event.id": `evt_01JABCDEFGHJKMNPQRSTV${String(i).padStart(5, "0")}`, "hookrelay.event.status": "pending", "hookrelay.verification_status": "verified", "hookrelay.dedup_status": "unique" });
    span.setAttribute("http.response.status_code", 200);
    span.setAttribute("client.address", "127.0.0.1");
    span.end();
    // As under load: the event loop turns between requests, so the batch timer and the export's fetch run.
    if (i % 256 === 255) await new Promise((r) => setImmediate(r));
  }
  await tracing.flush();
  return (cpu() - before) / n;
}

try {
  await turn(20_000);
  const figures: number[] = [];
  for (let t = 0; t < numberArg("turns", 5); t++) {
    const before = await fetch(`${sink.url}/stats`).then((r) => r.json() as Promise<{ spans: number }>);
    const micros = await turn(total);
    const after = await fetch(`${sink.url}/stats`).then((r) => r.json() as Promise<{ spans: number }>);
    figures.push(micros);
    console.log(`turn ${t + 1}: ${micros.toFixed(2)} µs CPU a span; ${after.spans - before.spans} spans received, ${dropped.n} dropped so far`);
  }
  console.log(`median ${[...figures].sort((a, b) => a - b)[Math.floor(figures.length / 2)]!.toFixed(2)} µs CPU a span`);
} finally {
  await tracing.shutdown();
  await sink.stop();
}
