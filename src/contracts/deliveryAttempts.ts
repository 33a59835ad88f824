import { z } from "zod";
import { pageQuery } from "./pagination";

/** Delivery attempts (spec: Delivery attempt; docs/decisions.md D6). */

/** `held`: an ordered delivery waiting behind its key's head (docs/delivery.md, "Ordered delivery"). */
export const ATTEMPT_STATUSES = ["queued", "delivering", "success", "failed", "held"] as const;
export const TRIGGER_TYPES = ["initial", "retry", "manual", "bulk_retry", "replay", "redrive", "recover"] as const;
export type TriggerType = (typeof TRIGGER_TYPES)[number];

const flagQuery = z.enum(["0", "1", "true", "false"]).transform((v) => (v === "1" || v === "true" ? 1 : 0));

export const listAttemptsQuery = pageQuery.extend({
  event_id: z.string().max(100).optional(),
  connection_id: z.string().max(100).optional(),
  destination_id: z.string().max(100).optional(),
  status: z.enum(ATTEMPT_STATUSES).optional(),
  /** `1`: only attempts in the DLQ; `0`: only those not in it. */
  is_dlq: flagQuery.optional(),
  trigger_type: z.enum(TRIGGER_TYPES).optional(),
});
export type ListAttemptsQuery = z.infer<typeof listAttemptsQuery>;

export const deliveryAttempt = z.object({
  id: z.string(),
  org_id: z.string(),
  env_id: z.string(),
  event_id: z.string(),
  connection_id: z.string().nullable(),
  destination_id: z.string(),
  request_url: z.string(),
  request_method: z.string(),
  request_headers: z.string().nullable().describe("JSON object of the headers sent, secrets redacted, encoded as a string"),
  request_body_size: z.number().int(),
  response_status: z.number().int().nullable(),
  response_headers: z.string().nullable(),
  response_body: z.string().nullable().describe("At most the first 16 KiB of the response body"),
  duration_ms: z.number().int().nullable(),
  status: z.string(),
  error: z.string().nullable().describe("Failure class: http_<status>, timeout, connection_error, transform_error, ssrf_blocked, destination_disabled, destination_not_found"),
  error_detail: z.string().nullable().describe("What went wrong, for people"),
  created_at: z.string().describe("When the row was created: queued (a retry: when the failure before it was recorded)"),
  scheduled_at: z.string().describe("When the attempt is (or was) due"),
  sent_at: z
    .string()
    .nullable()
    .describe("When the request was sent (for an attempt that ended before sending, e.g. transform_error, when it was attempted); null while queued"),
  attempt_number: z.number().int().nullable(),
  next_retry_at: z.string().nullable(),
  is_dlq: z.number().int().nullable(),
  dlq_at: z.string().nullable(),
  trigger_type: z.string().nullable(),
  forced: z.number().int().describe("1: an operator forced the delivery of a rejected event (POST /events/{id}/retry with force: true), trigger_type stays manual (or retry for its retries)"),
  connection_name: z.string().nullable(),
  destination_name: z.string().nullable(),
});
export type DeliveryAttempt = z.infer<typeof deliveryAttempt>;

const pagination = z.object({
  total: z.number().int(),
  limit: z.number().int(),
  offset: z.number().int(),
  has_more: z.boolean(),
  next_cursor: z.string().nullable(),
  prev_cursor: z.string().nullable(),
});

export const attemptList = z.object({ delivery_attempts: z.array(deliveryAttempt), pagination });

export const redriveInput = z
  .object({
    destination_id: z.string().min(1).max(100).optional(),
    connection_id: z.string().min(1).max(100).optional(),
  })
  .refine((v) => v.destination_id !== undefined || v.connection_id !== undefined, { message: "give destination_id, connection_id or both", path: ["destination_id"] });
export type RedriveInput = z.infer<typeof redriveInput>;

/** What starting a bulk retry or a redrive answers (202). */
export const jobStarted = z.object({
  job_id: z.string(),
  total: z.number().int().describe("Items the job will retry"),
  skipped: z.number().int().describe("Items matching the filter left alone: rejected events are never retried or redriven"),
});
