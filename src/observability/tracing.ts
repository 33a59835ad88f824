import { context, propagation, SpanKind, type Context, type Span, type Tracer } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { ExportResultCode, type ExportResult } from "@opentelemetry/core";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type ReadableSpan,
  type Sampler,
  type SpanExporter,
  type SpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from "@opentelemetry/semantic-conventions";
import type { SamplerName } from "../config/options";
import { plainSpans, type PlainSpanStarter, type ServerSpanStarter } from "./plainSpan";
import { w3c } from "./traceContext";
import { OtlpJsonExporter } from "./otlpExporter";

/** Where export warnings go (the server's logger). */
type Warner = { warn(msg: string, fields?: Record<string, unknown>): void };

/** The OTEL_* and HOOKRELAY_OTEL_* settings (src/config/options.ts), as serve hands them over. */
export interface TracingSettings {
  /** OTEL_EXPORTER_OTLP_ENDPOINT: the base URL; traces go to <base>/v1/traces. */
  endpoint?: string;
  /** OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: the traces URL as it is; wins over the base. */
  tracesEndpoint?: string;
  /** OTEL_EXPORTER_OTLP_HEADERS: `name=value,name2=value2`, values URL-encoded. */
  headers?: string;
  serviceName: string;
  serviceVersion?: string;
  sampler: SamplerName;
  samplerArg?: number;
  /** HOOKRELAY_OTEL_QUEUE_SIZE: spans waiting for export at most; past it they are dropped and counted. */
  queueSize: number;
  /** How often the batch goes out (ms). */
  exportDelayMs?: number;
}

/** What serve holds: a tracer (or none when tracing is off) and the way to flush and stop it. */
export interface Tracing {
  /** Undefined when tracing is off: callers skip spans altogether, so off costs nothing. */
  tracer?: Tracer;
  /** Spans without the SDK's span object (./plainSpan.ts), for the paths with one span per webhook; set with `tracer`. */
  spans?: PlainSpanStarter;
  /** The ingest path's SERVER span: `spans` of that kind. */
  serverSpan?: ServerSpanStarter;
  /** Sends what is queued now (tests, shutdown). */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

export const tracingOff: Tracing = { flush: async () => {}, shutdown: async () => {} };

let contextInstalled = false;

/**
 * Active spans follow async calls through AsyncLocalStorage (works under Bun
 * and inside `bun build --compile`, docs/observability.md). One manager per
 * process: servers in one process (tests) each have their own provider, and
 * share this.
 */
function installContext() {
  if (contextInstalled) return;
  contextInstalled = true;
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(w3c);
}

/** Off (no provider, nothing installed) unless an endpoint is configured. */
export function startTracing(settings: TracingSettings, hooks: { logger: Warner; dropped: (n: number) => void; now?: () => number }): Tracing {
  const url = settings.tracesEndpoint ?? (settings.endpoint ? `${settings.endpoint.replace(/\/+$/, "")}/v1/traces` : undefined);
  if (!url) return tracingOff;
  installContext();
  const queue = { spans: 0 };
  const exporter = new CountingExporter(new OtlpJsonExporter(url, parseHeaders(settings.headers)), queue, hooks);
  const processor = new BoundedProcessor(
    new BatchSpanProcessor(exporter, { maxQueueSize: settings.queueSize, maxExportBatchSize: Math.min(512, settings.queueSize), scheduledDelayMillis: settings.exportDelayMs ?? 1000 }),
    settings.queueSize,
    queue,
    hooks.dropped,
  );
  // One resource and one sampler for the provider's spans and the plain ones: a batch holds both, under one resource.
  const resource = resourceFromAttributes({ [ATTR_SERVICE_NAME]: settings.serviceName, ...(settings.serviceVersion ? { [ATTR_SERVICE_VERSION]: settings.serviceVersion } : {}) });
  const sampler = samplerFor(settings.sampler, settings.samplerArg);
  const provider = new BasicTracerProvider({ resource, sampler, spanProcessors: [processor] });
  const scope = { name: "hookrelay", ...(settings.serviceVersion ? { version: settings.serviceVersion } : {}) };
  const spans = plainSpans({ sampler, processor, resource, scope });
  return {
    tracer: provider.getTracer(scope.name, scope.version),
    spans,
    serverSpan: (name, attributes, parent) => spans(name, SpanKind.SERVER, attributes, parent),
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}

function samplerFor(name: SamplerName, arg = 1): Sampler {
  const ratio = new TraceIdRatioBasedSampler(arg);
  switch (name) {
    case "always_on":
      return new AlwaysOnSampler();
    case "always_off":
      return new AlwaysOffSampler();
    case "traceidratio":
      return ratio;
    case "parentbased_always_off":
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case "parentbased_traceidratio":
      return new ParentBasedSampler({ root: ratio });
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

/** OTEL_EXPORTER_OTLP_HEADERS as the specification writes it: comma list of URL-encoded `name=value`. */
export function parseHeaders(raw: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (raw ?? "").split(",")) {
    const at = part.indexOf("=");
    if (at <= 0) continue;
    out[decodeURIComponent(part.slice(0, at).trim())] = decodeURIComponent(part.slice(at + 1).trim());
  }
  return out;
}

/**
 * Counts what the collector did not take, and says so at most once a
 * minute: an unreachable collector must cost a warning now and then, never a
 * line per batch.
 */
class CountingExporter implements SpanExporter {
  private lastWarning = -Infinity;
  constructor(
    private readonly inner: SpanExporter,
    private readonly queue: { spans: number },
    private readonly hooks: { logger: Warner; dropped: (n: number) => void; now?: () => number },
  ) {}
  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    // These left the batch processor's queue.
    this.queue.spans = Math.max(0, this.queue.spans - spans.length);
    this.inner.export(spans, (result) => {
      if (result.code !== ExportResultCode.SUCCESS) {
        this.hooks.dropped(spans.length);
        const now = (this.hooks.now ?? Date.now)();
        if (now - this.lastWarning >= 60_000) {
          this.lastWarning = now;
          this.hooks.logger.warn("trace export failed; spans dropped (counted in hookrelay_otel_spans_dropped_total)", { spans: spans.length, error: result.error?.message });
        }
      }
      done(result);
    });
  }
  shutdown() {
    return this.inner.shutdown();
  }
  forceFlush() {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

/**
 * The batch processor drops spans past its queue without telling anyone:
 * this counts them first. `queue.spans` is what was handed on and has not
 * been taken into an export yet: the batch processor's queue.
 */
class BoundedProcessor implements SpanProcessor {
  constructor(
    private readonly inner: SpanProcessor,
    private readonly limit: number,
    private readonly queue: { spans: number },
    private readonly dropped: (n: number) => void,
  ) {}
  onStart(span: Span & ReadableSpan, parent: Context) {
    this.inner.onStart(span as never, parent);
  }
  onEnd(span: ReadableSpan) {
    if (!span.spanContext().traceFlags) return;
    if (this.queue.spans >= this.limit) {
      this.dropped(1);
      return;
    }
    this.queue.spans++;
    this.inner.onEnd(span);
  }
  forceFlush() {
    return this.inner.forceFlush();
  }
  shutdown() {
    return this.inner.shutdown();
  }
}
