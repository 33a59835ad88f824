/**
 * Forwarding one event to the local URL, as it was received, and what the
 * outcome was (a status, an error in words, or why it was skipped).
 */
import { REDACTED_HEADER_VALUE } from "../../src/contracts/sources";
import type { FeedEvent } from "../feed";

/** Not forwarded: hop-by-hop headers and those the local request sets itself. */
const DROP = new Set(["host", "content-length", "connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade", "proxy-authorization", "proxy-authenticate", "accept-encoding"]);

export interface EventDetail {
  status: string;
  headers: Record<string, string>;
  body: string;
  body_encoding: string;
  method: string;
  verification_status: string;
  verification_error: string | null;
  schema_errors: { path: string; message: string }[] | null;
}

export interface ForwardLine {
  /** The local server's answer, or null when none came (or the event was skipped). */
  status: number | null;
  duration_ms: number;
  error: string | null;
  /** Why the event was deliberately not forwarded (`rejected`), or null. */
  skipped: string | null;
  reason: string | null;
}

/** Forwarded means what a delivery means: the local server answered 2xx. Anything else is sent again by `--since last`. */
export const forwarded = (l: ForwardLine) => l.skipped !== null || (l.status !== null && l.status >= 200 && l.status < 300);

export function rejectionReason(d: EventDetail) {
  if (d.verification_status === "failed") return `signature verification failed${d.verification_error ? `: ${d.verification_error}` : ""}`;
  const first = d.schema_errors?.[0];
  if (first) return `body does not match the source's JSON Schema: ${first.path || "/"} ${first.message}${d.schema_errors!.length > 1 ? ` (+${d.schema_errors!.length - 1} more)` : ""}`;
  return "rejected by the source's checks";
}

/** Sends one event, as received, to the local URL (never following redirects elsewhere). */
export async function forwardOne(e: FeedEvent, detail: EventDetail, url: URL, timeoutMs: number, started: number): Promise<ForwardLine> {
  try {
    const headers = new Headers();
    // A header stored as [redacted] held the source's secret (docs/ingest.md "Redacted headers"): it is not sent, as delivery does not send it.
    for (const [k, v] of Object.entries(detail.headers ?? {})) if (!DROP.has(k.toLowerCase()) && v !== REDACTED_HEADER_VALUE) headers.set(k, v);
    headers.set("x-hookrelay-event-id", e.id);
    headers.set("x-hookrelay-source-id", e.source_id);
    const body = detail.body_encoding === "base64" ? Buffer.from(detail.body, "base64") : detail.body;
    const method = detail.method.toUpperCase();
    const res = await fetch(url, { method, headers, body: method === "GET" || method === "HEAD" ? undefined : body, redirect: "manual", signal: AbortSignal.timeout(timeoutMs) });
    await res.arrayBuffer().catch(() => undefined);
    return { status: res.status, duration_ms: Math.round(performance.now() - started), error: null, skipped: null, reason: null };
  } catch (err) {
    return { status: null, duration_ms: Math.round(performance.now() - started), error: fetchErrorText(err, timeoutMs), skipped: null, reason: null };
  }
}

const FETCH_ERRORS: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "host not found (DNS lookup failed)",
  ETIMEDOUT: "connection timed out",
  EHOSTUNREACH: "host unreachable",
  ConnectionRefused: "connection refused",
};

/** A failed fetch in words, once: `connection refused (ECONNREFUSED)`. */
function fetchErrorText(err: unknown, timeoutMs: number) {
  const e = err as { name?: string; code?: string; message?: string };
  if (e.name === "TimeoutError") return `timed out after ${timeoutMs / 1000} s`;
  const words = e.code ? FETCH_ERRORS[e.code] : undefined;
  if (words) return `${words} (${e.code})`;
  return e.message ?? String(err);
}
