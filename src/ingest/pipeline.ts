import { AppError } from "../contracts/errors";
import { REDACTED_HEADER_VALUE } from "../contracts/sources";
import { normalizeIdOrNull } from "../contracts/ids";
import { ingestSource } from "./sourceCache";
import { countIngestRequest, writeEvent, type EventWrite, type IngestSourceRow, type WriteResult } from "../db/ingestStore";
import type { Deps } from "../domain/deps";
import { clientIp } from "./clientIp";
import { dedupKey } from "./dedup";
import { handshakeReply } from "./handshake";
import { atPath, lazyJson } from "../rules/json";
import { schemaErrors, type SchemaError } from "../rules/schemaCheck";
import { takeRejectedSlot } from "./rejectedBudget";
import { sourceRuntime } from "./sourceRuntime";
import type { SourceTemplate } from "../rules/templates";
import type { Span } from "@opentelemetry/api";
import { activeSpan, STORED_TRACE_HEADER, traceparentOfSpan } from "../observability/traceContext";

/** One received request, as the HTTP layer hands it over. */
export interface IngestRequest {
  /** The id from the path, with or without `src_`. */
  sourceId: string;
  method: string;
  /** Path and query as received (`/v1/ingest/src_…/anything`, `a=1`). */
  path: string;
  query: string | null;
  headers: Headers;
  /** The socket peer's address, if known. */
  peerIp: string | null;
  /** Reads the raw body once; throws AppError payload_too_large beyond the limit. */
  readBody(): Promise<Uint8Array>;
  /**
   * The request's SERVER span when tracing is on, handed over by the HTTP
   * layer (src/api/ingestFastPath.ts) rather than found through the context
   * manager; when absent, the span active here, if any.
   */
  span?: Span;
}

/** Metric label of how a request ended (never a source id: unbounded). */
export type IngestOutcome =
  | "accepted"
  | "held"
  | "duplicate"
  | "handshake"
  | "probe"
  | "not_found"
  | "disabled"
  | "expired"
  | "ip_denied"
  | "payload_too_large"
  | "signature_invalid"
  | "schema_violation";

export interface IngestResponse {
  status: 200 | 401 | 403 | 404 | 410 | 413 | 422;
  body: unknown;
  outcome: IngestOutcome;
  /** A rejected request past its source's budget: answered the same, counted, not stored (./rejectedBudget.ts). */
  notStored?: true;
}

const reply = (outcome: IngestOutcome, error: AppError): IngestResponse => ({ status: error.status as IngestResponse["status"], body: error.toBody(), outcome });
const notStoredReply = (outcome: IngestOutcome, error: AppError): IngestResponse => ({ ...reply(outcome, error), notStored: true });

// The replies that say nothing of the request, made once: the HTTP layer writes each one's JSON once too (src/api/ingestFastPath.ts).
const NOT_FOUND = reply("not_found", new AppError("not_found", "Source not found"));
const DISABLED = reply("disabled", new AppError("source_disabled", "Source is disabled"));
const TOPIC_SOURCE = reply("disabled", new AppError("forbidden", "This is a topic's source: publish with POST /v1/topics/{id}/publish"));
const OUTBOUND_SOURCE = reply("disabled", new AppError("forbidden", "This source holds outbound messages: send with POST /v1/applications/{appId}/messages"));
const EXPIRED = reply("expired", new AppError("source_expired", "Source has expired"));
const LIMIT_REACHED = reply("expired", new AppError("source_expired", "Source has reached its request limit"));
const IP_DENIED = reply("ip_denied", new AppError("ip_denied", "Source IP address not allowed"));

/**
 * The receive pipeline, in the order of docs/decisions.md D4: source exists (404) →
 * disabled (403) → expired / request_limit (410) → IP filter (403, nothing
 * stored) → signature (401, stored as failed) → handshake → schema (422 or
 * warn) → dedup → stored → 200. Nothing slow happens here: no outgoing HTTP,
 * no JSONata; delivery picks stored events up from the table.
 */
export async function receive(deps: Deps, req: IngestRequest): Promise<IngestResponse> {
  const now = deps.clock.now();
  const found = await openSource(deps, req.sourceId, now);
  if ("status" in found) return found;
  const { source } = found;
  // Tracing on: the request's SERVER span, handed over or active here; off: none.
  const span = req.span ?? activeSpan();
  span?.setAttribute("hookrelay.source.id", source.id);

  const runtime = sourceRuntime(source, deps.secrets);
  const ip = clientIp(req.peerIp, req.headers.get("x-forwarded-for") ?? undefined, deps.settings.trustProxy);
  if (!runtime.admits(ip)) return IP_DENIED;

  let body: Uint8Array;
  try {
    body = await req.readBody();
  } catch (err) {
    if (err instanceof AppError && err.code === "payload_too_large") return reply("payload_too_large", err);
    throw err;
  }

  const headers: Record<string, string> = {};
  req.headers.forEach((value, name) => {
    headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
  });
  const contentType = headers["content-type"] ?? null;
  const json = lazyJson(body);
  const base: Omit<EventWrite, "verificationStatus" | "verificationError" | "dedupStatus" | "dedupKey" | "status" | "schemaErrors"> = {
    sourceId: source.id,
    orgId: source.org_id,
    envId: source.env_id,
    method: req.method,
    path: req.path,
    query: req.query,
    contentType,
    sourceIp: ip,
    headers: JSON.stringify(withStoredTrace(runtime.redactedHeaders.length ? redacted(headers, runtime.redactedHeaders) : headers, span)),
    body,
    dedupWindowSeconds: source.dedup_window_seconds,
    eventType: null,
  };

  let verificationStatus: EventWrite["verificationStatus"] = "skipped";
  if (runtime.verifier) {
    const url = deps.settings.baseUrl + req.path + (req.query ? `?${req.query}` : "");
    const result = runtime.verifier({ method: req.method, url, headers, body, contentType, nowSeconds: Math.floor(now.getTime() / 1000) });
    if (!result.ok) {
      if (!takeRejectedSlot(deps, source.id, now.getTime())) {
        return notStoredReply("signature_invalid", new AppError("signature_invalid", "Signature verification failed", { reason: result.error, stored: false }));
      }
      const stored = await store(deps, span, { ...base, verificationStatus: "failed", verificationError: result.error, dedupStatus: "skipped", dedupKey: null, status: "rejected", schemaErrors: null });
      if (stored.kind !== "stored") return notStored(stored);
      return reply("signature_invalid", new AppError("signature_invalid", "Signature verification failed", { event_id: stored.id, reason: result.error }));
    }
    verificationStatus = "verified";
  }

  const handshake = handshakeReply(runtime.template?.handshake, json);
  if (handshake) {
    if (!(await countIngestRequest(deps.db, source.id))) return LIMIT_REACHED;
    return { status: 200, body: handshake, outcome: "handshake" };
  }

  const eventType = extractEventType(runtime.template, headers, json);
  let warnings: SchemaError[] | null = null;
  if (runtime.schema) {
    const errors = schemaErrors(runtime.schema, body, json);
    if (errors && runtime.schemaAction === "reject") {
      if (!takeRejectedSlot(deps, source.id, now.getTime())) {
        return notStoredReply("schema_violation", new AppError("schema_violation", "Payload does not match the source's JSON Schema", { errors, stored: false }));
      }
      const stored = await store(deps, span, { ...base, eventType, verificationStatus, verificationError: null, dedupStatus: "skipped", dedupKey: null, status: "rejected", schemaErrors: JSON.stringify(errors) });
      if (stored.kind !== "stored") return notStored(stored);
      return reply("schema_violation", new AppError("schema_violation", "Payload does not match the source's JSON Schema", { event_id: stored.id, errors }));
    }
    warnings = errors;
  }

  const key = runtime.dedup ? dedupKey(runtime.dedup.strategy, runtime.dedup.field, headers, body, json) : null;
  const stored = await store(deps, span, {
    ...base,
    eventType,
    dedupWindowSeconds: runtime.dedup?.windowSeconds ?? base.dedupWindowSeconds,
    verificationStatus,
    verificationError: null,
    dedupStatus: runtime.dedup ? "unique" : "skipped",
    dedupKey: key,
    status: "pending",
    schemaErrors: warnings ? JSON.stringify(warnings) : null,
  });
  if (stored.kind !== "stored") return notStored(stored);
  if (stored.duplicateOf) {
    return { status: 200, body: { success: true, event_id: stored.id, duplicate: true, original_event_id: stored.duplicateOf }, outcome: "duplicate" };
  }
  return { status: 200, body: { success: true, event_id: stored.id }, outcome: stored.status === "held" ? "held" : "accepted" };
}

/** The first three checks: the source exists, is not disabled, has not expired or used up its request_limit. */
async function openSource(deps: Deps, rawId: string, now: Date): Promise<{ source: IngestSourceRow } | IngestResponse> {
  const id = normalizeIdOrNull(rawId, "source");
  const source = id ? await ingestSource(deps, id) : null;
  if (!source) return NOT_FOUND;
  if (source.status === "disabled") return DISABLED;
  // Publishing needs an API key and checks the topic's schema; the open ingest URL would bypass both.
  if (source.type === "topic") return TOPIC_SOURCE;
  // Messages are created through the API, which checks the event type's schema and fans out to endpoints.
  if (source.type === "outbound") return OUTBOUND_SOURCE;
  if (source.expires_at && now.getTime() >= Date.parse(source.expires_at)) return EXPIRED;
  if (source.request_limit !== null && source.request_count >= source.request_limit) return LIMIT_REACHED;
  return { source };
}

/**
 * A HEAD request is a reachability check (some providers probe the URL
 * before saving it): answered like a delivery would be up to the IP filter,
 * and nothing is stored or counted.
 */
export async function probe(deps: Deps, rawId: string, peerIp: string | null, headers: Headers): Promise<IngestResponse> {
  const found = await openSource(deps, rawId, deps.clock.now());
  if ("status" in found) return found;
  const ip = clientIp(peerIp, headers.get("x-forwarded-for") ?? undefined, deps.settings.trustProxy);
  if (!sourceRuntime(found.source, deps.secrets).admits(ip)) return IP_DENIED;
  return { status: 200, body: null, outcome: "probe" };
}

/** Writes the event (group commit) and tells live listeners once it is committed. */
async function store(deps: Deps, span: Span | undefined, write: EventWrite): Promise<WriteResult> {
  const result = await writeEvent(deps.db, () => deps.clock.now(), write);
  if (result.kind === "stored") {
    // Routing ran inside this commit (src/delivery/router.ts, ingestRouting): the status it left is the routing step's outcome.
    span?.setAttributes({
      "hookrelay.event.id": result.id,
      "hookrelay.event.status": result.status,
      "hookrelay.verification_status": write.verificationStatus,
      "hookrelay.dedup_status": result.duplicateOf ? "duplicate" : result.dedupStatus,
    });
    deps.bus.publish({ type: "event.created", orgId: write.orgId, envId: write.envId, eventId: result.id, sourceId: write.sourceId });
  }
  return result;
}

/** The source changed between lookup and commit: deleted (404) or its request_limit was reached meanwhile (410). */
function notStored(result: Exclude<WriteResult, { kind: "stored" }>): IngestResponse {
  return result.kind === "source_gone" ? NOT_FOUND : LIMIT_REACHED;
}

/**
 * The ingest span's context, stored with the event (docs/observability.md):
 * its attempts continue the trace from it, on any node and however late. A
 * received header of that name is never trusted to say it.
 */
function withStoredTrace(headers: Record<string, string>, span: Span | undefined): Record<string, string> {
  if (!span) return headers;
  const parent = traceparentOfSpan(span);
  const out = { ...headers };
  delete out[STORED_TRACE_HEADER];
  if (parent) out[STORED_TRACE_HEADER] = parent;
  return out;
}

/** A copy with the secret-bearing headers' values replaced; the verifier still sees the originals. */
function redacted(headers: Record<string, string>, names: readonly string[]): Record<string, string> {
  const out = { ...headers };
  for (const name of names) if (name in out) out[name] = REDACTED_HEADER_VALUE;
  return out;
}

function extractEventType(template: SourceTemplate | undefined, headers: Record<string, string>, json: () => unknown): string | null {
  const from = template?.event_type;
  if (!from) return null;
  const value = "header" in from ? headers[from.header.toLowerCase()] : atPath(json(), from.field);
  // The body is the provider's: a NUL in its type (which PostgreSQL's text cannot hold) is shown as U+FFFD, not refused.
  return typeof value === "string" && value !== "" ? value.slice(0, 200).replaceAll("\u0000", "\uFFFD") : null;
}
