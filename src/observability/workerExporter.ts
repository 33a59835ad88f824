import { ExportResultCode, type ExportResult } from "@opentelemetry/core";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace-base";
import { recordOf, type ExportAnswer, type ExportBatch } from "./spanRecord";

/**
 * Span batches exported on a worker thread. On the server's one JavaScript
 * thread the OTLP exporter's encoding and HTTP client cost about as much
 * per ingest request as the rest of tracing together (docs/performance.md,
 * "Tracing"): here the main thread copies each finished span's fields into
 * a plain record and posts the batch; the worker (./spanExportWorker.ts)
 * runs the official exporter on it. What the collector does not take is
 * answered back as a failure, and counted by the caller (./tracing.ts).
 */
function workerEntry(): string {
  // Inside the compiled binary scripts/build.ts adds the worker as an entrypoint, stored as .js under the common root.
  if (import.meta.url.includes("/$bunfs/")) return "/$bunfs/root/src/observability/spanExportWorker.js";
  return new URL("./spanExportWorker.ts", import.meta.url).href;
}

export class WorkerSpanExporter implements SpanExporter {
  private worker: Worker | null = null;
  private nextId = 1;
  private readonly pending = new Map<number, (result: ExportResult) => void>();
  private idle: (() => void)[] = [];

  constructor(
    private readonly url: string,
    private readonly headers: Record<string, string>,
  ) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    if (spans.length === 0) return done({ code: ExportResultCode.SUCCESS });
    const id = this.nextId++;
    this.pending.set(id, done);
    try {
      const batch: ExportBatch = { id, url: this.url, headers: this.headers, resource: { ...spans[0]!.resource.attributes }, spans: spans.map(recordOf) };
      // As JSON text: measured, Bun's structured clone of the records cost the main thread several times what writing them as JSON does.
      this.started().postMessage(JSON.stringify(batch));
    } catch (error) {
      this.settle(id, { code: ExportResultCode.FAILED, error: error instanceof Error ? error : new Error(String(error)) });
    }
  }

  /** Resolves once every batch handed over so far has been answered. */
  forceFlush(): Promise<void> {
    if (this.pending.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  async shutdown(): Promise<void> {
    await this.forceFlush();
    this.worker?.terminate();
    this.worker = null;
  }

  private started(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(workerEntry(), { smol: true });
    worker.onmessage = (event: MessageEvent<ExportAnswer & { ready?: true }>) => {
      const m = event.data;
      if (m.ready) return;
      this.settle(m.id, m.ok ? { code: ExportResultCode.SUCCESS } : { code: ExportResultCode.FAILED, error: new Error(m.error ?? "export failed") });
    };
    worker.onerror = (event) => {
      // The worker is gone: what it held failed; the next export starts another.
      const error = new Error(`trace export worker failed: ${event.message}`);
      if (this.worker === worker) this.worker = null;
      for (const id of [...this.pending.keys()]) this.settle(id, { code: ExportResultCode.FAILED, error });
    };
    // An idle exporter must not keep the process alive.
    (worker as Worker & { unref(): void }).unref();
    return (this.worker = worker);
  }

  private settle(id: number, result: ExportResult) {
    const done = this.pending.get(id);
    if (!done) return;
    this.pending.delete(id);
    done(result);
    if (this.pending.size === 0) for (const resolve of this.idle.splice(0)) resolve();
  }
}
