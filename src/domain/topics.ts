import { and, desc, eq, or } from "drizzle-orm";
import { sources, topics } from "../db/schema";
import { writeEvent, type EventWrite } from "../db/ingestStore";
import { transaction } from "../db/transaction";
import { AppError, notFound, parseOrThrow } from "../contracts/errors";
import { hex32, newId } from "../contracts/ids";
import type { CreateTopicInput, ListTopicsQuery, PublishInput, TopicDto, UpdateTopicInput } from "../contracts/topics";
import { createTopicInput, publishInput, updateTopicInput } from "../contracts/topics";
import { iso } from "../core/clock";
import { recordAudit } from "./audit";
import type { Deps, Scope } from "./deps";
import { payloadErrors, schemaText, validatePayloadForEventType } from "./eventTypes";
import { isUniqueViolation } from "../db/errors";
import { createScope, inScope } from "./scope";
import { freeSourceSlug, slugify } from "./slugs";

type TopicRow = typeof topics.$inferSelect;

/** The source a topic publishes onto: listed among the sources with this type. */
export const TOPIC_SOURCE_TYPE = "topic";

export function serializeTopic(row: TopicRow): TopicDto {
  return {
    id: row.id,
    org_id: row.orgId,
    env_id: row.envId,
    name: row.name,
    slug: row.slug,
    description: row.description,
    schema: row.schema,
    status: row.status,
    source_id: row.sourceId,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}


/** `{id}` is the id or the slug. */
async function findRow({ db }: Deps, scope: Scope, idOrSlug: string): Promise<TopicRow> {
  const id = /^[0-9a-f]{32}$/.test(idOrSlug) ? idOrSlug : null;
  const rows = await db
    .select()
    .from(topics)
    .where(inScope(topics, scope, id ? or(eq(topics.id, id), eq(topics.slug, idOrSlug)) : eq(topics.slug, idOrSlug.toLowerCase())))
    .limit(2);
  const row = rows.find((r) => r.id === idOrSlug) ?? rows[0];
  if (!row) throw notFound("Topic");
  return row;
}

function slugConflict(slug: string) {
  return new AppError("conflict", `A topic with slug "${slug}" already exists`, [{ field: "body.slug", message: "must be unique in the environment (it defaults to the name)" }]);
}

const sourceDescription = (name: string) => `Events published to topic "${name}"`;

/** Creates the topic and its source (type `topic`) in one transaction. */
export async function createTopic(deps: Deps, scope: Scope, raw: CreateTopicInput) {
  const input = parseOrThrow(createTopicInput, raw, "Invalid topic");
  const { orgId, envId } = createScope(scope, input);
  const schema = schemaText("schema", input.schema);
  const slug = input.slug ?? slugify(input.name, "topic");
  // The topic's source slug: `topic-<slug>`, numbered when a source already has it.
  const sourceSlug = await freeSourceSlug(deps.db, orgId, envId, `topic-${slug}`.slice(0, 100));
  const now = iso(deps.clock.now());
  const row: TopicRow = {
    id: hex32(),
    orgId,
    envId,
    sourceId: newId("source"),
    name: input.name,
    slug,
    description: input.description ?? null,
    schema,
    status: input.status ?? "active",
    createdAt: now,
    updatedAt: now,
  };
  try {
    await transaction(deps.db, async (tx) => {
      await tx
        .insert(sources)
        .values({ id: row.sourceId, orgId, envId, slug: sourceSlug, name: row.name, description: sourceDescription(row.name), type: TOPIC_SOURCE_TYPE, createdAt: now, updatedAt: now });
      await tx.insert(topics).values(row);
      await recordAudit(deps, scope, { action: "create", resourceType: "topic", resourceId: row.id, after: serializeTopic(row), envId: row.envId });
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw slugConflict(slug);
    throw err;
  }
  return { topic: serializeTopic(row) };
}

/** The caller's topics, newest first. */
export async function listTopics(deps: Deps, scope: Scope, query: ListTopicsQuery = {}) {
  if ((query.org_id && query.org_id !== scope.orgId) || (query.env_id && query.env_id !== scope.envId)) return { topics: [] };
  const rows = await deps.db
    .select()
    .from(topics)
    .where(inScope(topics, scope, query.status ? eq(topics.status, query.status) : undefined))
    .orderBy(desc(topics.createdAt), desc(topics.id));
  return { topics: rows.map(serializeTopic) };
}

export async function getTopic(deps: Deps, scope: Scope, idOrSlug: string) {
  return { topic: serializeTopic(await findRow(deps, scope, idOrSlug)) };
}

/** A renamed topic renames its source too, so the sources list keeps telling which topic it belongs to. */
export async function updateTopic(deps: Deps, scope: Scope, idOrSlug: string, raw: UpdateTopicInput) {
  const input = parseOrThrow(updateTopicInput, raw, "Invalid topic");
  return transaction(deps.db, () => updateTopicIn(deps, scope, idOrSlug, input));
}

async function updateTopicIn(deps: Deps, scope: Scope, idOrSlug: string, input: UpdateTopicInput) {
  const current = await findRow(deps, scope, idOrSlug);
  const patch: Partial<TopicRow> = {};
  if (input.name !== undefined) patch.name = input.name;
  if (input.slug !== undefined) patch.slug = input.slug;
  if (input.description !== undefined) patch.description = input.description;
  if (input.schema !== undefined) patch.schema = schemaText("schema", input.schema);
  if (input.status !== undefined) patch.status = input.status;
  const now = iso(deps.clock.now());
  patch.updatedAt = now;
  const updated = { ...current, ...patch };
  try {
    await transaction(deps.db, async (tx) => {
      await tx.update(topics).set(patch).where(eq(topics.id, current.id));
      if (patch.name !== undefined) await tx.update(sources).set({ name: updated.name, description: sourceDescription(updated.name), updatedAt: now }).where(eq(sources.id, current.sourceId));
      await recordAudit(deps, scope, { action: "update", resourceType: "topic", resourceId: current.id, before: serializeTopic(current), after: serializeTopic(updated) });
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw slugConflict(updated.slug);
    throw err;
  }
  return { topic: serializeTopic(updated) };
}

/** Deletes the topic with its source, and so with the source's events, connections and collections. */
export async function deleteTopic(deps: Deps, scope: Scope, idOrSlug: string) {
  const row = await transaction(deps.db, async () => {
    const row = await findRow(deps, scope, idOrSlug);
    // The topic row goes with its source (the foreign key cascades).
    await deps.db.delete(sources).where(and(eq(sources.id, row.sourceId), inScope(sources, scope)));
    await recordAudit(deps, scope, { action: "delete", resourceType: "topic", resourceId: row.id, before: serializeTopic(row) });
    return row;
  });
  deps.bus.publish({ type: "source.updated", sourceId: row.sourceId });
  return { success: true as const };
}

/**
 * Stores `payload` as an event on the topic's source, through the store
 * ingest uses: it is routed through the source's connections in the same
 * commit and delivered like any received event, and collections on the
 * source see it. The payload must satisfy the topic's schema and, when an
 * event type of that name has one, the event type's schema (422
 * `schema_violation`); a paused topic refuses publishes (409 `conflict`).
 */
export async function publishToTopic(deps: Deps, scope: Scope, idOrSlug: string, raw: PublishInput) {
  const input = parseOrThrow(publishInput, raw, "Invalid publish request");
  const topic = await findRow(deps, scope, idOrSlug);
  if (topic.status === "paused") throw new AppError("conflict", `Topic "${topic.slug}" is paused; set its status to active to publish`);
  if (topic.schema) {
    const errors = payloadErrors(topic.schema, input.payload);
    if (errors) throw new AppError("schema_violation", `Payload does not match the JSON Schema of topic "${topic.slug}"`, { topic: topic.slug, errors });
  }
  const eventType = input.event_type ?? null;
  if (eventType) await validatePayloadForEventType(deps, scope, eventType, input.payload);

  const headers: Record<string, string> = { "content-type": "application/json", "x-topic": topic.slug };
  if (eventType) headers["x-event-type"] = eventType;
  const body = new TextEncoder().encode(JSON.stringify(input.payload));
  const write: EventWrite = {
    sourceId: topic.sourceId,
    orgId: topic.orgId,
    envId: topic.envId,
    method: "POST",
    path: `/v1/topics/${topic.id}/publish`,
    query: null,
    contentType: "application/json",
    sourceIp: null,
    headers: JSON.stringify(headers),
    body,
    verificationStatus: "skipped",
    verificationError: null,
    dedupStatus: "skipped",
    dedupKey: null,
    dedupWindowSeconds: 3600,
    status: "pending",
    schemaErrors: null,
    eventType,
  };
  const result = await writeEvent(deps.db, () => deps.clock.now(), write);
  if (result.kind === "source_gone") throw notFound("Topic");
  if (result.kind === "limit_reached") throw new AppError("conflict", "The topic's source has reached its request limit");
  deps.bus.publish({ type: "event.created", orgId: topic.orgId, envId: topic.envId, eventId: result.id, sourceId: topic.sourceId });
  return { success: true as const, event_id: result.id };
}
