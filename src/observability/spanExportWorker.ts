import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { readableOf, type ExportAnswer, type ExportBatch } from "./spanRecord";

/**
 * The export worker (./workerExporter.ts): the official OTLP/HTTP exporter,
 * its JSON encoding and its HTTP client, on a thread of their own. Loaded
 * from scripts/build.ts as an entrypoint of the binary.
 */
declare const self: Worker;

let exporter: OTLPTraceExporter | null = null;

self.onmessage = (event: MessageEvent<string>) => {
  const batch = JSON.parse(event.data) as ExportBatch;
  // Past the processor's one batch at a time, forceFlush may hand over several at once.
  exporter ??= new OTLPTraceExporter({ url: batch.url, headers: batch.headers, concurrencyLimit: 1000 });
  const resource = resourceFromAttributes(batch.resource);
  const spans = batch.spans.map((r) => readableOf(r, resource));
  exporter.export(spans, (result) => {
    const answer: ExportAnswer = { id: batch.id, ok: result.code === 0, ...(result.error ? { error: result.error.message } : {}) };
    postMessage(answer);
  });
};
postMessage({ ready: true });
