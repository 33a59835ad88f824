import { ExportResultCode, type ExportResult } from "@opentelemetry/core";
import type { ReadableSpan, SpanProcessor } from "@opentelemetry/sdk-trace-base";
import { postOtlpJson } from "./otlpHttp";
import { envelopeOf, OtlpJsonBatch, type Envelope, type SpanOrigin } from "./otlpJson";

/** Where export warnings go (the server's logger). */
export type Warner = { warn(msg: string, fields?: Record<string, unknown>): void };

export interface SpanQueueOptions {
  /** The collector's traces URL, and the OTEL_EXPORTER_OTLP_HEADERS. */
  url: string;
  headers: Record<string, string>;
  /** What every span shares: one resource, one instrumentation scope (./tracing.ts makes one tracer). */
  origin: SpanOrigin;
  /** HOOKRELAY_OTEL_QUEUE_SIZE: spans waiting at most; past it they are dropped and counted. */
  queueSize: number;
  /** Spans per export request at most. */
  batchSize: number;
  /** How long a span waits for a batch to fill before it goes out anyway (ms). */
  delayMs: number;
  /** How long one export request may take (ms): past it the request is aborted and its batch counts as dropped. */
  timeoutMs: number;
  logger: Warner;
  dropped: (n: number) => void;
  now?: () => number;
}

/** Buffers of sent batches kept to be written over by the next ones. */
const SPARE_BUFFERS = 2;

/**
 * The sampled spans on their way to the collector: each written into its
 * batch's OTLP JSON body when it ends (./otlpJson.ts), and the batches sent
 * from this thread with `fetch` (./otlpHttp.ts), one request at a time. It
 * takes the place of the SDK's BatchSpanProcessor and an exporter behind it,
 * which kept every finished span object until its batch was encoded, then
 * built and stringified an object per span (docs/performance.md, "Tracing").
 * Bounded: a span past `queueSize` waiting is dropped and counted, as are the
 * spans of a batch the collector did not take; an unreachable collector
 * costs a warning at most once a minute.
 */
export class SpanQueue implements SpanProcessor {
  private readonly envelope: Envelope;
  /** The batch being filled, and full ones waiting behind the one in flight. */
  private filling: OtlpJsonBatch;
  private full: OtlpJsonBatch[] = [];
  private waiting = 0;
  private sending: Promise<ExportResult> | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  /** The delay the pending timer was set with: a full batch asks for 0 once, not on every span. */
  private timerDelay = -1;
  /** Bodies already sent are written over: a batch is hundreds of KiB, and a new buffer for each was memory to fault in and collect. */
  private spare: Uint8Array<ArrayBuffer>[] = [];
  private lastWarning = -Infinity;
  private closed = false;

  constructor(private readonly opts: SpanQueueOptions) {
    this.envelope = envelopeOf(opts.origin);
    this.filling = this.newBatch();
  }

  onStart(): void {}

  onEnd(span: ReadableSpan): void {
    if (this.closed || !(span.spanContext().traceFlags & 1)) return;
    if (this.waiting >= this.opts.queueSize) return this.opts.dropped(1);
    this.filling.add(span);
    this.waiting++;
    if (this.filling.count >= this.opts.batchSize) {
      this.full.push(this.filling);
      this.filling = this.newBatch();
    }
    if (this.sending) return;
    if (this.full.length > 0) {
      if (this.timerDelay !== 0) this.sendSoon(0);
    } else if (!this.timer) this.sendSoon(this.opts.delayMs);
  }

  /** Sends everything waiting now; resolves once the collector has taken it, rejects if it refused any of it. */
  async forceFlush(): Promise<void> {
    this.clearTimer();
    let failure: Error | undefined;
    while (this.sending || this.waiting > 0) {
      const result = await (this.sending ?? this.sendBatch());
      if (result.code !== ExportResultCode.SUCCESS) failure ??= result.error ?? new Error("the collector did not take the spans");
    }
    if (failure) throw failure;
  }

  /** Sends what waits, then takes no more spans, whether or not the collector took the last ones. */
  async shutdown(): Promise<void> {
    try {
      await this.forceFlush();
    } finally {
      this.closed = true;
    }
  }

  private newBatch() {
    return new OtlpJsonBatch(this.envelope, this.spare.pop());
  }

  private sendSoon(ms: number) {
    this.clearTimer();
    this.timerDelay = ms;
    // Off the request that ended the span: the batch is handed to fetch after it has been answered.
    this.timer = setTimeout(() => {
      this.timer = null;
      this.timerDelay = -1;
      if (!this.sending && this.waiting > 0) void this.sendBatch();
    }, ms);
    this.timer.unref?.();
  }

  private clearTimer() {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.timerDelay = -1;
  }

  private sendBatch(): Promise<ExportResult> {
    let batch = this.full.shift();
    if (!batch) {
      batch = this.filling;
      this.filling = this.newBatch();
    }
    const spans = batch.count;
    // The queue's bound counts what waits for a request, as the SDK's batch processor did.
    this.waiting -= spans;
    const body = batch.finish();
    this.sending = postOtlpJson(this.opts.url, this.opts.headers, body, this.opts.timeoutMs).then((result) => {
      this.sending = null;
      // Only once the collector has answered is the body surely read; a request that failed may still hold it.
      if (result.code === ExportResultCode.SUCCESS) {
        if (this.spare.length < SPARE_BUFFERS) this.spare.push(batch.buffer);
      } else this.lost(spans, result.error);
      // What filled meanwhile goes out now if it makes a batch, else after the delay.
      if (this.full.length > 0) this.sendSoon(0);
      else if (this.waiting > 0 && !this.timer) this.sendSoon(this.opts.delayMs);
      return result;
    });
    return this.sending;
  }

  private lost(spans: number, error: Error | undefined) {
    this.opts.dropped(spans);
    const now = (this.opts.now ?? Date.now)();
    if (now - this.lastWarning < 60_000) return;
    this.lastWarning = now;
    this.opts.logger.warn("trace export failed; spans dropped (counted in hookrelay_otel_spans_dropped_total)", { spans, error: error?.message });
  }
}
