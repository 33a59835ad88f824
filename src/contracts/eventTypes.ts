import { z } from "zod";

/** Event types (spec: Event type; docs/decisions.md D11): a catalogue of names, each with an optional JSON Schema. */

/** `deprecated` types still validate and accept messages; they are shown as such where types are offered. */
export const EVENT_TYPE_STATUSES = ["active", "deprecated"] as const;
export type EventTypeStatus = (typeof EVENT_TYPE_STATUSES)[number];

/** A JSON Schema as an object, or the JSON-encoded string the API returns for it. The domain parses and checks it. */
export const jsonSchemaInput = z.union([z.record(z.string(), z.unknown()), z.string().max(256 * 1024)]);

/** `order.created`, `customer.subscription.updated`, `push`, `issues/opened`, `billing:invoice_paid`. */
export const eventTypeName = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.:/-]*$/, "letters, digits and . _ : / - (starting with a letter or digit)");

const fields = {
  name: eventTypeName,
  description: z.string().max(5000).nullable(),
  json_schema: jsonSchemaInput.nullable(),
  status: z.enum(EVENT_TYPE_STATUSES),
};

export const createEventTypeInput = z.object({
  ...z.object(fields).partial().shape,
  name: fields.name,
  org_id: z.string().max(64).optional(),
  env_id: z.string().max(64).optional(),
});
export type CreateEventTypeInput = z.input<typeof createEventTypeInput>;

export const updateEventTypeInput = z.object(fields).partial();
export type UpdateEventTypeInput = z.input<typeof updateEventTypeInput>;

export const listEventTypesQuery = z.object({
  org_id: z.string().max(64).optional(),
  env_id: z.string().max(64).optional(),
  status: z.enum(EVENT_TYPE_STATUSES).optional(),
});
export type ListEventTypesQuery = z.infer<typeof listEventTypesQuery>;

export const eventType = z.object({
  id: z.string(),
  org_id: z.string(),
  env_id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  json_schema: z.string().nullable().describe("JSON Schema, encoded as a string"),
  status: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type EventTypeDto = z.infer<typeof eventType>;

export const eventTypeBody = z.object({ event_type: eventType });
export const eventTypeList = z.object({ event_types: z.array(eventType) });

/** `{id}` in event type paths: the id, or the event type's name. */
export const eventTypeParam = z.object({ id: z.string().describe("Event type id (32 hex) or name") });
