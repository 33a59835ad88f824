import { and, desc, eq, lt, lte, or, type SQL } from "drizzle-orm";
import type { ChangelogEntryDto, ListRecordsQuery, RecordDto } from "../contracts/collections";
import { notFound } from "../contracts/errors";
import { decodeCursor, encodeCursor } from "../contracts/pagination";
import { ilike, likePattern } from "../db/portableSql";
import { collectionRecords, recordChangelog } from "../db/schema";
import { findCollection } from "./collections";
import type { Deps, Scope } from "./deps";

/** A collection's records and each record's changelog, as the builder (src/catalog/builder.ts) keeps them: read-only here. */

type RecordRow = typeof collectionRecords.$inferSelect;
type ChangelogRow = typeof recordChangelog.$inferSelect;

export function serializeRecord(row: RecordRow): RecordDto {
  return {
    id: row.id,
    collection_id: row.collectionId,
    org_id: row.orgId,
    env_id: row.envId,
    record_key: row.recordKey,
    data: row.data,
    event_type: row.eventType,
    source_event_id: row.sourceEventId,
    source_event_at: row.sourceEventAt,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

export function serializeChangelogEntry(row: ChangelogRow): ChangelogEntryDto {
  return {
    id: row.id,
    collection_id: row.collectionId,
    record_id: row.recordId,
    record_key: row.recordKey,
    change_type: row.changeType as ChangelogEntryDto["change_type"],
    before_data: row.beforeData,
    after_data: row.afterData,
    event_id: row.eventId,
    event_type: row.eventType,
    created_at: row.createdAt,
  };
}

/**
 * Records newest first (by when each record was created, which never
 * changes, so pages neither repeat nor skip while records are updated);
 * `search` matches the key or the data, `event_type` the type of the event
 * that last wrote the record.
 */
export async function listRecords(deps: Deps, scope: Scope, rawId: string, query: ListRecordsQuery) {
  const { collection } = await findCollection(deps, scope, rawId);
  const conds: (SQL | undefined)[] = [eq(collectionRecords.collectionId, collection.id)];
  if (query.search && query.search.trim() !== "") {
    const pattern = likePattern(query.search.trim());
    conds.push(or(ilike(collectionRecords.recordKey, pattern), ilike(collectionRecords.data, pattern)));
  }
  if (query.event_type) conds.push(eq(collectionRecords.eventType, query.event_type));
  if (query.cursor) {
    const c = decodeCursor(query.cursor, "next");
    // The plain `<=` lets the index (collection_id, created_at, id) seek to the cursor.
    conds.push(lte(collectionRecords.createdAt, c.t), or(lt(collectionRecords.createdAt, c.t), lt(collectionRecords.id, c.id)));
  }
  const rows = await deps.db
    .select()
    .from(collectionRecords)
    .where(and(...conds))
    .orderBy(desc(collectionRecords.createdAt), desc(collectionRecords.id))
    .limit(query.limit + 1);
  const hasMore = rows.length > query.limit;
  const page = rows.slice(0, query.limit);
  const last = page[page.length - 1];
  return {
    records: page.map(serializeRecord),
    has_more: hasMore,
    next_cursor: hasMore && last ? encodeCursor({ t: last.createdAt, id: last.id }, "next") : null,
  };
}

export async function getRecord(deps: Deps, scope: Scope, rawId: string, key: string) {
  const { collection } = await findCollection(deps, scope, rawId);
  const [row] = await deps.db
    .select()
    .from(collectionRecords)
    .where(and(eq(collectionRecords.collectionId, collection.id), eq(collectionRecords.recordKey, key)))
    .limit(1);
  if (!row) throw notFound("Record");
  return { record: serializeRecord(row) };
}

/** A record's changes, newest first; still readable after the record was deleted. */
export async function getRecordChangelog(deps: Deps, scope: Scope, rawId: string, key: string, query: { limit: number }) {
  const { collection } = await findCollection(deps, scope, rawId);
  const rows = await deps.db
    .select()
    .from(recordChangelog)
    .where(and(eq(recordChangelog.collectionId, collection.id), eq(recordChangelog.recordKey, key)))
    .orderBy(desc(recordChangelog.createdAt), desc(recordChangelog.id))
    .limit(query.limit);
  // Every record begins with a `created` entry: no entry, no record now or ever.
  if (rows.length === 0) throw notFound("Record");
  return { changelog: rows.map(serializeChangelogEntry) };
}
