import type { DestinationAuth } from "../contracts/destinations";
import { applyDestinationAuth } from "./destinationAuth";
import { describeNetworkError } from "./networkErrors";
import { standardWebhookHeaders } from "./signing";
import { DestinationRefused, DnsFailure, resolveAllowedTarget } from "./ssrf";

/**
 * The outgoing request of docs/decisions.md D6 and what came back.
 *
 * Request: the destination's method and URL; the original body (or the
 * transformed JSON); the received headers minus hop-by-hop ones, `host` and
 * `content-length`; then the destination's own headers, its auth, the
 * `x-hookrelay-*` headers and the Standard Webhooks signature headers, in
 * that order of precedence. Redirects are not followed: a 3xx is a failure,
 * and following it could lead past the SSRF guard.
 *
 * Response: status, headers and at most RESPONSE_BODY_LIMIT bytes of the body.
 */
export const RESPONSE_BODY_LIMIT = 16 * 1024;

/** RFC 9110 §7.6.1 connection-specific fields, plus what the HTTP client sets itself. */
const DROPPED_HEADERS = new Set([
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "trailers",
  "transfer-encoding",
  "upgrade",
  "host",
  "content-length",
  "expect",
]);
const REDACTED = "[redacted]";

/**
 * Providers' signature headers. A transformed body no longer matches them,
 * so they are not forwarded with it (a receiver checking one would reject
 * the delivery, or worse, trust a stale one); the relay's own
 * `webhook-signature` covers the body sent. The source's own configured
 * verification header is dropped too.
 */
const PROVIDER_SIGNATURE_HEADERS = [
  "stripe-signature",
  "x-hub-signature-256",
  "x-hub-signature",
  "x-shopify-hmac-sha256",
  "x-slack-signature",
  "svix-signature",
  "webhook-signature",
  "x-twilio-signature",
];

export interface SendTarget {
  url: string;
  httpMethod: string;
  /** The destination's own extra headers. */
  headers: Record<string, string>;
  auth: DestinationAuth;
  timeoutMs: number;
  signingSecret: string;
  /** Secrets that sign beside signingSecret (an endpoint's rotated-out secret during its overlap). */
  extraSigningSecrets?: readonly string[];
}

export interface SendEvent {
  id: string;
  sourceId: string;
  /** Received headers, names lower-case. */
  headers: Record<string, unknown>;
  body: Uint8Array;
  /**
   * An outbound message (docs/outbound.md): webhook-id is the message id, and
   * the x-hookrelay-* headers, which describe a relayed event, are not sent.
   */
  messageId?: string;
}

export interface OutgoingRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: Uint8Array | null;
  /** Header names whose values are secret: stored as [redacted]. */
  secretHeaders: string[];
}

/**
 * Builds the request; `transformed` (when a transform ran) replaces the body
 * with its JSON and drops the provider's signature headers (and
 * `sourceSignatureHeader`, the source's verification header), which signed
 * the original body.
 */
export function buildRequest(opts: {
  target: SendTarget;
  event: SendEvent;
  transformed?: { value: unknown };
  sourceSignatureHeader?: string | null;
  /** Received headers holding the source's secret (lower-case names): never forwarded, transformed or not. */
  sourceSecretHeaders?: readonly string[];
  attemptNumber: number;
  now: Date;
}): OutgoingRequest {
  const { target, event } = opts;
  const headers: Record<string, string> = {};
  const connectionListed = connectionListedNames(event.headers["connection"]);
  for (const rawName in event.headers) {
    const value = event.headers[rawName];
    const name = rawName.toLowerCase();
    if (DROPPED_HEADERS.has(name) || connectionListed?.has(name) || name.startsWith("x-hookrelay-")) continue;
    if (value === undefined || value === null) continue;
    headers[name] = Array.isArray(value) ? value.join(", ") : String(value);
  }
  if (opts.sourceSecretHeaders) for (const name of opts.sourceSecretHeaders) delete headers[name];

  let body: Uint8Array = event.body;
  if (opts.transformed) {
    // undefined (a transform that selects nothing) is sent as an empty body, not the text "undefined".
    const json = opts.transformed.value === undefined ? "" : JSON.stringify(opts.transformed.value);
    body = new TextEncoder().encode(json);
    headers["content-type"] = "application/json";
    delete headers["content-encoding"];
    for (const name of PROVIDER_SIGNATURE_HEADERS) delete headers[name];
    if (opts.sourceSignatureHeader) delete headers[opts.sourceSignatureHeader.toLowerCase()];
  }

  for (const [name, value] of Object.entries(target.headers)) headers[name.toLowerCase()] = value;

  const authed = applyDestinationAuth(target.url, headers, target.auth);
  const url = authed.url;
  if (authed.headers !== headers) Object.assign(headers, authed.headers);
  const auth = target.auth;
  const secretHeaders = auth.type === "basic" || auth.type === "bearer" ? ["authorization"] : auth.type === "api_key" && auth.to !== "query" ? [auth.key.toLowerCase()] : [];
  // The destination's custom headers are secrets (docs/delivery.md): an attempt row shows their names, not their values.
  for (const name in target.headers) secretHeaders.push(name.toLowerCase());

  const method = target.httpMethod.toUpperCase();
  const sendsBody = method !== "GET" && method !== "HEAD";
  const signed = sendsBody ? body : new Uint8Array();
  if (event.messageId === undefined) {
    headers["x-hookrelay-event-id"] = event.id;
    headers["x-hookrelay-source-id"] = event.sourceId;
    headers["x-hookrelay-attempt"] = String(opts.attemptNumber);
  }
  const secrets = target.extraSigningSecrets?.length ? [target.signingSecret, ...target.extraSigningSecrets] : target.signingSecret;
  // webhook-id is the event (or message) id on every try and to every destination: receivers dedupe on it.
  Object.assign(headers, standardWebhookHeaders(secrets, event.messageId ?? event.id, opts.now, signed));
  if (!sendsBody) delete headers["content-type"];
  return { url, method, headers, body: sendsBody ? body : null, secretHeaders };
}

/**
 * Names a Connection header lists as hop-by-hop besides its own options
 * (RFC 9110 §7.6.1); null when it lists none, as `keep-alive` and `close`
 * (nearly every request) do.
 */
function connectionListedNames(connection: unknown): Set<string> | null {
  if (connection === undefined || connection === null) return null;
  const value = String(connection).toLowerCase();
  if (value === "keep-alive" || value === "close") return null;
  return new Set(value.split(",").map((h) => h.trim()));
}

export type FailureClass = "timeout" | "connection_error" | "ssrf_blocked" | `http_${number}`;

export interface SendResult {
  ok: boolean;
  responseStatus: number | null;
  responseHeaders: Record<string, string> | null;
  responseBody: string | null;
  durationMs: number;
  /** Set when !ok. */
  error: FailureClass | null;
  errorDetail: string | null;
  /** False when trying again cannot help (a refused address). */
  retryable: boolean;
  retryAfter: string | null;
}

/** Sends the request with the destination's timeout covering connect, response and body. */
export async function send(request: OutgoingRequest, opts: { timeoutMs: number; blockPrivate: boolean }): Promise<SendResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const failure = (error: FailureClass, detail: string, retryable = true): SendResult => ({
    ok: false,
    responseStatus: null,
    responseHeaders: null,
    responseBody: null,
    durationMs: elapsed(),
    error,
    errorDetail: detail,
    retryable,
    retryAfter: null,
  });

  const signal = AbortSignal.timeout(opts.timeoutMs);
  let url: URL | string = request.url;
  let headers = request.headers;
  const allowedKey = `${opts.blockPrivate ? 1 : 0}${request.url}`;
  if (!allowedLiteralUrls.has(allowedKey)) {
    try {
      const parsed = new URL(request.url);
      const target = await resolveAllowedTarget(parsed, opts.blockPrivate);
      const checkedHost = target.family === 6 ? `[${target.address}]` : target.address;
      if (parsed.protocol === "http:" && parsed.hostname !== checkedHost) {
        // Connect to the address that was checked, so a second DNS answer cannot differ (DNS rebinding).
        // https keeps the name: certificate checks need it; its remaining window is documented in docs/delivery.md.
        headers = { ...headers, host: parsed.host };
        url = new URL(parsed);
        url.hostname = checkedHost;
      } else if (target.literal) {
        if (allowedLiteralUrls.size >= 1000) allowedLiteralUrls.clear();
        allowedLiteralUrls.add(allowedKey);
      }
    } catch (err) {
      if (err instanceof DestinationRefused) return failure("ssrf_blocked", err.message, false);
      if (err instanceof DnsFailure) return failure("connection_error", err.message);
      throw err;
    }
  }

  try {
    const res = await fetch(url, { method: request.method, headers, body: request.body as BodyInit | null, redirect: "manual", signal });
    const responseHeaders = flatHeaders(res.headers);
    const responseBody = await readLimited(res, RESPONSE_BODY_LIMIT);
    const ok = res.status >= 200 && res.status < 300;
    return {
      ok,
      responseStatus: res.status,
      responseHeaders,
      responseBody,
      durationMs: elapsed(),
      error: ok ? null : `http_${res.status}`,
      errorDetail: ok ? null : `destination answered HTTP ${res.status}`,
      retryable: true,
      retryAfter: res.headers.get("retry-after"),
    };
  } catch (err) {
    if (signal.aborted) return failure("timeout", `no complete response within ${opts.timeoutMs} ms`);
    return failure("connection_error", describeNetworkError(err));
  }
}

/**
 * URLs naming an address the guard allowed (per blockPrivate setting): such
 * a verdict never changes and nothing is rewritten, so they are sent as they
 * are, without parsing or checking them again for every delivery.
 */
const allowedLiteralUrls = new Set<string>();

/** Response headers as one string per name; several `set-cookie`s joined as the others are. */
function flatHeaders(headers: Headers): Record<string, string> {
  // Bun's toJSON: a plain object at once, instead of iterating entries.
  const json = headers.toJSON() as Record<string, string | string[]>;
  const cookies = json["set-cookie"];
  if (Array.isArray(cookies)) json["set-cookie"] = cookies.join(", ");
  return json as Record<string, string>;
}

const utf8 = new TextDecoder();

/** Reads at most `limit` bytes of a response body, then stops downloading. */
async function readLimited(res: Response, limit: number): Promise<string | null> {
  if (!res.body) return null;
  const declared = Number(res.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > 0 && declared <= limit) return utf8.decode(await res.arrayBuffer());
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (size < limit) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.byteLength;
  }
  if (size >= limit) await reader.cancel().catch(() => {});
  const all = Buffer.concat(chunks.map((c) => Buffer.from(c.buffer, c.byteOffset, c.byteLength)));
  return utf8.decode(all.subarray(0, limit));
}

/** The request headers as stored on the attempt row: secrets redacted. */
export function storedRequestHeaders(request: OutgoingRequest): Record<string, string> {
  const out = { ...request.headers };
  for (const name of request.secretHeaders) if (name in out) out[name] = REDACTED;
  return out;
}

/** The request URL as stored: an api_key sent in the query is redacted. */
export function storedRequestUrl(request: OutgoingRequest, target: SendTarget): string {
  if (target.auth.type !== "api_key" || target.auth.to !== "query") return request.url;
  const u = new URL(request.url);
  u.searchParams.set(target.auth.key, REDACTED);
  return u.toString();
}
