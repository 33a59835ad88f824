import { z } from "zod";
import { eventTypeName, jsonSchemaInput } from "./eventTypes";
import { placeFields } from "./common";

/** Topics (spec: Topic; docs/decisions.md D11): named channels an application publishes events to. */

export const TOPIC_STATUSES = ["active", "paused"] as const;
export type TopicStatus = (typeof TOPIC_STATUSES)[number];

const fields = {
  // A topic is named like an organization or environment: the slug is the one it is published to.
  ...placeFields,
  description: z.string().max(5000).nullable(),
  /** A JSON Schema (object); published payloads must satisfy it. */
  schema: jsonSchemaInput.nullable(),
  status: z.enum(TOPIC_STATUSES),
};

export const createTopicInput = z.object({
  ...z.object(fields).partial().shape,
  name: fields.name,
  org_id: z.string().max(64).optional(),
  env_id: z.string().max(64).optional(),
});
export type CreateTopicInput = z.input<typeof createTopicInput>;

export const updateTopicInput = z.object(fields).partial();
export type UpdateTopicInput = z.input<typeof updateTopicInput>;

export const listTopicsQuery = z.object({
  org_id: z.string().max(64).optional(),
  env_id: z.string().max(64).optional(),
  status: z.enum(TOPIC_STATUSES).optional(),
});
export type ListTopicsQuery = z.infer<typeof listTopicsQuery>;

export const topic = z.object({
  id: z.string(),
  org_id: z.string(),
  env_id: z.string(),
  name: z.string(),
  slug: z.string(),
  description: z.string().nullable(),
  schema: z.string().nullable().describe("JSON Schema, encoded as a string"),
  status: z.string(),
  /** The topic's own source (type `topic`): published events are stored on it and flow through its connections. */
  source_id: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type TopicDto = z.infer<typeof topic>;

export const topicBody = z.object({ topic });
export const topicList = z.object({ topics: z.array(topic) });

/** `{id}` in topic paths: the id, or the topic's slug. */
export const topicParam = z.object({ id: z.string().describe("Topic id (32 hex) or slug") });

export const publishInput = z
  .object({
    event_type: eventTypeName.nullable().optional(),
    /** Any JSON value; stored as the event's body. */
    payload: z.unknown(),
  })
  .superRefine((v, ctx) => {
    if (v.payload === undefined) ctx.addIssue({ code: "custom", path: ["payload"], message: "is required (any JSON value)" });
  });
export type PublishInput = z.input<typeof publishInput>;

export const publishResult = z.object({ success: z.literal(true), event_id: z.string() });
