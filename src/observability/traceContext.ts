import { context, isSpanContextValid, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type Tracer } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";

/**
 * The trace context as the code that handles requests and attempts sees it:
 * the active span, the W3C headers, the copy stored with an event. Only
 * @opentelemetry/api and the propagator: the provider and the exporter
 * (./tracing.ts) are loaded by serve alone, not by every logger's user.
 */
export const w3c = new W3CTraceContextPropagator();

/**
 * The stored copy of a trace context: the ingest (or message) span's
 * `traceparent`, kept among the event's stored headers under this name so an
 * attempt sent later, by any node, continues the same trace
 * (docs/observability.md). Received `x-hookrelay-*` headers are never
 * forwarded (src/outgoing/sender.ts).
 */
export const STORED_TRACE_HEADER = "x-hookrelay-trace";

/**
 * Runs `fn` as an INTERNAL span named `name` under `parent` (a transform, a
 * filter, an alert evaluation): without a tracer, just runs it.
 */
export async function inSpan<T>(tracer: Tracer | undefined, parent: Span | undefined, name: string, fn: () => Promise<T>, attributes?: Attributes): Promise<T> {
  if (!tracer) return fn();
  const base = parent ? trace.setSpan(context.active(), parent) : context.active();
  const span = tracer.startSpan(name, { kind: SpanKind.INTERNAL, attributes }, base);
  try {
    return await context.with(trace.setSpan(base, span), fn);
  } catch (error) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
    throw error;
  } finally {
    span.end();
  }
}

/** The span active here, if tracing is on and one is (the logger and the pipeline ask). */
export function activeSpan(): Span | undefined {
  return trace.getActiveSpan();
}

/** The trace context a provider's request carries (`traceparent`, `tracestate`). */
export function extractContext(headers: { get(name: string): string | null | undefined }): Context {
  return w3c.extract(context.active(), headers, { get: (carrier, key) => carrier.get(key) ?? undefined, keys: () => ["traceparent", "tracestate"] });
}

const carrierGetter = { get: (c: Record<string, string>, k: string) => c[k], keys: (c: Record<string, string>) => Object.keys(c) };

/** The `traceparent` hookrelay stores (traceparentOfSpan): version 00, lowercase hex, nothing around it. */
const STORED_TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * The context an event's stored headers name (STORED_TRACE_HEADER), for its
 * attempts' spans: on the root context, not the active one, since the stored
 * parent is the whole of an attempt's parentage (and the delivery path keeps
 * no active span, so asking AsyncLocalStorage would only cost). What
 * hookrelay wrote itself, without a `tracestate`, is read by one plain
 * pattern (the propagator's general one was a measurable share of a traced
 * delivery: docs/performance.md, "Tracing"); anything else goes through the
 * W3C propagator as received.
 */
export function storedContext(headers: Record<string, unknown>): Context | undefined {
  const parent = headers[STORED_TRACE_HEADER];
  if (typeof parent !== "string") return undefined;
  const state = headers["tracestate"];
  if (typeof state !== "string") {
    const m = STORED_TRACEPARENT.exec(parent);
    if (m) return trace.setSpanContext(ROOT_CONTEXT, { traceId: m[1]!, spanId: m[2]!, traceFlags: parseInt(m[3]!, 16), isRemote: true });
  }
  const carrier: Record<string, string> = typeof state === "string" ? { traceparent: parent, tracestate: state } : { traceparent: parent };
  const extracted = w3c.extract(ROOT_CONTEXT, carrier, carrierGetter);
  return trace.getSpanContext(extracted) ? extracted : undefined;
}

/** The active span's context as a `traceparent` to store with an event, or undefined when no span is active. */
export function traceparentToStore(): string | undefined {
  const span = trace.getActiveSpan();
  if (!span || !isSpanContextValid(span.spanContext())) return undefined;
  return traceparentOf(span);
}

/**
 * The `traceparent` of this span if its context is valid, written as the W3C
 * propagator writes it, without building a context for it (ingest asks once
 * per request).
 */
export function traceparentOfSpan(span: Span): string | undefined {
  const sc = span.spanContext();
  if (!isSpanContextValid(sc)) return undefined;
  return `00-${sc.traceId}-${sc.spanId}-0${Number(sc.traceFlags || 0).toString(16)}`;
}

/** W3C `traceparent` naming this span (what a destination receives for its attempt). */
export function traceparentOf(span: Span): string {
  const carrier: Record<string, string> = {};
  w3c.inject(trace.setSpan(context.active(), span), carrier, { set: (c, k, v) => (c[k] = v) });
  return carrier["traceparent"]!;
}

/** `trace_id` and `span_id` of the active span, for a log line; empty when there is none. */
export function logTraceFields(): { trace_id?: string; span_id?: string } {
  const span = trace.getActiveSpan();
  if (!span) return {};
  const { traceId, spanId } = span.spanContext();
  return isSpanContextValid(span.spanContext()) ? { trace_id: traceId, span_id: spanId } : {};
}

export { context, trace };
