import { collections, type collectionRecords } from "../db/schema";
import { lockRow } from "../db/rowLock";
import { readHorizon } from "../db/horizon";
import { inWriteTurn } from "../db/writeTurn";
import { hex32 } from "../contracts/ids";
import { iso } from "../core/clock";
import { allCollections, type CollectionRow } from "../domain/collections";
import type { Deps } from "../domain/deps";
import type { Logger } from "../observability/logger";
import { planEvent, rulesOf, sameData, type BuildEvent, type EventPlan } from "./plan";
import { builderStatements } from "./statements";
import { errorMessage } from "../contracts/errors";

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
 * On PostgreSQL several nodes stamp and commit on their own, each by its own
 * clock: the builder stays a read horizon behind the clock (src/db/horizon.ts),
 * past which every event stamped earlier has committed.
 */
export const BUILD_BATCH = 500;

export interface BuildOutcome {
  handled: number;
  /** Time spent reading, planning and writing (not waiting for the write turn): what the pass cost the process. */
  busyMs: number;
  /** A full batch was handled, or the pass was cut or discarded: run again at once. */
  more: boolean;
  /** Events of the clock's current millisecond (on PostgreSQL: within the read horizon) were left for a later pass. */
  heldBack: boolean;
}

const NOTHING: BuildOutcome = { handled: 0, busyMs: 0, more: false, heldBack: false };

/** One pass over every collection; what sources they read (the bus wakes the builder for those). */
export async function buildAll(deps: Pick<Deps, "db" | "clock">, logger?: Logger): Promise<BuildOutcome & { sources: Set<string> }> {
  const all = await allCollections(deps);
  const total = { handled: 0, busyMs: 0, more: false, heldBack: false, sources: new Set(all.map((c) => c.sourceId)) };
  for (const c of all) {
    try {
      const outcome = await buildCollection(deps, c);
      total.handled += outcome.handled;
      total.busyMs += outcome.busyMs;
      total.more ||= outcome.more;
      total.heldBack ||= outcome.heldBack;
    } catch (err) {
      // One collection's failure must not stop the others; its position is unchanged, so the next pass retries it.
      logger?.error("collection build failed", { collection_id: c.id, error: errorMessage(err) });
    }
  }
  return total;
}

/** Handles the next batch of one collection's events. */
export async function buildCollection(deps: Pick<Deps, "db" | "clock">, c: CollectionRow, opts: { batch?: number } = {}): Promise<BuildOutcome> {
  const limit = opts.batch ?? BUILD_BATCH;
  const s = builderStatements(deps.db);
  const started = performance.now();
  const rows: BuildEvent[] =
    c.positionAt === null || c.positionEventId === null
      ? await s.firstEvents.execute({ sourceId: c.sourceId, limit })
      : await s.nextEvents.execute({ sourceId: c.sourceId, at: c.positionAt, id: c.positionEventId, limit });
  if (rows.length === 0) {
    // Nothing after the position: the backlog is done (its last event was handled, or pruned meanwhile).
    if (!c.backfillCompletedAt) await inWriteTurn(deps.db, () => completeBackfill(deps, c));
    return NOTHING;
  }
  const rules = rulesOf(c);
  const plans: EventPlan[] = [];
  for (const row of rows) plans.push(await planEvent(row, rules));
  let busyMs = performance.now() - started;
  const applied = await inWriteTurn(deps.db, async () => {
    const applying = performance.now();
    const result = await applyBatch(deps, c, plans);
    busyMs += performance.now() - applying;
    return result;
  });
  if (applied === "stale") return { handled: 0, busyMs, more: true, heldBack: false };
  return { handled: applied.handled, busyMs, more: applied.cut || (applied.handled === plans.length && rows.length === limit), heldBack: applied.heldBack };
}

/** The row as it is inside the write transaction, if no one changed its build since `c` was read. */
async function unchanged(deps: Pick<Deps, "db">, c: CollectionRow): Promise<CollectionRow | null> {
  // Two passes over one collection (a node's builder and a rebuild, or a scheduler handing over) must not both apply a batch.
  await lockRow(deps.db, collections, c.id);
  const [now] = await builderStatements(deps.db).collection.execute({ id: c.id });
  if (!now || now.generation !== c.generation || now.positionAt !== c.positionAt || now.positionEventId !== c.positionEventId) return null;
  return now;
}

async function completeBackfill(deps: Pick<Deps, "db" | "clock">, c: CollectionRow) {
  const current = await unchanged(deps, c);
  if (!current) return;
  await saveState(deps, { ...current, backfillCompletedAt: iso(deps.clock.now()), backfillProcessed: current.backfillTotal });
}

async function saveState(deps: Pick<Deps, "db">, c: CollectionRow) {
  await builderStatements(deps.db).saveState.execute({
    id: c.id,
    recordCount: c.recordCount,
    positionAt: c.positionAt,
    positionEventId: c.positionEventId,
    eventsProcessed: c.eventsProcessed,
    eventsIgnored: c.eventsIgnored,
    eventsMissingKey: c.eventsMissingKey,
    eventsTransformFailed: c.eventsTransformFailed,
    lastError: c.lastError,
    lastErrorEventId: c.lastErrorEventId,
    lastErrorAt: c.lastErrorAt,
    backfillProcessed: c.backfillProcessed,
    backfillCompletedAt: c.backfillCompletedAt,
  });
}

/** The prefix of `plans` that is safe to apply now (see the file comment), and why it may be shorter. */
async function safePrefix(deps: Pick<Deps, "db" | "clock">, c: CollectionRow, plans: EventPlan[]) {
  const horizon = readHorizon(deps.db, deps.clock.now());
  let take = plans.findIndex((p) => p.receivedAt >= horizon);
  if (take < 0) take = plans.length;
  const heldBack = take < plans.length;
  let cut = false;
  if (take > 0) {
    const s = builderStatements(deps.db);
    const last = plans[take - 1]!;
    const range = { sourceId: c.sourceId, untilAt: last.receivedAt, untilId: last.eventId, limit: take + 1 };
    const committed =
      c.positionAt === null || c.positionEventId === null ? await s.firstIds.execute(range) : await s.nextIds.execute({ ...range, at: c.positionAt, id: c.positionEventId });
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
export async function applyBatch(deps: Pick<Deps, "db" | "clock">, c: CollectionRow, all: EventPlan[]): Promise<"stale" | { handled: number; heldBack: boolean; cut: boolean }> {
  const current = await unchanged(deps, c);
  if (!current) return "stale";
  const { plans, heldBack, cut } = await safePrefix(deps, c, all);
  if (plans.length === 0) return { handled: 0, heldBack, cut };
  const s = builderStatements(deps.db);

  // Each key is looked up once a batch; afterwards the map holds what the batch made of it (null: absent).
  const records = new Map<string, RecordRow | null>();
  const recordOf = async (key: string) => {
    let r = records.get(key);
    if (r === undefined) {
      r = (await s.record.execute({ collectionId: c.id, key }))[0] ?? null;
      records.set(key, r);
    }
    return r;
  };
  const log = (p: EventPlan & { key: string }, recordId: string, changeType: string, beforeData: string | null, afterData: string) =>
    s.insertChange.execute({ id: hex32(), collectionId: c.id, recordId, recordKey: p.key, changeType, beforeData, afterData, eventId: p.eventId, eventType: p.eventType, createdAt: p.receivedAt });

  const next = { ...current };
  const problem = (p: EventPlan, message: string) => {
    next.lastError = message;
    next.lastErrorEventId = p.eventId;
    next.lastErrorAt = p.receivedAt;
  };
  for (const p of plans) {
    switch (p.kind) {
      case "upsert": {
        const existing = await recordOf(p.key);
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
          await s.insertRecord.execute(row);
          records.set(p.key, row);
          next.recordCount++;
          await log(p, row.id, "created", null, p.data);
        } else if (!sameData(existing.data, p.data)) {
          const changes = { data: p.data, eventType: p.eventType, sourceEventId: p.eventId, sourceEventAt: p.receivedAt, updatedAt: p.receivedAt };
          await s.updateRecord.execute({ id: existing.id, ...changes });
          records.set(p.key, { ...existing, ...changes });
          await log(p, existing.id, "updated", existing.data, p.data);
        }
        break;
      }
      case "delete": {
        const existing = await recordOf(p.key);
        if (existing) {
          await s.deleteRecord.execute({ id: existing.id });
          records.set(p.key, null);
          next.recordCount--;
          await log(p, existing.id, "deleted", existing.data, "null");
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
    // Done once the backlog's last event is handled (or when there was none).
    if (!inBacklog(last) || (last.receivedAt === untilAt && last.eventId === untilId)) {
      next.backfillCompletedAt = iso(deps.clock.now());
      next.backfillProcessed = next.backfillTotal;
    }
  }
  await saveState(deps, next);
  return { handled: plans.length, heldBack, cut };
}
