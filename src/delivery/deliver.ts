import type { ClaimedEvent } from "../db/deliverySql";
import type { Deps } from "../domain/deps";
import { idPrefix } from "../contracts/ids";
import type { Metrics } from "../observability/metrics";
import { eventView } from "../rules/eventView";
import { buildRequest, send, storedRequestHeaders, storedRequestUrl, type SendTarget } from "../outgoing/sender";
import { applyTransform, DEFAULT_TRANSFORM_TIMEOUT_MS, TransformError } from "../rules/transform";
import type { AttemptOutcome } from "./outcomes";
import type { AttemptRow } from "./queue";
import type { DeliveryCaches } from "./deliveryCaches";
import type { DestinationPacer } from "./rateLimiter";
import { decideRetry } from "./retryPolicy";
import { endAttemptSpan, endAttemptSpanUnsent, inAttemptSpan, propagateTrace, startAttemptSpan, traceOf } from "./attemptSpan";
import type { PlainSpanStarter } from "../observability/plainSpan";

/** A claimed row and its event (null when retention pruned the event meanwhile). */
export interface Claimed {
  row: AttemptRow;
  event: ClaimedEvent | null;
  /** Date.now() at the claim, which read the destination's status from the database. */
  claimedAt: number;
}

/** What a delivery needs of the worker that sends it. */
export interface DeliveryContext {
  deps: Pick<Deps, "clock" | "settings">;
  caches: DeliveryCaches;
  pacer: DestinationPacer;
  metrics?: Metrics;
  /** Set when tracing is on: each attempt is a CLIENT span in its event's trace (./attemptSpan.ts). */
  spans?: PlainSpanStarter;
  /** HOOKRELAY_OTEL_PROPAGATE: destinations receive the attempt's traceparent (default on). */
  propagateTrace?: boolean;
  /** The worker is stopping: a row not sent yet goes back to the queue. */
  stopping: () => boolean;
  /** Told when a send took its destination's rate-limit slot. */
  slotTaken?: (destinationId: string) => void;
}

/**
 * What sending one claimed row came to: its outcome to record, "hand back"
 * when it goes back to the queue unsent (its destination paused or out of
 * rate-limit slots, or the worker stopping), or null when there is nothing
 * to record (its event was pruned with the row).
 */
export type Delivered = AttemptOutcome | "hand back" | null;

/**
 * Sends one claimed row: checks its destination, endpoint and connection,
 * takes a rate-limit slot, transforms, signs and sends the request, and
 * classifies what came back (success, a retry at some time, or the DLQ).
 */
export async function deliver(ctx: DeliveryContext, { row, event, claimedAt }: Claimed): Promise<Delivered> {
  const { clock } = ctx.deps;
  const { destinations, transforms, signatureHeaders } = ctx.caches;
  // Pruned with its attempts (this row included) meanwhile: nothing to send or record, and no rate-limit slot to spend.
  if (!event) return null;
  let destination = await destinations.get(row.destinationId);
  // The claim found the destination not paused in the database: a cached `paused` loaded before it is stale
  // (resumed since), and handing the row back would only have the next pump claim it again until the entry expires.
  if (destination?.status === "paused") destination = await destinations.get(row.destinationId, { loadedSince: claimedAt });
  if (!destination) return terminal(row, clock.now(), "destination_not_found", "the destination was deleted");
  if (destination.status === "paused" || ctx.stopping()) return "hand back";
  if (destination.status === "disabled") return terminal(row, clock.now(), "destination_disabled", "the destination is disabled");
  // An application endpoint (docs/outbound.md): deleted meanwhile, or past its expires_at, it receives nothing.
  const endpoint = destination.endpoint;
  if (destination.applicationId && !endpoint) return terminal(row, clock.now(), "destination_not_found", "the endpoint was deleted");
  if (endpoint?.expiresAt && Date.parse(endpoint.expiresAt) <= clock.now().getTime()) {
    return terminal(row, clock.now(), "endpoint_expired", `the endpoint expired at ${endpoint.expiresAt}`);
  }
  // Deleted while this row waited (a retry the delete did not see, asked for by a delivery then in flight):
  // cancelled as the delete cancels the others (src/domain/connections.ts). A replay only borrows the
  // connection's transform and goes to the destination regardless.
  const connection = row.connectionId ? await transforms.get(row.connectionId) : null;
  if (row.connectionId && !connection && row.triggerType !== "replay") {
    return { ...terminal(row, clock.now(), "connection_deleted", "the connection was deleted before this delivery was sent"), dlq: false };
  }
  const group = endpoint?.applicationRateLimit ? { key: `application:${endpoint.applicationId}`, ratePerSecond: endpoint.applicationRateLimit } : undefined;
  if (!ctx.pacer.tryTake(destination.id, destination.rateLimitPerSecond, clock.now().getTime(), group)) return "hand back";
  ctx.slotTaken?.(destination.id);

  const [signingSecret, ...extraSigningSecrets] = endpoint ? endpoint.signingSecrets(clock.now()) : [destination.signingSecret];
  const target: SendTarget = {
    url: destination.url,
    httpMethod: destination.httpMethod,
    headers: destination.headers,
    auth: destination.auth,
    timeoutMs: destination.timeoutMs,
    signingSecret: signingSecret!,
    extraSigningSecrets,
  };
  let transformed: { value: unknown } | undefined;
  let sourceSignatureHeader: string | null = null;
  const eventHeaders = JSON.parse(event.headers) as Record<string, unknown>;
  const span = ctx.spans
    ? startAttemptSpan(ctx.spans, eventHeaders, { method: destination.httpMethod, url: destination.url, destinationId: destination.id, connectionId: row.connectionId, attemptId: row.id, attemptNumber: row.attemptNumber ?? 1 })
    : undefined;
  if (connection?.transformEnabled === 1 && connection.transformExpression) {
    const view = eventView(event);
    const expression = connection.transformExpression;
    try {
      transformed = { value: await inAttemptSpan(ctx.spans, span, "transform", () => applyTransform(expression, view, { timeoutMs: DEFAULT_TRANSFORM_TIMEOUT_MS })) };
    } catch (err) {
      if (span) endAttemptSpanUnsent(span, err instanceof TransformError ? "transform_error" : "_OTHER");
      if (!(err instanceof TransformError)) throw err;
      return { ...terminal(row, clock.now(), "transform_error", err.message, { url: destination.url, method: destination.httpMethod }), trace: traceOf(span) };
    }
  }
  // An outbound message's source is the application's: it received no request, so no header holds a secret.
  const sourceHeaders = endpoint ? null : await signatureHeaders.get(event.sourceId);
  if (transformed) sourceSignatureHeader = sourceHeaders?.signature ?? null;

  // The attempt's sent_at, and the signature's timestamp: the request starts now.
  const sentAt = clock.now();
  // A message's event is `evt_<message id>`: receivers see the message id as webhook-id.
  const messageId = endpoint ? event.id.slice(idPrefix.event.length) : undefined;
  const request = buildRequest({
    target,
    event: { id: event.id, sourceId: event.sourceId, headers: eventHeaders, body: event.body, messageId },
    transformed,
    sourceSignatureHeader,
    sourceSecretHeaders: sourceHeaders?.secret,
    attemptNumber: row.attemptNumber ?? 1,
    now: sentAt,
  });
  // An endpoint a portal link set is held to the private-address block, checked again at each send (DNS may have changed).
  const blockPrivate = endpoint ? endpoint.blockPrivate : ctx.deps.settings.blockPrivateDestinations;
  propagateTrace(request, destination.headers, ctx.propagateTrace === false ? undefined : span);
  const result = await send(request, { timeoutMs: destination.timeoutMs, blockPrivate });
  if (span) endAttemptSpan(span, result);
  if (result.responseStatus !== null || result.error === "timeout") ctx.metrics?.deliveryDuration.observe(result.durationMs / 1000);

  const now = clock.now();
  const decision = result.ok
    ? ({ retry: false } as const)
    : decideRetry({
        settings: destination,
        attemptNumber: row.attemptNumber ?? 1,
        retryable: result.retryable,
        noRetry: row.noRetry === 1,
        responseStatus: result.responseStatus,
        retryAfter: result.retryAfter,
        now,
      });
  return {
    attempt: row,
    status: result.ok ? "success" : "failed",
    requestUrl: storedRequestUrl(request, target),
    requestMethod: request.method,
    requestHeaders: JSON.stringify(storedRequestHeaders(request)),
    requestBodySize: request.body?.byteLength ?? 0,
    responseStatus: result.responseStatus,
    responseHeaders: result.responseHeaders ? JSON.stringify(result.responseHeaders) : null,
    responseBody: result.responseBody,
    durationMs: result.durationMs,
    sentAt,
    error: result.error,
    errorDetail: result.errorDetail,
    retryAt: decision.retry ? new Date(now.getTime() + decision.delayMs) : null,
    dlq: !result.ok && !decision.retry && row.noRetry !== 1,
    trace: traceOf(span),
  };
}

/** A failure that no retry can fix: the chain ends here, in the DLQ unless it is a replay. */
function terminal(row: AttemptRow, attemptedAt: Date, error: string, detail: string, target?: { url: string; method: string }): AttemptOutcome {
  return {
    attempt: row,
    status: "failed",
    requestUrl: target?.url ?? row.requestUrl,
    requestMethod: target?.method ?? row.requestMethod,
    requestHeaders: null,
    requestBodySize: 0,
    responseStatus: null,
    responseHeaders: null,
    responseBody: null,
    durationMs: null,
    sentAt: attemptedAt,
    error,
    errorDetail: detail,
    retryAt: null,
    dlq: row.noRetry !== 1,
  };
}
