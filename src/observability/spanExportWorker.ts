import { resourceFromAttributes } from "@opentelemetry/resources";
import { postOtlpJson } from "./otlpHttp";
import { otlpJsonRequest } from "./otlpJson";
import { readableOf, type ExportAnswer, type ExportBatch } from "./spanRecord";

/**
 * The export worker (./workerExporter.ts): the OTLP JSON encoding
 * (./otlpJson.ts) and the request (./otlpHttp.ts), on a thread of their own.
 * Loaded from scripts/build.ts as an entrypoint of the binary.
 */
declare const self: Worker;

self.onmessage = async (event: MessageEvent<string>) => {
  const batch = JSON.parse(event.data) as ExportBatch;
  const resource = resourceFromAttributes(batch.resource);
  const result = await postOtlpJson(batch.url, batch.headers, otlpJsonRequest(batch.spans.map((r) => readableOf(r, resource))));
  const answer: ExportAnswer = { id: batch.id, ok: result.code === 0, ...(result.error ? { error: result.error.message } : {}) };
  postMessage(answer);
};
postMessage({ ready: true });
