import { and, asc, eq, gt, gte, lt, lte, ne, or, sql } from "drizzle-orm";
import { collectionRecords, collections, events, recordChangelog } from "../db/schema";
import { ph, preparedFor } from "../db/prepared";

/**
 * The builder's statements, built and compiled once per database: drizzle's
 * query building costs more than running these small statements, and the
 * builder runs them for every event (docs/performance.md, collections).
 * Placeholders keep them dialect-neutral.
 */
const p = (name: string) => sql.placeholder(name);

/** The events a collection reads, as buildableEvents() in domain/collections.ts says. */
const buildable = and(eq(events.sourceId, p("sourceId")), ne(events.status, "rejected"), ne(events.dedupStatus, "duplicate"));
/**
 * After the position (at, id) in received order. The plain `>=` on its own
 * lets the index (source_id, received_at, id) seek to the position instead
 * of scanning the source's events from the first (an OR alone is not used
 * as a range).
 */
const after = and(gte(events.receivedAt, p("at")), or(gt(events.receivedAt, p("at")), gt(events.id, p("id"))));
/** Up to and including (untilAt, untilId). */
const upTo = and(lte(events.receivedAt, p("untilAt")), or(lt(events.receivedAt, p("untilAt")), lte(events.id, p("untilId"))));

const eventColumns = {
  id: events.id,
  receivedAt: events.receivedAt,
  eventType: events.eventType,
  body: events.body,
  headers: events.headers,
  query: events.query,
  method: events.method,
  path: events.path,
  contentType: events.contentType,
};

export const builderStatements = preparedFor((db) => ({
  /** The next batch from the beginning (no position yet), or after the position. */
  firstEvents: db.select(eventColumns).from(events).where(buildable).orderBy(asc(events.receivedAt), asc(events.id)).limit(p("limit")).prepare(),
  nextEvents: db.select(eventColumns).from(events).where(and(buildable, after)).orderBy(asc(events.receivedAt), asc(events.id)).limit(p("limit")).prepare(),
  /** The ids committed in a batch's range now: from the beginning or after the position, up to its last event. */
  firstIds: db.select({ id: events.id }).from(events).where(and(buildable, upTo)).orderBy(asc(events.receivedAt), asc(events.id)).limit(p("limit")).prepare(),
  nextIds: db.select({ id: events.id }).from(events).where(and(buildable, after, upTo)).orderBy(asc(events.receivedAt), asc(events.id)).limit(p("limit")).prepare(),

  collection: db.select().from(collections).where(eq(collections.id, p("id"))).prepare(),
  saveState: db
    .update(collections)
    .set({
      recordCount: ph("recordCount"),
      positionAt: ph("positionAt"),
      positionEventId: ph("positionEventId"),
      eventsProcessed: ph("eventsProcessed"),
      eventsIgnored: ph("eventsIgnored"),
      eventsMissingKey: ph("eventsMissingKey"),
      eventsTransformFailed: ph("eventsTransformFailed"),
      lastError: ph("lastError"),
      lastErrorEventId: ph("lastErrorEventId"),
      lastErrorAt: ph("lastErrorAt"),
      backfillProcessed: ph("backfillProcessed"),
      backfillCompletedAt: ph("backfillCompletedAt"),
    })
    .where(eq(collections.id, p("id")))
    .prepare(),

  record: db
    .select()
    .from(collectionRecords)
    .where(and(eq(collectionRecords.collectionId, p("collectionId")), eq(collectionRecords.recordKey, p("key"))))
    .prepare(),
  insertRecord: db
    .insert(collectionRecords)
    .values({
      id: p("id"),
      collectionId: p("collectionId"),
      orgId: p("orgId"),
      envId: p("envId"),
      recordKey: p("recordKey"),
      data: p("data"),
      eventType: p("eventType"),
      sourceEventId: p("sourceEventId"),
      sourceEventAt: p("sourceEventAt"),
      createdAt: p("createdAt"),
      updatedAt: p("updatedAt"),
    })
    .prepare(),
  updateRecord: db
    .update(collectionRecords)
    .set({ data: ph("data"), eventType: ph("eventType"), sourceEventId: ph("sourceEventId"), sourceEventAt: ph("sourceEventAt"), updatedAt: ph("updatedAt") })
    .where(eq(collectionRecords.id, p("id")))
    .prepare(),
  deleteRecord: db.delete(collectionRecords).where(eq(collectionRecords.id, p("id"))).prepare(),
  insertChange: db
    .insert(recordChangelog)
    .values({
      id: p("id"),
      collectionId: p("collectionId"),
      recordId: p("recordId"),
      recordKey: p("recordKey"),
      changeType: p("changeType"),
      beforeData: p("beforeData"),
      afterData: p("afterData"),
      eventId: p("eventId"),
      eventType: p("eventType"),
      createdAt: p("createdAt"),
    })
    .prepare(),
}));
