import { context, propagation, SpanKind, type Tracer } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { AlwaysOffSampler, AlwaysOnSampler, BasicTracerProvider, ParentBasedSampler, TraceIdRatioBasedSampler, type Sampler } from "@opentelemetry/sdk-trace-base";
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from "@opentelemetry/semantic-conventions";
import type { SamplerName } from "../config/options";
import { plainSpans, type PlainSpanStarter, type ServerSpanStarter } from "./plainSpan";
import { w3c } from "./traceContext";
import { SpanQueue, type Warner } from "./spanQueue";
import { EXPORT_TIMEOUT_MS } from "./otlpHttp";

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
  /** OTEL_EXPORTER_OTLP_(TRACES_)TIMEOUT: how long one export request may take (ms); 10 s when unset. */
  timeoutMs?: number;
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
  // One resource, one scope and one sampler for the provider's spans and the plain ones: a batch holds both.
  const resource = resourceFromAttributes({ [ATTR_SERVICE_NAME]: settings.serviceName, ...(settings.serviceVersion ? { [ATTR_SERVICE_VERSION]: settings.serviceVersion } : {}) });
  const scope = { name: "hookrelay", ...(settings.serviceVersion ? { version: settings.serviceVersion } : {}) };
  const queue = new SpanQueue({
    url,
    headers: parseHeaders(settings.headers),
    origin: { resource, scope },
    queueSize: settings.queueSize,
    batchSize: Math.min(512, settings.queueSize),
    delayMs: settings.exportDelayMs ?? 1000,
    timeoutMs: settings.timeoutMs ?? EXPORT_TIMEOUT_MS,
    ...hooks,
  });
  const sampler = samplerFor(settings.sampler, settings.samplerArg);
  const provider = new BasicTracerProvider({ resource, sampler, spanProcessors: [queue] });
  const spans = plainSpans({ sampler, processor: queue, resource, scope });
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
