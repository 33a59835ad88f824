import { z } from "zod";
import { fromJsonText } from "./common";
import { retryScheduleInput, retryScheduleOutput } from "./retrySchedule";

/** Destinations (docs/decisions.md D6): where connections deliver events. */

export const DESTINATION_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;
export const AUTH_TYPES = ["none", "basic", "bearer", "api_key"] as const;
export const RETRY_STRATEGIES = ["exponential", "linear"] as const;
/** active: delivered; paused: deliveries wait queued until active again; disabled: nothing is routed to it. */
export const DESTINATION_STATUSES = ["active", "paused", "disabled"] as const;

export type AuthType = (typeof AUTH_TYPES)[number];
export type RetryStrategy = (typeof RETRY_STRATEGIES)[number];
export type DestinationStatus = (typeof DESTINATION_STATUSES)[number];

export const DESTINATION_DEFAULTS = {
  http_method: "POST",
  auth_type: "none",
  timeout_ms: 30_000,
  max_retries: 8,
  retry_strategy: "exponential",
  retry_interval_seconds: 30,
  status: "active",
} as const;


function httpUrlProblem(raw: string): string | null {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return "must be an absolute http:// or https:// URL";
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") return "must use http:// or https://";
  if (!u.hostname) return "must name a host";
  // Credentials in a URL end up in logs and attempt rows; auth_config keeps them encrypted.
  if (u.username || u.password) return "must not carry credentials; use auth_type basic";
  return null;
}

/**
 * A host that is an IP address in another spelling (2130706433, 0177.0.0.1,
 * 0x7f.1, [::127.0.0.1]) is stored as the URL parser, and so the HTTP client,
 * reads it (http://127.0.0.1/…): the stored URL says where deliveries go
 * (docs/delivery.md). Any other URL is kept exactly as given.
 */
export function canonicalHostUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return raw;
  }
  const ipHost = /^\d+\.\d+\.\d+\.\d+$/.test(u.hostname) || u.hostname.startsWith("[");
  if (!ipHost) return raw;
  const slashes = raw.indexOf("//");
  return slashes >= 0 && raw.slice(slashes + 2).toLowerCase().startsWith(u.host) ? raw : u.href;
}

export const destinationUrl = z
  .string()
  .trim()
  .min(1)
  .max(2048)
  .superRefine((s, ctx) => {
    const problem = httpUrlProblem(s);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  })
  .overwrite(canonicalHostUrl);

/** RFC 9110 token: what a header name may be. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
export const headerName = z.string().min(1).max(256).regex(HEADER_NAME, "must be a valid HTTP header name");
const headerValue = z
  .string()
  .max(8192)
  .refine((v) => !/[\r\n\0]/.test(v), "must not contain CR, LF or NUL");

/** Connection-level headers belong to the HTTP client; setting them would corrupt the request. */
const RESERVED_HEADERS = new Set(["content-length", "transfer-encoding", "connection", "keep-alive", "upgrade", "te", "trailer", "proxy-connection"]);

export const destinationHeaders = z.preprocess(
  fromJsonText,
  z
    .record(headerName, headerValue)
    .superRefine((h, ctx) => {
      const names = Object.keys(h);
      if (names.length > 50) ctx.addIssue({ code: "custom", message: "at most 50 headers" });
      for (const name of names) {
        if (RESERVED_HEADERS.has(name.toLowerCase())) ctx.addIssue({ code: "custom", path: [name], message: "is set by the HTTP client and cannot be configured" });
      }
    })
    .nullable(),
);

/** auth_config per auth_type. Secret parts (password, token, api_key) are encrypted at rest and never returned. */
export const basicAuthConfig = z.object({ username: z.string().min(1).max(500), password: z.string().min(1).max(1000) });
export const bearerAuthConfig = z.object({ token: z.string().min(1).max(8192) });
export const apiKeyAuthConfig = z.object({
  /** Header name (or query parameter name when `to` is `query`). */
  key: headerName,
  api_key: z.string().min(1).max(8192),
  to: z.enum(["header", "query"]).default("header"),
});

export type BasicAuthConfig = z.infer<typeof basicAuthConfig>;
export type BearerAuthConfig = z.infer<typeof bearerAuthConfig>;
export type ApiKeyAuthConfig = z.infer<typeof apiKeyAuthConfig>;
export type DestinationAuth =
  | { type: "none" }
  | ({ type: "basic" } & BasicAuthConfig)
  | ({ type: "bearer" } & BearerAuthConfig)
  | ({ type: "api_key" } & ApiKeyAuthConfig);

export const authConfigSchemas = {
  basic: basicAuthConfig,
  bearer: bearerAuthConfig,
  api_key: apiKeyAuthConfig,
} as const;

/** Which fields of each auth config are secret (left out of responses). */
export const AUTH_SECRET_FIELDS: Record<AuthType, readonly string[]> = {
  none: [],
  basic: ["password"],
  bearer: ["token"],
  api_key: ["api_key"],
};

/** Decoded length of base64 text, 0 when it is not base64 (atob: contracts also run in the browser). */
function base64Length(b64: string | undefined): number {
  if (!b64) return 0;
  try {
    return atob(b64).length;
  } catch {
    return 0;
  }
}

/**
 * How requests are signed (https://www.standardwebhooks.com): `hmac-sha256`
 * (`v1`, a shared `whsec_` secret) or `ed25519` (`v1a`, a `whsk_` private
 * key whose `whpk_` public key receivers verify with). `standard-webhooks`,
 * the name HMAC had before Ed25519 was offered, is still read as HMAC.
 */
export const SIGNING_ALGORITHMS = ["hmac-sha256", "ed25519"] as const;
export type SigningAlgorithm = (typeof SIGNING_ALGORITHMS)[number];
export const signingAlgorithm = z.preprocess((v) => (v === "standard-webhooks" ? "hmac-sha256" : v), z.enum(SIGNING_ALGORITHMS));

/**
 * A Standard Webhooks key: `whsec_` + base64 of 24..64 random bytes (the
 * range the spec recommends) for HMAC, or `whsk_` + base64 of a 32-byte
 * Ed25519 seed.
 */
export const signingSecret = z
  .string()
  .trim()
  .superRefine((s, ctx) => {
    const ed25519 = /^whsk_([A-Za-z0-9+/]+={0,2})$/.exec(s);
    if (ed25519) {
      if (base64Length(ed25519[1]) !== 32) ctx.addIssue({ code: "custom", message: "must be whsk_ followed by the base64 of 32 bytes" });
      return;
    }
    const bytes = base64Length(/^whsec_([A-Za-z0-9+/]+={0,2})$/.exec(s)?.[1]);
    if (bytes < 24 || bytes > 64) {
      ctx.addIssue({ code: "custom", message: "must be whsec_ followed by the base64 of 24 to 64 bytes, or whsk_ followed by the base64 of 32 bytes" });
    }
  });

/** What GET …/public-key answers: the key receivers verify `v1a` signatures with. */
export const publicKeyBody = z.object({ public_key: z.string().describe("whpk_ + base64 of the 32-byte Ed25519 public key"), algorithm: z.enum(SIGNING_ALGORITHMS) });

const destinationFields = {
  name: z.string().trim().min(1).max(200),
  url: destinationUrl,
  http_method: z.enum(DESTINATION_METHODS),
  headers: destinationHeaders,
  auth_type: z.enum(AUTH_TYPES),
  /** Checked against auth_type in the domain (a PATCH may change either one). */
  auth_config: z.record(z.string(), z.unknown()).nullable(),
  timeout_ms: z.int().min(100).max(300_000),
  rate_limit_per_second: z.int().min(1).max(100_000).nullable(),
  max_retries: z.int().min(0).max(50),
  retry_strategy: z.enum(RETRY_STRATEGIES),
  retry_interval_seconds: z.int().min(1).max(86_400),
  retry_schedule: retryScheduleInput,
  signing_secret: signingSecret,
  signing_algorithm: signingAlgorithm,
  status: z.enum(DESTINATION_STATUSES),
};

export const createDestinationInput = z.object({
  ...destinationFields,
  http_method: destinationFields.http_method.optional(),
  headers: destinationFields.headers.optional(),
  auth_type: destinationFields.auth_type.optional(),
  auth_config: destinationFields.auth_config.optional(),
  timeout_ms: destinationFields.timeout_ms.optional(),
  rate_limit_per_second: destinationFields.rate_limit_per_second.optional(),
  max_retries: destinationFields.max_retries.optional(),
  retry_strategy: destinationFields.retry_strategy.optional(),
  retry_interval_seconds: destinationFields.retry_interval_seconds.optional(),
  retry_schedule: destinationFields.retry_schedule.optional(),
  signing_secret: destinationFields.signing_secret.optional(),
  signing_algorithm: destinationFields.signing_algorithm.optional(),
  status: destinationFields.status.optional(),
  org_id: z.string().max(64).optional(),
  env_id: z.string().max(64).optional(),
});
export type CreateDestinationInput = z.infer<typeof createDestinationInput>;

export const updateDestinationInput = z.object(destinationFields).partial();
export type UpdateDestinationInput = z.infer<typeof updateDestinationInput>;

export const listDestinationsQuery = z.object({ status: z.enum(DESTINATION_STATUSES).optional() });

export const destination = z.object({
  id: z.string(),
  org_id: z.string(),
  env_id: z.string(),
  name: z.string(),
  url: z.string(),
  http_method: z.string(),
  headers: z.string().nullable().describe("JSON object, encoded as a string; values are ******** for a read-scope key"),
  auth_type: z.string(),
  auth_config: z.string().nullable().describe("JSON object without its secret fields, encoded as a string"),
  timeout_ms: z.number().int(),
  rate_limit_per_second: z.number().int().nullable(),
  max_retries: z.number().int(),
  retry_strategy: z.string(),
  retry_interval_seconds: z.number().int(),
  signing_algorithm: z.enum(SIGNING_ALGORITHMS),
  retry_schedule: retryScheduleOutput,
  status: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type Destination = z.infer<typeof destination>;

export const destinationBody = z.object({ destination });
export const destinationList = z.object({ destinations: z.array(destination) });
export const destinationSecret = z.object({ secret: z.string() });
