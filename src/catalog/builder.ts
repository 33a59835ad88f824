import { and, asc, eq, inArray } from "drizzle-orm";
import { collectionRecords, collections, events, recordChangelog } from "../db/schema";
import { inWriteTurn } from "../db/writeTurn";
import { hex32 } from "../contracts/ids";
import { iso } from "../domain/clock";
import { afterPosition, allCollections, buildableEvents, upToPosition, type CollectionRow } from "../domain/collections";
import type { Deps } from "../domain/deps";
import type { Logger } from "../observability/logger";
import { planEvent, rulesOf, sameData, type BuildEvent, type EventPlan } from "./plan";

/**
 * Builds collections from their source's stored events, in received order
 * ((received_at, id): the events_source_received index), a batch at a time.
 *
 * A batch is read and planned outside any transaction (transforms are
 * asynchronous), then applied in one write transaction (the turn's, shared
 * with ingest's group commit: no commit of its own) that also moves the
 * collection's position past it. A crash before that COMMIT leaves records,
 * changelog and position as they were, so the batch is applied again from
 * the same position, in the same order: at least once, never twice.
 *
 * Why the position never skips an event committed later: every writer
 * stamps received_at inside its write transaction and never earlier than
 * the clock (ingest's group commit also never goes backwards), and within a
 * millisecond this process's ids only grow. Inside the builder's own write
 * transaction no other writer is half way, so:
 *   - events stamped before the clock's current millisecond are final, and
 *     those of the current millisecond are left for the next pass (another
 *     process, e.g. a CLI publishing in local mode, may still commit one
 *     there with a smaller id);
 *   - the batch read before the transaction is checked against the events
 *     committed in its range now, and cut where one appeared in between.
 */
export const BUILD_BATCH = 500;

export interface BuildOutcome {
  handled: number;
  /** A full batch was handled, or the pass was cut or discarded: run again at once. */
  more: boolean;
  /** Events of the clock's current millisecond were left for a later pass. */
  heldBack: boolean;
}

const NOTHING: BuildOutcome = { handled: 0, more: false, heldBack: false };

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

/** One pass over every collection; what sources they read (the bus wakes the builder for those). */
export async function buildAll(deps: Pick<Deps, "db" | "clock">, logger?: Logger): Promise<BuildOutcome & { sources: Set<string> }> {
  const all = await allCollections(deps);
  const total = { handled: 0, more: false, heldBack: false, sources: new Set(all.map((c) => c.sourceId)) };
  for (const c of all) {
    try {
      const outcome = await buildCollection(deps, c);
      total.handled += outcome.handled;
      total.more ||= outcome.more;
      total.heldBack ||= outcome.heldBack;
    } catch (err) {
      // One collection's failure must not stop the others; its position is unchanged, so the next pass retries it.
      logger?.error("collection build failed", { collection_id: c.id, error: err instanceof Error ? err.message : String(err) });
    }
  }
  return total;
}

/** Handles the next batch of one collection's events. */
export async function buildCollection(deps: Pick<Deps, "db" | "clock">, c: CollectionRow, opts: { batch?: number } = {}): Promise<BuildOutcome> {
  const limit = opts.batch ?? BUILD_BATCH;
  const rows: BuildEvent[] = await deps.db
    .select(eventColumns)
    .from(events)
    .where(and(buildableEvents(c.sourceId), afterPosition(c.positionAt, c.positionEventId)))
    .orderBy(asc(events.receivedAt), asc(events.id))
    .limit(limit);
  if (rows.length === 0) {
    // Nothing after the position: the backlog is done (its last event was handled, or pruned meanwhile).
    if (!c.backfillCompletedAt) await inWriteTurn(deps.db, () => completeBackfill(deps, c));
    return NOTHING;
  }
  const rules = rulesOf(c);
  const plans: EventPlan[] = [];
  for (const row of rows) plans.push(await planEvent(row, rules));
  const applied = await inWriteTurn(deps.db, () => applyBatch(deps, c, plans));
  if (applied === "stale") return { handled: 0, more: true, heldBack: false };
  return { handled: applied.handled, more: applied.cut || (applied.handled === plans.length && rows.length === limit), heldBack: applied.heldBack };
}

/** The row as it is inside the write transaction, if no one changed its build since `c` was read. */
function unchanged(deps: Pick<Deps, "db">, c: CollectionRow): CollectionRow | null {
  const now = deps.db.select().from(collections).where(eq(collections.id, c.id)).get();
  if (!now || now.generation !== c.generation || now.positionAt !== c.positionAt || now.positionEventId !== c.positionEventId) return null;
  return now;
}

function completeBackfill(deps: Pick<Deps, "db" | "clock">, c: CollectionRow) {
  if (!unchanged(deps, c)) return;
  deps.db
    .update(collections)
    .set({ backfillCompletedAt: iso(deps.clock.now()), backfillProcessed: c.backfillTotal })
    .where(eq(collections.id, c.id))
    .run();
}

/** The prefix of `plans` that is safe to apply now (see the file comment), and why it may be shorter. */
function safePrefix(deps: Pick<Deps, "db" | "clock">, c: CollectionRow, plans: EventPlan[]) {
  const horizon = iso(deps.clock.now());
  let take = plans.findIndex((p) => p.receivedAt >= horizon);
  if (take < 0) take = plans.length;
  const heldBack = take < plans.length;
  let cut = false;
  if (take > 0) {
    const last = plans[take - 1]!;
    const committed = deps.db
      .select({ id: events.id })
      .from(events)
      .where(and(buildableEvents(c.sourceId), afterPosition(c.positionAt, c.positionEventId), upToPosition(last.receivedAt, last.eventId)))
      .orderBy(asc(events.receivedAt), asc(events.id))
      .limit(take + 1)
      .all();
    let same = 0;
    while (same < take && committed[same]?.id === plans[same]!.eventId) same++;
    if (same < take) {
      take = same;
      cut = true;
    }
  }
  return { plans: plans.slice(0, take), heldBack, cut };
}

type RecordRow = typeof collectionRecords.$inferSelect;

/** Inside the write transaction: the batch's records, changelog entries, counters and position, all or nothing. */
export function applyBatch(deps: Pick<Deps, "db" | "clock">, c: CollectionRow, all: EventPlan[]): "stale" | { handled: number; heldBack: boolean; cut: boolean } {
  const { db } = deps;
  const current = unchanged(deps, c);
  if (!current) return "stale";
  const { plans, heldBack, cut } = safePrefix(deps, c, all);
  if (plans.length === 0) return { handled: 0, heldBack, cut };

  const keys = [...new Set(plans.flatMap((p) => (p.kind === "upsert" || p.kind === "delete" ? [p.key] : [])))];
  const records = new Map<string, RecordRow>();
  for (let i = 0; i < keys.length; i += 500) {
    const found = db
      .select()
      .from(collectionRecords)
      .where(and(eq(collectionRecords.collectionId, c.id), inArray(collectionRecords.recordKey, keys.slice(i, i + 500))))
      .all();
    for (const r of found) records.set(r.recordKey, r);
  }

  const next = { ...current };
  const log = (p: EventPlan & { key: string }, recordId: string, changeType: string, beforeData: string | null, afterData: string) =>
    db
      .insert(recordChangelog)
      .values({ id: hex32(), collectionId: c.id, recordId, recordKey: p.key, changeType, beforeData, afterData, eventId: p.eventId, eventType: p.eventType, createdAt: p.receivedAt })
      .run();
  const problem = (p: EventPlan, message: string) => {
    next.lastError = message;
    next.lastErrorEventId = p.eventId;
    next.lastErrorAt = p.receivedAt;
  };

  for (const p of plans) {
    switch (p.kind) {
      case "upsert": {
        const existing = records.get(p.key);
        if (!existing) {
          const row: RecordRow = {
            id: hex32(),
            collectionId: c.id,
            orgId: c.orgId,
            envId: c.envId,
            recordKey: p.key,
            data: p.data,
            eventType: p.eventType,
            sourceEventId: p.eventId,
            sourceEventAt: p.receivedAt,
            createdAt: p.receivedAt,
            updatedAt: p.receivedAt,
          };
          db.insert(collectionRecords).values(row).run();
          records.set(p.key, row);
          next.recordCount++;
          log(p, row.id, "created", null, p.data);
        } else if (!sameData(existing.data, p.data)) {
          const changes = { data: p.data, eventType: p.eventType, sourceEventId: p.eventId, sourceEventAt: p.receivedAt, updatedAt: p.receivedAt };
          db.update(collectionRecords).set(changes).where(eq(collectionRecords.id, existing.id)).run();
          records.set(p.key, { ...existing, ...changes });
          log(p, existing.id, "updated", existing.data, p.data);
        }
        break;
      }
      case "delete": {
        const existing = records.get(p.key);
        if (existing) {
          db.delete(collectionRecords).where(eq(collectionRecords.id, existing.id)).run();
          records.delete(p.key);
          next.recordCount--;
          log(p, existing.id, "deleted", existing.data, "null");
        }
        break;
      }
      case "ignored":
        next.eventsIgnored++;
        break;
      case "missing_key":
        next.eventsMissingKey++;
        problem(p, `The event has no record key (a string or number) at "${c.keyPath}"`);
        break;
      case "transform_failed":
        next.eventsTransformFailed++;
        problem(p, p.error);
        break;
    }
  }

  const last = plans[plans.length - 1]!;
  next.positionAt = last.receivedAt;
  next.positionEventId = last.eventId;
  next.eventsProcessed += plans.length;
  if (!next.backfillCompletedAt) {
    const untilAt = next.backfillUntilAt;
    const untilId = next.backfillUntilId;
    const inBacklog = (p: EventPlan) => untilAt !== null && untilId !== null && (p.receivedAt < untilAt || (p.receivedAt === untilAt && p.eventId <= untilId));
    next.backfillProcessed += plans.filter(inBacklog).length;
    if (untilAt === null || untilId === null || !inBacklog(last) || (last.receivedAt === untilAt && last.eventId === untilId)) {
      next.backfillCompletedAt = iso(deps.clock.now());
      next.backfillProcessed = next.backfillTotal;
    }
  }
  const { id, orgId, envId, createdAt, updatedAt, ...state } = next;
  db.update(collections).set(state).where(eq(collections.id, c.id)).run();
  return { handled: plans.length, heldBack, cut };
}
