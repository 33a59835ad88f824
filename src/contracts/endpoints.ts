import { z } from "zod";
import { ON_DLQ } from "./connections";
import { fromJsonText, isoDate } from "./common";
import { destinationUrl, SIGNING_ALGORITHMS, signingAlgorithm, signingSecret } from "./destinations";
import { eventTypeName } from "./eventTypes";
import { retryScheduleInput, retryScheduleOutput } from "./retrySchedule";

/** Application endpoints (spec: Application endpoint; docs/decisions.md D10): where an application's messages are sent. */

/** `disabled`: nothing is sent to it (set by hand, or after HOOKRELAY_ENDPOINT_DISABLE_AFTER without a success). */
export const ENDPOINT_STATUSES = ["active", "disabled"] as const;
export type EndpointStatus = (typeof ENDPOINT_STATUSES)[number];

/** How long a rotated-out secret keeps signing beside the new one. */
export const SECRET_ROTATION_OVERLAP_MS = 24 * 3600 * 1000;

/** An array of event type names, or its JSON text (what GET returns); null or [] means every type. */
export const filterTypesInput = z.preprocess(
  fromJsonText,
  z.array(eventTypeName).max(500).nullable(),
);

const fields = {
  url: destinationUrl,
  description: z.string().max(5000).nullable(),
  filter_types: filterTypesInput,
  rate_limit_per_second: z.int().min(1).max(100_000).nullable(),
  /** Replaces the default exponential retries (docs/delivery.md, "Retry schedules"). */
  retry_schedule: retryScheduleInput,
  signing_algorithm: signingAlgorithm,
  /** `whsec_` (hmac-sha256) or `whsk_` (ed25519) key; generated when absent. Never returned except by GET …/secret. */
  secret: signingSecret,
  /** After this the endpoint receives nothing. */
  expires_at: isoDate.nullable(),
  status: z.enum(ENDPOINT_STATUSES),
  /** Messages are delivered one at a time per message ordering_key, in the order sent. */
  ordered: z.boolean(),
  on_dlq: z.enum(ON_DLQ),
};

export const createEndpointInput = z.object({
  ...z.object(fields).partial().shape,
  url: fields.url,
});
export type CreateEndpointInput = z.input<typeof createEndpointInput>;

/** PATCH: any subset. The secret is changed by rotation (POST …/secret/rotate), not here. */
export const updateEndpointInput = z.object(fields).omit({ secret: true }).partial();
export type UpdateEndpointInput = z.input<typeof updateEndpointInput>;

export const rotateSecretInput = z.object({ secret: signingSecret.optional() });
export type RotateSecretInput = z.input<typeof rotateSecretInput>;

export const endpoint = z.object({
  id: z.string(),
  org_id: z.string(),
  env_id: z.string(),
  application_id: z.string(),
  url: z.string(),
  description: z.string().nullable(),
  signing_algorithm: z.enum(SIGNING_ALGORITHMS),
  status: z.string(),
  filter_types: z.string().nullable().describe("JSON array of event type names, encoded as a string; null: every type"),
  rate_limit_per_second: z.number().int().nullable(),
  retry_schedule: retryScheduleOutput,
  expires_at: z.string().nullable(),
  ordered: z.boolean().describe("Messages are delivered one at a time per message ordering_key, in the order sent (docs/delivery.md, Ordered delivery)"),
  on_dlq: z.enum(ON_DLQ).describe("continue: a key whose head reached the DLQ moves on; block: it waits for a redrive or a skip"),
  portal_held: z.number().int().describe("1: its URL was set through a portal link, so it is held to the private-address block unless the application allows private endpoints"),
  created_at: z.string(),
  updated_at: z.string(),
});
export type EndpointDto = z.infer<typeof endpoint>;

export const endpointBody = z.object({ endpoint });
export const endpointList = z.object({ endpoints: z.array(endpoint) });
export const endpointSecret = z.object({ secret: z.string() });

export const endpointParams = z.object({
  appId: z.string().describe("Application id (32 hex) or uid"),
  id: z.string().describe("Endpoint id (32 hex)"),
});
