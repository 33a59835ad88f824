import { and, asc, count, desc, eq, gt, gte, ne, or, type SQL } from "drizzle-orm";
import { collectionRecords, collections, events, recordChangelog, sources } from "../db/schema";
import { transaction } from "../db/transaction";
import type { CollectionDto, CreateCollectionInput, ListCollectionsQuery, UpdateCollectionInput } from "../contracts/collections";
import { createCollectionInput, updateCollectionInput } from "../contracts/collections";
import { notFound, parseOrThrow } from "../contracts/errors";
import { hex32, normalizeId, normalizeIdOrNull } from "../contracts/ids";
import { iso } from "../core/clock";
import { recordAudit } from "./audit";
import type { Deps, Scope } from "./deps";

import { createScope, inScope } from "./scope";
import { findSourceRef } from "./sourceRef";
import { checkTransformInput } from "./transformInput";

export type CollectionRow = typeof collections.$inferSelect;

// ---------------------------------------------------------------- which events build a collection

/**
 * The events a collection reads (the builder's statements say the same in
 * catalog/statements.ts): its source's, except those refused at
 * ingest (a failed signature or schema: `rejected`) and duplicates, which
 * repeat an event already read. Both are final when the event is stored.
 */
export function buildableEvents(sourceId: string): SQL {
  return and(eq(events.sourceId, sourceId), ne(events.status, "rejected"), ne(events.dedupStatus, "duplicate"))!;
}

/**
 * Events after a position in received order: (received_at, id), the order
 * of the events_source_received index; the plain `>=` lets it seek there.
 */
export function afterPosition(at: string | null, id: string | null): SQL | undefined {
  if (at === null || id === null) return undefined;
  return and(gte(events.receivedAt, at), or(gt(events.receivedAt, at), gt(events.id, id)));
}

/** The builder's wake-up call: a collection was created, changed or deleted. */
export function announceCollection(deps: Pick<Deps, "bus">, collectionId: string) {
  deps.bus.publish({ type: "collection.updated", collectionId });
}

// ---------------------------------------------------------------- serializing

const jsonList = (list: string[] | null | undefined) => (list === null || list === undefined || list.length === 0 ? null : JSON.stringify([...new Set(list)]));

/** What the audit trail records of a collection: its settings, not the builder's progress. */
function auditedCollection(row: CollectionRow, sourceName: string | null) {
  const { id, name, description, source_id, source_name, event_types, event_type_path, key_path, transform_expression, delete_event_types, created_at, updated_at } = serializeCollection(row, { sourceName, eventsPending: 0 });
  return { id, name, description, source_id, source_name, event_types, event_type_path, key_path, transform_expression, delete_event_types, created_at, updated_at };
}

export function serializeCollection(row: CollectionRow, extra: { sourceName: string | null; eventsPending: number }): CollectionDto {
  return {
    id: row.id,
    org_id: row.orgId,
    env_id: row.envId,
    name: row.name,
    description: row.description,
    source_id: row.sourceId,
    source_name: extra.sourceName,
    event_types: row.eventTypes,
    event_type_path: row.eventTypePath,
    key_path: row.keyPath,
    transform_expression: row.transformExpression,
    delete_event_types: row.deleteEventTypes,
    record_count: row.recordCount,
    build_status: row.backfillCompletedAt ? "live" : "backfilling",
    position_event_id: row.positionEventId,
    position_at: row.positionAt,
    events_pending: extra.eventsPending,
    events_processed: row.eventsProcessed,
    events_ignored: row.eventsIgnored,
    events_missing_key: row.eventsMissingKey,
    events_transform_failed: row.eventsTransformFailed,
    last_error: row.lastError,
    last_error_event_id: row.lastErrorEventId,
    last_error_at: row.lastErrorAt,
    backfill_total: row.backfillTotal,
    backfill_processed: Math.min(row.backfillProcessed, row.backfillTotal),
    backfill_completed_at: row.backfillCompletedAt,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

async function withProgress(deps: Deps, rows: { collection: CollectionRow; sourceName: string | null }[]) {
  return Promise.all(
    rows.map(async ({ collection, sourceName }) => {
      const [pending] = await deps.db
        .select({ n: count() })
        .from(events)
        .where(and(buildableEvents(collection.sourceId), afterPosition(collection.positionAt, collection.positionEventId)));
      return serializeCollection(collection, { sourceName, eventsPending: pending?.n ?? 0 });
    }),
  );
}

// ---------------------------------------------------------------- lookups

function joined({ db }: Deps, where: SQL | undefined) {
  return db
    .select({ collection: collections, sourceName: sources.name })
    .from(collections)
    .leftJoin(sources, eq(sources.id, collections.sourceId))
    .where(where)
    .orderBy(desc(collections.createdAt), desc(collections.id));
}

export async function findCollection(deps: Deps, scope: Scope, rawId: string) {
  const id = normalizeId(rawId, undefined, "Collection");
  const [row] = await joined(deps, inScope(collections, scope, eq(collections.id, id))).limit(1);
  if (!row) throw notFound("Collection");
  return row;
}

/** What the builder has to catch up on when it starts over: the stored events so far, up to the newest. */
async function backlog({ db }: Deps, sourceId: string) {
  const [total] = await db.select({ n: count() }).from(events).where(buildableEvents(sourceId));
  const [last] = await db
    .select({ at: events.receivedAt, id: events.id })
    .from(events)
    .where(buildableEvents(sourceId))
    .orderBy(desc(events.receivedAt), desc(events.id))
    .limit(1);
  return { total: total?.n ?? 0, last: last ?? null };
}

/** The builder's state for a fresh start: position at the beginning, counters at zero, a new backlog. */
function freshBuild(plan: Awaited<ReturnType<typeof backlog>>, now: string) {
  return {
    recordCount: 0,
    positionAt: null,
    positionEventId: null,
    eventsProcessed: 0,
    eventsIgnored: 0,
    eventsMissingKey: 0,
    eventsTransformFailed: 0,
    lastError: null,
    lastErrorEventId: null,
    lastErrorAt: null,
    backfillTotal: plan.total,
    backfillProcessed: 0,
    backfillUntilAt: plan.last?.at ?? null,
    backfillUntilId: plan.last?.id ?? null,
    // Nothing stored yet: the collection is live from the start.
    backfillCompletedAt: plan.last ? null : now,
  } satisfies Partial<CollectionRow>;
}

// ---------------------------------------------------------------- use-cases

export async function createCollection(deps: Deps, scope: Scope, raw: CreateCollectionInput) {
  const input = parseOrThrow(createCollectionInput, raw, "Invalid collection");
  const { orgId, envId } = createScope(scope, input);
  const source = await findSourceRef(deps, scope, input.source_id);
  const transform = input.transform_expression === undefined || input.transform_expression === null || input.transform_expression.trim() === "" ? null : input.transform_expression;
  checkTransformInput(transform);
  const now = iso(deps.clock.now());
  const row: CollectionRow = {
    id: hex32(),
    orgId,
    envId,
    sourceId: source.id,
    name: input.name ?? `${source.name} by ${input.key_path}`,
    description: input.description ?? null,
    eventTypes: jsonList(input.event_types),
    eventTypePath: input.event_type_path ?? "type",
    keyPath: input.key_path,
    transformExpression: transform,
    deleteEventTypes: jsonList(input.delete_event_types),
    generation: 0,
    ...freshBuild(await backlog(deps, source.id), now),
    createdAt: now,
    updatedAt: now,
  };
  await transaction(deps.db, async () => {
    await deps.db.insert(collections).values(row);
    await recordAudit(deps, scope, { action: "create", resourceType: "collection", resourceId: row.id, after: auditedCollection(row, source.name), envId: row.envId });
  });
  announceCollection(deps, row.id);
  const [collection] = await withProgress(deps, [{ collection: row, sourceName: source.name }]);
  return { collection: collection! };
}

/** The caller's collections, newest first, each with its builder's progress. */
export async function listCollections(deps: Deps, scope: Scope, query: ListCollectionsQuery = {}) {
  if ((query.org_id && query.org_id !== scope.orgId) || (query.env_id && query.env_id !== scope.envId)) return { collections: [] };
  let bySource: SQL | undefined;
  if (query.source_id !== undefined) {
    const id = normalizeIdOrNull(query.source_id, "source");
    if (id === null) return { collections: [] };
    bySource = eq(collections.sourceId, id);
  }
  return { collections: await withProgress(deps, await joined(deps, inScope(collections, scope, bySource))) };
}

export async function getCollection(deps: Deps, scope: Scope, rawId: string) {
  const [collection] = await withProgress(deps, [await findCollection(deps, scope, rawId)]);
  return { collection: collection! };
}

/**
 * Name and description change in place. A change to how records are built
 * (source, key path, types, transform) rebuilds the collection: its records
 * and changelog are cleared and the builder starts over from the oldest
 * stored event, as for a new collection.
 */
export async function updateCollection(deps: Deps, scope: Scope, rawId: string, raw: UpdateCollectionInput) {
  return transaction(deps.db, () => updateCollectionIn(deps, scope, rawId, raw));
}

async function updateCollectionIn(deps: Deps, scope: Scope, rawId: string, raw: UpdateCollectionInput) {
  const input = parseOrThrow(updateCollectionInput, raw, "Invalid collection");
  const current = await findCollection(deps, scope, rawId);
  const row = { ...current.collection };
  let sourceName = current.sourceName;
  if (input.name !== undefined) row.name = input.name;
  if (input.description !== undefined) row.description = input.description;
  if (input.source_id !== undefined) {
    const source = await findSourceRef(deps, scope, input.source_id);
    row.sourceId = source.id;
    sourceName = source.name;
  }
  if (input.event_types !== undefined) row.eventTypes = jsonList(input.event_types);
  if (input.event_type_path !== undefined) row.eventTypePath = input.event_type_path;
  if (input.key_path !== undefined) row.keyPath = input.key_path;
  if (input.delete_event_types !== undefined) row.deleteEventTypes = jsonList(input.delete_event_types);
  if (input.transform_expression !== undefined) {
    row.transformExpression = input.transform_expression === null || input.transform_expression.trim() === "" ? null : input.transform_expression;
    checkTransformInput(row.transformExpression);
  }
  const before = current.collection;
  const rebuild = (["sourceId", "eventTypes", "eventTypePath", "keyPath", "deleteEventTypes", "transformExpression"] as const).some((k) => row[k] !== before[k]);
  const now = iso(deps.clock.now());
  row.updatedAt = now;
  if (rebuild) {
    Object.assign(row, freshBuild(await backlog(deps, row.sourceId), now), { generation: before.generation + 1 });
  }
  const { id, orgId, envId, createdAt, ...changes } = row;
  await transaction(deps.db, async (tx) => {
    if (rebuild) {
      await tx.delete(collectionRecords).where(eq(collectionRecords.collectionId, id));
      await tx.delete(recordChangelog).where(eq(recordChangelog.collectionId, id));
      await tx.update(collections).set(changes).where(eq(collections.id, id));
    } else {
      // Only what this request changed: the builder may be moving its own columns meanwhile.
      await tx.update(collections).set({ name: row.name, description: row.description, updatedAt: now }).where(eq(collections.id, id));
    }
    await recordAudit(deps, scope, { action: "update", resourceType: "collection", resourceId: id, before: auditedCollection(before, current.sourceName), after: auditedCollection(row, sourceName) });
  });
  if (rebuild) announceCollection(deps, id);
  return getCollection(deps, scope, id);
}

/** Deletes the collection with its records and changelog. */
export async function deleteCollection(deps: Deps, scope: Scope, rawId: string) {
  const id = normalizeId(rawId, undefined, "Collection");
  await transaction(deps.db, async () => {
    const current = await findCollection(deps, scope, id);
    await deps.db.delete(collections).where(inScope(collections, scope, eq(collections.id, id)));
    await recordAudit(deps, scope, { action: "delete", resourceType: "collection", resourceId: id, before: auditedCollection(current.collection, current.sourceName) });
  });
  announceCollection(deps, id);
  return { success: true as const };
}

/** For the builder: every collection, oldest first (each is built on its own). */
export async function allCollections({ db }: Pick<Deps, "db">): Promise<CollectionRow[]> {
  return db.select().from(collections).orderBy(asc(collections.createdAt), asc(collections.id));
}
