import { z } from "zod";
import { isoDate } from "./common";
import { pageQuery } from "./pagination";

export const EVENT_STATUSES = ["pending", "delivered", "failed", "held", "rejected", "ignored"] as const;
export const VERIFICATION_STATUSES = ["verified", "failed", "skipped"] as const;
export const DEDUP_STATUSES = ["unique", "duplicate", "skipped"] as const;
export const INGEST_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;

/** One value or a comma list (`status=failed,rejected`), each checked against the enum. */
const enumList = <T extends readonly [string, ...string[]]>(values: T, upper = false) =>
  z
    .string()
    .max(500)
    .transform((s) =>
      s
        .split(",")
        .map((v) => (upper ? v.trim().toUpperCase() : v.trim()))
        .filter((v) => v !== ""),
    )
    .pipe(z.array(z.enum(values)).min(1, "must name at least one value"));

export const listEventsQuery = pageQuery.extend({
  source_id: z.string().max(200).optional(),
  org_id: z.string().max(64).optional(),
  env_id: z.string().max(64).optional(),
  status: enumList(EVENT_STATUSES).optional(),
  verification_status: enumList(VERIFICATION_STATUSES).optional(),
  dedup_status: enumList(DEDUP_STATUSES).optional(),
  method: enumList(INGEST_METHODS, true).optional(),
  /** An event id prefix (with or without evt_) or text found in the body. */
  search: z.string().min(1).max(500).optional(),
  /** received_at >= after. */
  after: isoDate.optional(),
  /** received_at < before. */
  before: isoDate.optional(),
});
export type ListEventsQuery = z.infer<typeof listEventsQuery>;

export const eventListItem = z.object({
  id: z.string(),
  source_id: z.string(),
  org_id: z.string(),
  env_id: z.string(),
  method: z.string(),
  content_type: z.string().nullable(),
  source_ip: z.string().nullable(),
  payload_size: z.number().int(),
  verification_status: z.string(),
  dedup_status: z.string(),
  status: z.string(),
  event_type: z.string().nullable(),
  received_at: z.string(),
  source_name: z.string().nullable(),
  source_slug: z.string().nullable(),
});
export type EventListItem = z.infer<typeof eventListItem>;

export const eventAttemptSummary = z.object({
  id: z.string(),
  connection_id: z.string().nullable(),
  destination_id: z.string(),
  status: z.string(),
  status_code: z.number().int().nullable(),
  latency_ms: z.number().int().nullable(),
  attempt_number: z.number().int().nullable(),
  trigger_type: z.string().nullable(),
  error: z.string().nullable(),
  is_dlq: z.number().int(),
  /** 1 when an operator forced it through for a rejected event. */
  forced: z.number().int(),
  /** The attempt's sent_at: when it was sent; null while it is queued (see scheduled_at). */
  attempted_at: z.string().nullable(),
  /** When the attempt is (or was) due. */
  scheduled_at: z.string(),
});

export const eventDetail = eventListItem.extend({
  path: z.string().nullable(),
  query: z.string().nullable(),
  /** Request headers as received, names lower-cased. */
  headers: z.record(z.string(), z.string()),
  /** The body exactly as received: UTF-8 text, or base64 when it is not valid UTF-8. */
  body: z.string(),
  body_encoding: z.enum(["utf8", "base64"]),
  verification_error: z.string().nullable(),
  dedup_key: z.string().nullable(),
  duplicate_of: z.string().nullable(),
  /** Violations of the source's JSON Schema (schema_action warn or reject), or null. */
  schema_errors: z.array(z.object({ path: z.string(), message: z.string() })).nullable(),
  routed_at: z.string().nullable(),
  delivery_attempts: z.array(eventAttemptSummary),
});
export type EventDetail = z.infer<typeof eventDetail>;

export const eventList = z.object({
  events: z.array(eventListItem),
  pagination: z.object({
    total: z.number().int(),
    limit: z.number().int(),
    offset: z.number().int(),
    has_more: z.boolean(),
    next_cursor: z.string().nullable(),
    prev_cursor: z.string().nullable(),
  }),
});

export const eventStreamQuery = z.object({ source_id: z.string().max(200).optional() });
