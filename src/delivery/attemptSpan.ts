import { SpanKind, SpanStatusCode, type Span, type Tracer } from "@opentelemetry/api";
import { context, storedContext, trace, traceparentOf } from "../observability/traceContext";
import type { OutgoingRequest, SendResult } from "../outgoing/sender";

/**
 * An attempt's CLIENT span (OpenTelemetry HTTP client conventions), child of
 * the span whose context the event stored (src/observability/traceContext.ts,
 * STORED_TRACE_HEADER): the attempt joins its ingest request's trace however
 * late, and whichever node sends it.
 */
export function startAttemptSpan(
  tracer: Tracer,
  eventHeaders: Record<string, unknown>,
  attempt: { method: string; url: string; destinationId: string; connectionId: string | null; attemptId: string; attemptNumber: number },
): Span {
  const parent = storedContext(eventHeaders) ?? context.active();
  const url = safeUrl(attempt.url);
  const span = tracer.startSpan(
    attempt.method,
    {
      kind: SpanKind.CLIENT,
      attributes: {
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
    },
    parent,
  );
  return span;
}

/** Runs `fn` with the span active: log lines written meanwhile carry its ids. */
export function withSpan<T>(span: Span | undefined, fn: () => Promise<T>): Promise<T> {
  if (!span) return fn();
  return context.with(trace.setSpan(context.active(), span), fn);
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
  if (span) request.headers["traceparent"] = traceparentOf(span);
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

/** url.full without credentials or query values (an api key or token may ride in them). */
function safeUrl(raw: string): { full: string; host: string; port: number } {
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
