import { ROOT_CONTEXT, SpanKind, SpanStatusCode, type Context, type Span, type Tracer } from "@opentelemetry/api";
import type { Server } from "bun";
import { Hono } from "hono";
import type { DatabaseHealth } from "../db/health";
import type { Deps } from "../domain/deps";
import { clientIp } from "../ingest/clientIp";
import { probe, receive, type IngestResponse } from "../ingest/pipeline";
import type { Logger } from "../observability/logger";
import type { Metrics } from "../observability/metrics";
import type { ServerSpanStarter } from "../observability/plainSpan";
import { extractContext } from "../observability/traceContext";
import { bodyTooLarge, readBoundedBody } from "./boundedBody";
import { toAppError, UNAVAILABLE_RETRY_AFTER_SECONDS } from "./middleware/errors";
import { securityHeaders } from "./middleware/secureHeaders";

/**
 * `/v1/ingest/*` served ahead of the Hono app (Bun.serve `routes`, see
 * src/server.ts): the hot path skips the generic middleware chain and does
 * what it needs of it once, directly (docs/performance.md, "Ingest"): the
 * body limit and the stalled-body timeout (./boundedBody.ts), the security
 * headers and the request id, the request metrics, the SERVER span, and the
 * error bodies of src/api/middleware/errors.ts. Answers are the same as the
 * app's route (src/api/v1/ingest.ts, which stays for `app.request()` and the
 * OpenAPI document); anything unusual (another method, no source id, an
 * encoded path) is handed to the app as it is.
 */
export interface IngestFastPathOptions {
  deps: Deps;
  logger: Logger;
  metrics: Metrics;
  requestBodyTimeoutMs: number;
  databaseHealth?: DatabaseHealth;
  tracer?: Tracer;
  /** The SERVER span without the SDK's span object when serve has one (src/observability/plainSpan.ts); else `tracer`'s. */
  serverSpan?: ServerSpanStarter;
}

type Handler = (req: Request, server: Server<unknown>) => Response | Promise<Response>;

const PREFIX = "/v1/ingest/";
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"]);
/** The metrics label of every ingest request (one series per method and status). */
const ROUTE = "/v1/ingest/:id";
const SPAN_ROUTE = "/v1/ingest/{source}";
const JSON_TYPE = "application/json";

export function createIngestFastPath(opts: IngestFastPathOptions, fallback: Handler): Handler {
  const { deps, logger, metrics, tracer, requestBodyTimeoutMs, databaseHealth } = opts;
  const startSpan: ServerSpanStarter | undefined = opts.serverSpan ?? (tracer ? (name, attributes, parent) => tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, parent) : undefined);
  const headersTaken = securityHeaderList();
  let baseHeaders: [string, string][] = [];
  // Children of labelled metrics, made once per label set instead of hashing the labels per request.
  const httpCounters = new Map<string, { inc(): void }>();
  const outcomeCounters = new Map<string, { inc(): void }>();
  const notStoredCounters = new Map<string, { inc(): void }>();
  const httpDuration = metrics.httpDuration.labels({ route: ROUTE });
  const countHttp = (method: string, status: number) => {
    const key = `${method} ${status}`;
    let counter = httpCounters.get(key);
    if (!counter) httpCounters.set(key, (counter = metrics.httpRequests.labels({ method, route: ROUTE, status: String(status) })));
    counter.inc();
  };
  const countOutcome = (map: Map<string, { inc(): void }>, counter: typeof metrics.ingestRequests, outcome: string) => {
    let child = map.get(outcome);
    if (!child) map.set(outcome, (child = counter.labels({ outcome })));
    child.inc();
  };
  // Fixed replies (404, 403, 410 …) are the same objects every time (src/ingest/pipeline.ts): their JSON is written once.
  const bodyText = new WeakMap<object, string>();
  const jsonOf = (body: unknown): string => {
    if (typeof body !== "object" || body === null) return JSON.stringify(body);
    let text = bodyText.get(body);
    if (text === undefined) bodyText.set(body, (text = JSON.stringify(body)));
    return text;
  };

  const answer = (status: number, body: string | null, requestId: string, extra?: [string, string][]): Response => {
    const headers: [string, string][] = body === null ? [...baseHeaders] : [["Content-Type", JSON_TYPE], ...baseHeaders];
    headers.push(["X-Request-Id", requestId]);
    if (extra) headers.push(...extra);
    return new Response(body, { status, headers });
  };

  return async (req, server) => {
    const started = performance.now();
    const method = req.method;
    const target = ingestTarget(req.url);
    if (!target || !METHODS.has(method)) return fallback(req, server);
    if (baseHeaders.length === 0) baseHeaders = await headersTaken;
    const requestId = requestIdOf(req.headers.get("x-request-id"));
    const peer = server.requestIP(req)?.address ?? null;
    const span = startSpan ? startServerSpan(startSpan, req, method, target.path) : undefined;
    let response: Response;
    try {
      const maxBytes = deps.settings.maxBodyBytes;
      // As the app's body limit: a declared oversize body is refused before the source is looked at.
      const declared = req.headers.get("content-length");
      if (declared !== null && Number(declared) > maxBytes) throw bodyTooLarge(maxBytes);
      let result: IngestResponse;
      if (method === "HEAD") {
        result = await probe(deps, target.sourceId, peer, req.headers);
      } else {
        result = await receive(deps, {
          sourceId: target.sourceId,
          method,
          path: target.path,
          query: target.query,
          headers: req.headers,
          peerIp: peer,
          readBody: () => readBoundedBody(req, maxBytes, requestBodyTimeoutMs),
          span,
        });
      }
      countOutcome(outcomeCounters, metrics.ingestRequests, result.outcome);
      if (result.notStored) countOutcome(notStoredCounters, metrics.ingestRejectedNotStored, result.outcome);
      metrics.ingestDuration.observe((performance.now() - started) / 1000);
      response = answer(result.status, method === "HEAD" ? null : successText(result) ?? jsonOf(result.body), requestId);
    } catch (err) {
      const error = toAppError(err);
      const extra: [string, string][] = [];
      if (error.code === "unavailable") {
        databaseHealth?.failed(err);
        extra.push(["retry-after", String(UNAVAILABLE_RETRY_AFTER_SECONDS)]);
      }
      if (error.code === "internal") {
        const ids = span?.spanContext();
        logger.error("unhandled error", {
          path: target.path,
          method,
          error: err instanceof Error ? (err.stack ?? err.message) : String(err),
          request_id: requestId,
          ...(ids ? { trace_id: ids.traceId, span_id: ids.spanId } : {}),
        });
      }
      // The rest of a stalled body is never read: the connection cannot carry another request.
      if (error.code === "request_timeout") extra.push(["connection", "close"]);
      response = answer(error.status, JSON.stringify(error.toBody()), requestId, extra);
    }
    const seconds = (performance.now() - started) / 1000;
    countHttp(method, response.status);
    httpDuration.observe(seconds);
    logger.debug("request", { method, path: target.path, status: response.status, ms: Math.round(seconds * 1000), request_id: requestId });
    if (span) endServerSpan(span, response.status, clientIp(peer, req.headers.get("x-forwarded-for") ?? undefined, deps.settings.trustProxy));
    return response;
  };
}

/** Source id, path and query of an ingest URL; null when the app should answer it (no id, or an encoded path it decodes). */
function ingestTarget(url: string): { sourceId: string; path: string; query: string | null } | null {
  const pathStart = url.indexOf("/", url.indexOf("//") + 2);
  if (pathStart < 0) return null;
  const q = url.indexOf("?", pathStart);
  const path = q < 0 ? url.slice(pathStart) : url.slice(pathStart, q);
  if (!path.startsWith(PREFIX) || path.includes("%")) return null;
  const slash = path.indexOf("/", PREFIX.length);
  const sourceId = slash < 0 ? path.slice(PREFIX.length) : path.slice(PREFIX.length, slash);
  if (sourceId === "") return null;
  return { sourceId, path, query: q >= 0 && q < url.length - 1 ? url.slice(q + 1) : null };
}

/** The success bodies, written without building an object to stringify (an event id needs no escaping). */
function successText(result: IngestResponse): string | null {
  if (result.outcome !== "accepted" && result.outcome !== "held") return null;
  const body = result.body as { event_id: string };
  return `{"success":true,"event_id":"${body.event_id}"}`;
}

/** As hono's request-id middleware (src/api/app.ts): the caller's id when it is short and plain, else a new one. */
function requestIdOf(incoming: string | null): string {
  return incoming && incoming.length <= 255 && !/[^\w\-=]/.test(incoming) ? incoming : crypto.randomUUID();
}

/** The security headers every response of the app carries, taken once from the same middleware (./middleware/secureHeaders.ts). */
async function securityHeaderList(): Promise<[string, string][]> {
  const probeApp = new Hono();
  probeApp.use(securityHeaders);
  probeApp.all("*", (c) => c.body(null, 200));
  const res = await probeApp.request(PREFIX + "x");
  return [...res.headers.entries()].map(([k, v]) => [canonical(k), v]);
}

const canonical = (name: string) => name.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase());

/**
 * The request's SERVER span with the HTTP conventions' attributes given at
 * once (src/api/middleware/tracing.ts does the same for the API routes),
 * continuing the provider's `traceparent`. It is handed to the pipeline, not
 * made active: nothing on the ingest path needs the context manager.
 */
function startServerSpan(startSpan: ServerSpanStarter, req: Request, method: string, path: string): Span {
  const parent: Context = req.headers.get("traceparent") === null ? ROOT_CONTEXT : extractContext(req.headers);
  const agent = req.headers.get("user-agent");
  const attributes: Record<string, string> = {
    "http.request.method": method,
    "url.scheme": req.url.startsWith("https:") ? "https" : "http",
    "url.path": path,
    "http.route": SPAN_ROUTE,
  };
  if (agent) attributes["user_agent.original"] = agent;
  return startSpan(`${method} ${SPAN_ROUTE}`, attributes, parent);
}

function endServerSpan(span: Span, status: number, client: string | null) {
  span.setAttribute("http.response.status_code", status);
  if (client) span.setAttribute("client.address", client);
  if (status >= 500) {
    span.setAttribute("error.type", String(status));
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.end();
}
