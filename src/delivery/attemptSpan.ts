import { isSpanContextValid, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Span } from "@opentelemetry/api";
import type { PlainSpanStarter } from "../observability/plainSpan";
import { storedContext, traceparentOfSpan } from "../observability/traceContext";
import type { OutgoingRequest, SendResult } from "../outgoing/sender";

/** `trace_id` and `span_id` of an attempt's span, given to the log lines written for it (./outcomeBatch.ts). */
export interface AttemptTrace {
  trace_id: string;
  span_id: string;
}

/**
 * An attempt's CLIENT span (OpenTelemetry HTTP client conventions), child of
 * the span whose context the event stored (src/observability/traceContext.ts,
 * STORED_TRACE_HEADER): the attempt joins its ingest request's trace however
 * late, and whichever node sends it. A plain span (src/observability/plainSpan.ts),
 * never made active: nothing on the delivery path reads the active context,
 * and the log lines written for the attempt are given its ids (`traceOf`), so
 * no delivery pays for AsyncLocalStorage (docs/performance.md, "Tracing").
 */
export function startAttemptSpan(
  spans: PlainSpanStarter,
  eventHeaders: Record<string, unknown>,
  attempt: { method: string; url: string; destinationId: string; connectionId: string | null; attemptId: string; attemptNumber: number },
): Span {
  const url = safeUrl(attempt.url);
  return spans(
    attempt.method,
    SpanKind.CLIENT,
    {
      "http.request.method": attempt.method,
      "url.full": url.full,
      "server.address": url.host,
      "server.port": url.port,
      // Conventions: the number of times this request was sent before; 0 on the first.
      "http.request.resend_count": attempt.attemptNumber - 1,
      "hookrelay.destination.id": attempt.destinationId,
      ...(attempt.connectionId ? { "hookrelay.connection.id": attempt.connectionId } : {}),
      "hookrelay.attempt.id": attempt.attemptId,
      "hookrelay.attempt_number": attempt.attemptNumber,
    },
    storedContext(eventHeaders) ?? ROOT_CONTEXT,
  );
}

/** The span's ids for a log line; undefined for a span whose context is not valid. */
export function traceOf(span: Span | undefined): AttemptTrace | undefined {
  if (!span) return undefined;
  const context = span.spanContext();
  return isSpanContextValid(context) ? { trace_id: context.traceId, span_id: context.spanId } : undefined;
}

/**
 * Runs `fn` as an INTERNAL span `name` under the attempt's span (a
 * transform), without making either active.
 */
export async function inAttemptSpan<T>(spans: PlainSpanStarter | undefined, attempt: Span | undefined, name: string, fn: () => Promise<T>): Promise<T> {
  if (!spans || !attempt) return fn();
  const span = spans(name, SpanKind.INTERNAL, {}, trace.setSpan(ROOT_CONTEXT, attempt));
  try {
    return await fn();
  } catch (error) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
    throw error;
  } finally {
    span.end();
  }
}

/**
 * Gives the destination the attempt's `traceparent`, so its server span
 * continues the trace. A destination's own `traceparent` header wins, and an
 * empty one means none at all (docs/observability.md).
 */
export function propagateTrace(request: OutgoingRequest, destinationHeaders: Record<string, string>, span: Span | undefined) {
  const own = Object.keys(destinationHeaders).find((name) => name.toLowerCase() === "traceparent");
  if (own !== undefined) {
    if (destinationHeaders[own] === "") {
      delete request.headers["traceparent"];
      delete request.headers["tracestate"];
    }
    return;
  }
  // Written as the W3C propagator writes it, without building a context for it.
  const traceparent = span && traceparentOfSpan(span);
  if (traceparent) request.headers["traceparent"] = traceparent;
}

export function endAttemptSpan(span: Span, result: SendResult) {
  if (result.responseStatus !== null) span.setAttribute("http.response.status_code", result.responseStatus);
  if (!result.ok) {
    // Conventions: the status code as a string for an HTTP error, else the kind of failure.
    span.setAttribute("error.type", result.responseStatus !== null ? String(result.responseStatus) : (result.error ?? "_OTHER"));
    span.setStatus({ code: SpanStatusCode.ERROR, message: result.errorDetail ?? undefined });
  }
  span.end();
}

/** An attempt that ended before its request went out (its transform failed). */
export function endAttemptSpanUnsent(span: Span, errorType: string) {
  span.setAttribute("error.type", errorType);
  span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

/**
 * The redacted form of each destination URL seen lately: every attempt to a
 * destination asks for the same one, and parsing it each time was a measurable
 * share of a traced delivery (docs/performance.md, "Tracing"). Bounded: past
 * SAFE_URLS_MAX distinct URLs it starts over.
 */
const safeUrls = new Map<string, SafeUrl>();
const SAFE_URLS_MAX = 1024;
type SafeUrl = { full: string; host: string; port: number };

function safeUrl(raw: string): SafeUrl {
  let safe = safeUrls.get(raw);
  if (!safe) {
    if (safeUrls.size >= SAFE_URLS_MAX) safeUrls.clear();
    safe = redactUrl(raw);
    safeUrls.set(raw, safe);
  }
  return safe;
}

/** url.full without credentials or query values (an api key or token may ride in them). */
function redactUrl(raw: string): SafeUrl {
  try {
    const u = new URL(raw);
    u.username = "";
    u.password = "";
    for (const key of [...new Set(u.searchParams.keys())]) u.searchParams.set(key, "REDACTED");
    const port = u.port ? Number(u.port) : u.protocol === "https:" ? 443 : 80;
    return { full: u.toString(), host: u.hostname, port };
  } catch {
    return { full: "", host: "", port: 0 };
  }
}
