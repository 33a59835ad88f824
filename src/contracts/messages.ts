import { z } from "zod";
import { deliveryAttempt } from "./deliveryAttempts";
import { eventTypeName } from "./eventTypes";
import { queryLimit } from "./applications";

/** Messages (spec: Message; docs/decisions.md D10): what an application's endpoints are sent. */

/**
 * - `pending`: deliveries outstanding (a resend makes a settled message pending again);
 * - `delivered`: every endpoint it was sent to answered 2xx;
 * - `failed`: at least one delivery ended in the DLQ;
 * - `ignored`: no endpoint admitted it (none active, unexpired and subscribed to its event type).
 */
export const MESSAGE_STATUSES = ["pending", "delivered", "failed", "ignored"] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

/** An idempotency key: printable, no whitespace. */
export const idempotencyKey = z
  .string()
  .min(1)
  .max(256)
  .regex(/^[\x21-\x7e]+$/, "printable ASCII without spaces");

export const createMessageInput = z.object({
  event_type: eventTypeName,
  /** Any JSON value; sent as the request body (JSON). */
  payload: z.unknown().refine((v) => v !== undefined, "is required"),
  /** Idempotency key per application: the same id returns the same message and sends nothing again. */
  id: idempotencyKey.optional(),
  /** Ordered endpoints deliver messages with the same key one at a time, in the order sent (docs/delivery.md, "Ordered delivery"). */
  ordering_key: z.string().min(1).max(256).regex(/^[^\u0000]*$/, "must not contain NUL").nullable().optional(),
});
export type CreateMessageInput = z.input<typeof createMessageInput>;

export const listMessagesQuery = z.object({
  cursor: z.string().max(2000).optional(),
  limit: queryLimit(100),
  event_type: z.string().max(200).optional(),
});
export type ListMessagesQuery = z.input<typeof listMessagesQuery>;

export const listMessageAttemptsQuery = z.object({
  /** Only the attempts to this endpoint. */
  endpoint_id: z.string().max(100).optional(),
  limit: queryLimit(1000, 100),
});
export type ListMessageAttemptsQuery = z.input<typeof listMessageAttemptsQuery>;

export const listEndpointAttemptsQuery = z.object({
  cursor: z.string().max(2000).optional(),
  limit: queryLimit(100),
  status: z.enum(["queued", "delivering", "success", "failed", "held"]).optional(),
});
export type ListEndpointAttemptsQuery = z.input<typeof listEndpointAttemptsQuery>;

export const resendInput = z.object({ endpoint_id: z.string().min(1).max(100) });
export type ResendInput = z.input<typeof resendInput>;

export const message = z.object({
  id: z.string(),
  org_id: z.string(),
  env_id: z.string(),
  application_id: z.string(),
  event_type: z.string(),
  payload: z.string().describe("The payload as the JSON text sent"),
  status: z.string(),
  ordering_key: z.string().nullable().describe("The key ordered endpoints keep this message in line with; null: the null-key line"),
  created_at: z.string(),
  updated_at: z.string().describe("When the message was created, resent, or its status last changed"),
});
export type MessageDto = z.infer<typeof message>;

export const messageBody = z.object({ message });
export const messageList = z.object({
  messages: z.array(message.nullable()),
  cursor: z.string().nullable().describe("Pass back as `cursor` for the next (older) page; null on the last page"),
});
export const messageAttempts = z.object({ attempts: z.array(deliveryAttempt) });
export const endpointAttempts = z.object({
  attempts: z.array(deliveryAttempt),
  cursor: z.string().nullable().describe("Pass back as `cursor` for the next (older) page; null on the last page"),
});
export const resendResult = z.object({ attempt: deliveryAttempt });

export const messageParams = z.object({
  appId: z.string().describe("Application id (32 hex) or uid"),
  id: z.string().describe("Message id (32 hex), or the idempotency key it was created with"),
});
