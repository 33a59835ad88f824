import { z } from "zod";
import { isoDate } from "./common";

/** Signature schemes a source can check (spec's three, plus Twilio's and a shared-token header). */
export const VERIFICATION_TYPES = ["hmac-sha256", "hmac-sha1", "standard-webhooks", "twilio", "token"] as const;
export type VerificationType = (typeof VERIFICATION_TYPES)[number];

/** What a stored request header holding a secret reads instead (docs/ingest.md). */
export const REDACTED_HEADER_VALUE = "[redacted]";

/**
 * Request headers that carry a source's secret itself rather than a
 * signature of the body: a `token` source's header (GitLab's X-Gitlab-Token).
 * Anyone who reads one can forge requests, so ingest stores it as
 * `[redacted]` and delivery never forwards it (docs/ingest.md). Judged from
 * the verification type and header even while verification is off: the
 * provider still sends its token. Names are lower-case.
 */
export function secretRequestHeaders(verificationType: string | null, verificationHeader: string | null): string[] {
  return verificationType === "token" && verificationHeader ? [verificationHeader.toLowerCase()] : [];
}

export const SOURCE_STATUSES = ["active", "paused", "disabled"] as const;
export type SourceStatus = (typeof SOURCE_STATUSES)[number];

export const DEDUP_STRATEGIES = ["body_hash", "header", "field"] as const;
export type DedupStrategy = (typeof DEDUP_STRATEGIES)[number];

export const SCHEMA_ACTIONS = ["reject", "warn"] as const;
export type SchemaAction = (typeof SCHEMA_ACTIONS)[number];

/** Flags are booleans on input; 0/1 is accepted too so a fetched source can be sent back as is. */
const flagInput = z.union([z.boolean(), z.literal(0), z.literal(1)]).transform((v) => v === true || v === 1);

/** A JSON object, or the JSON-encoded string the API returns for it. The domain parses and checks it. */
const jsonObjectInput = z.union([z.record(z.string(), z.unknown()), z.string().max(256 * 1024)]);

/** CIDR lists are arrays (the spec's form): a string is refused rather than guessed at. */
const ipListInput = z.array(z.string().max(100)).max(1000);

const headerName = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, "must be an HTTP header name");

const sourceFields = {
  name: z.string().trim().min(1).max(200),
  slug: z
    .string()
    .trim()
    .toLowerCase()
    .regex(/^[a-z0-9][a-z0-9_-]{0,99}$/, "lower-case letters, digits, '-' and '_', at most 100"),
  description: z.string().max(5000).nullable(),
  template: z.string().trim().min(1).max(100).nullable(),
  verification_enabled: flagInput,
  verification_type: z.enum(VERIFICATION_TYPES).nullable(),
  verification_secret: z.string().min(1).max(4096).nullable(),
  verification_header: headerName.nullable(),
  verification_config: jsonObjectInput.nullable(),
  dedup_enabled: flagInput,
  dedup_strategy: z.enum(DEDUP_STRATEGIES).nullable(),
  dedup_field: z.string().trim().min(1).max(500).nullable(),
  dedup_window_seconds: z.number().int().min(1).max(30 * 24 * 3600),
  ip_allowlist: ipListInput.nullable(),
  ip_denylist: ipListInput.nullable(),
  status: z.enum(SOURCE_STATUSES),
  expires_at: isoDate.nullable(),
  request_limit: z.number().int().min(1).max(1_000_000_000).nullable(),
  source_config: jsonObjectInput.nullable(),
  schema_validation_enabled: flagInput,
  json_schema: jsonObjectInput.nullable(),
  schema_action: z.enum(SCHEMA_ACTIONS).nullable(),
};

/** POST /sources: every PATCH field plus the create-only ones; only name is required. */
export const createSourceInput = z.object({
  ...z.object(sourceFields).partial().shape,
  name: sourceFields.name,
  org_id: z.string().max(64).optional(),
  env_id: z.string().max(64).optional(),
  type: z
    .string()
    .trim()
    .regex(/^[a-z][a-z0-9_-]{0,49}$/, "lower-case letters, digits, '-' and '_'")
    // The environment's outbound source is made by the first message sent (docs/outbound.md).
    .refine((t) => t !== "outbound", "outbound is reserved for the source that holds outbound messages")
    .optional(),
  is_ephemeral: flagInput.optional(),
});
export type CreateSourceInput = z.input<typeof createSourceInput>;

/** PATCH /sources/{id}: any subset; null clears a nullable field. */
export const updateSourceInput = z.object(sourceFields).partial();
export type UpdateSourceInput = z.input<typeof updateSourceInput>;

export const listSourcesQuery = z.object({
  org_id: z.string().max(64).optional(),
  env_id: z.string().max(64).optional(),
  status: z.enum(SOURCE_STATUSES).optional(),
  type: z.string().max(50).optional(),
});
export type ListSourcesQuery = z.infer<typeof listSourcesQuery>;

export const source = z.object({
  id: z.string(),
  org_id: z.string(),
  env_id: z.string(),
  slug: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  template: z.string().nullable(),
  verification_enabled: z.number().int(),
  verification_type: z.string().nullable(),
  /** Masked: `********` and the last 4 characters. The full value: GET /sources/{id}/secret. */
  verification_secret: z.string().nullable(),
  verification_header: z.string().nullable(),
  verification_config: z.string().nullable(),
  dedup_enabled: z.number().int(),
  dedup_strategy: z.string().nullable(),
  dedup_field: z.string().nullable(),
  dedup_window_seconds: z.number().int(),
  ip_allowlist: z.string().nullable(),
  ip_denylist: z.string().nullable(),
  status: z.string(),
  event_count: z.number().int(),
  request_count: z.number().int(),
  last_event_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  is_ephemeral: z.number().int(),
  expires_at: z.string().nullable(),
  request_limit: z.number().int().nullable(),
  type: z.string(),
  source_config: z.string().nullable(),
  schema_validation_enabled: z.number().int(),
  json_schema: z.string().nullable(),
  schema_action: z.string().nullable(),
  ingest_url: z.string(),
});
export type SourceDto = z.infer<typeof source>;

export const sourceBody = z.object({ source });
export const sourceList = z.object({ sources: z.array(source) });
export const sourceSecretBody = z.object({ secret: z.string().nullable() });

export const sourceTemplate = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  verification_type: z.string(),
  verification_header: z.string().nullable(),
  /** JSON-encoded, like the source field it fills. */
  verification_config: z.string().nullable(),
  dedup_strategy: z.string().nullable(),
  dedup_field: z.string().nullable(),
});
export const templateList = z.object({ templates: z.array(sourceTemplate) });
