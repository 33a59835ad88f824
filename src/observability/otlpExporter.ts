import { ExportResultCode, type ExportResult } from "@opentelemetry/core";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace-base";
import { postOtlpJson } from "./otlpHttp";
import { otlpJsonRequest } from "./otlpJson";

/**
 * Span batches written as the OTLP/HTTP JSON request (./otlpJson.ts) and
 * sent with `fetch` (./otlpHttp.ts) from the server's thread: Bun's fetch
 * does its network work on its own thread, and writing the request costs
 * about 4 µs of CPU a span, less than copying the spans to a worker and
 * encoding them there did in all (docs/performance.md, "Tracing", fourth
 * round). What the collector does not take is answered as a failure and
 * counted by the caller (./tracing.ts).
 */
export class OtlpJsonExporter implements SpanExporter {
  private inFlight = 0;
  private idle: (() => void)[] = [];

  constructor(
    private readonly url: string,
    private readonly headers: Record<string, string>,
  ) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    if (spans.length === 0) return done({ code: ExportResultCode.SUCCESS });
    let body: string;
    try {
      body = otlpJsonRequest(spans);
    } catch (error) {
      return done({ code: ExportResultCode.FAILED, error: error instanceof Error ? error : new Error(String(error)) });
    }
    this.inFlight++;
    void postOtlpJson(this.url, this.headers, body).then((result) => {
      this.inFlight--;
      done(result);
      if (this.inFlight === 0) for (const resolve of this.idle.splice(0)) resolve();
    });
  }

  /** Resolves once every batch handed over so far has been answered. */
  forceFlush(): Promise<void> {
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  shutdown(): Promise<void> {
    return this.forceFlush();
  }
}
