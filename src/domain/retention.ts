import { and, eq, inArray, isNotNull, lt, or, sql } from "drizzle-orm";
import { attemptHours, auditLog, deliveryAttempts, eventHours, events, recordChangelog, sources } from "../db/schema";
import { reclaimFreePages } from "../db/statements";
import { iso } from "../core/clock";
import type { Deps } from "./deps";

/** Rows deleted per statement: short write transactions keep ingest flowing while pruning. */
const BATCH = 1000;

/**
 * Deletes events received more than HOOKRELAY_RETENTION_DAYS ago, with their
 * delivery attempts, in small batches, then the stats rollups of the hours
 * wholly before the cutoff, and gives the freed space back to the file
 * system. Source counters are lifetime totals and stay as they are.
 */
export async function pruneOldEvents(deps: Deps, opts: { batch?: number } = {}): Promise<number> {
  const { db, clock, settings } = deps;
  const cutoff = iso(new Date(clock.now().getTime() - settings.retentionDays * 24 * 3600 * 1000));
  const batch = opts.batch ?? BATCH;
  let deleted = 0;
  for (;;) {
    const ids = (await db.select({ id: events.id }).from(events).where(lt(events.receivedAt, cutoff)).limit(batch)).map((r) => r.id);
    if (ids.length === 0) {
      await pruneOldRollups(deps, cutoff);
      if (deleted > 0) await reclaimFreePages(db);
      return deleted;
    }
    await db.delete(deliveryAttempts).where(inArray(deliveryAttempts.eventId, ids));
    await db.delete(events).where(inArray(events.id, ids));
    deleted += ids.length;
    // Let requests waiting on the event loop run between batches.
    await new Promise((r) => setImmediate(r));
  }
}

/**
 * The triggers take a deleted row back out of its rollup (src/db/schema/rollups.ts),
 * but leave the emptied rows (on PostgreSQL, rows of other backends' shards that
 * sum to nothing): once every event of an hour is past retention, its rows go.
 * An attempt sent later than its event was received stays counted in its own hour.
 */
async function pruneOldRollups({ db }: Deps, cutoff: string): Promise<void> {
  const hour = cutoff.slice(0, 13);
  await db.delete(eventHours).where(lt(eventHours.hour, hour));
  await db.delete(attemptHours).where(lt(attemptHours.hour, hour));
}

/**
 * Deletes collection changelog entries older than HOOKRELAY_RETENTION_DAYS,
 * in batches, as events are (docs/catalog.md, "Retention"). Records stay: a
 * record is the current state, its changelog the history, and history is
 * what retention bounds. Rows are found by created_at without an index of
 * their own: the oldest rows come first in the table, so each batch finds its
 * rows at once and the last, empty look reads the table once an hour.
 */
export async function pruneOldChangelog(deps: Deps, opts: { batch?: number } = {}): Promise<number> {
  const { db, clock, settings } = deps;
  const cutoff = iso(new Date(clock.now().getTime() - settings.retentionDays * 24 * 3600 * 1000));
  const batch = opts.batch ?? BATCH;
  let deleted = 0;
  for (;;) {
    const ids = (await db.select({ id: recordChangelog.id }).from(recordChangelog).where(lt(recordChangelog.createdAt, cutoff)).limit(batch)).map((r) => r.id);
    if (ids.length === 0) {
      if (deleted > 0) await reclaimFreePages(db);
      return deleted;
    }
    await db.delete(recordChangelog).where(inArray(recordChangelog.id, ids));
    deleted += ids.length;
    await new Promise((r) => setImmediate(r));
  }
}

/** HOOKRELAY_AUDIT_RETENTION_DAYS when the settings name none. */
export const DEFAULT_AUDIT_RETENTION_DAYS = 365;

/**
 * Deletes audit entries older than HOOKRELAY_AUDIT_RETENTION_DAYS, in
 * batches as events are (docs/audit.md, "Retention"); the index on
 * created_at finds each batch at once.
 */
export async function pruneOldAuditEntries(deps: Deps, opts: { batch?: number } = {}): Promise<number> {
  const { db, clock, settings } = deps;
  const days = settings.auditRetentionDays ?? DEFAULT_AUDIT_RETENTION_DAYS;
  const cutoff = iso(new Date(clock.now().getTime() - days * 24 * 3600 * 1000));
  const batch = opts.batch ?? BATCH;
  let deleted = 0;
  for (;;) {
    const ids = (await db.select({ id: auditLog.id }).from(auditLog).where(lt(auditLog.createdAt, cutoff)).limit(batch)).map((r) => r.id);
    if (ids.length === 0) {
      if (deleted > 0) await reclaimFreePages(db);
      return deleted;
    }
    await db.delete(auditLog).where(inArray(auditLog.id, ids));
    deleted += ids.length;
    await new Promise((r) => setImmediate(r));
  }
}

/** How long an expired ephemeral source stays (answering 410, its events readable) before it is deleted. */
export const EPHEMERAL_GRACE_MS = 3600 * 1000;

/**
 * Deletes ephemeral sources that expired (or used up their request_limit)
 * more than the grace period ago, with their events.
 */
export async function deleteExpiredEphemeralSources(deps: Deps, opts: { graceMs?: number } = {}): Promise<string[]> {
  const { db, clock, bus } = deps;
  const before = iso(new Date(clock.now().getTime() - (opts.graceMs ?? EPHEMERAL_GRACE_MS)));
  const expired = await db
    .select({ id: sources.id })
    .from(sources)
    .where(
      and(
        eq(sources.isEphemeral, 1),
        or(
          and(isNotNull(sources.expiresAt), lt(sources.expiresAt, before)),
          and(isNotNull(sources.requestLimit), sql`${sources.requestCount} >= ${sources.requestLimit}`, lt(sql`coalesce(${sources.lastEventAt}, ${sources.updatedAt})`, before)),
        ),
      ),
    );
  const ids = expired.map((r) => r.id);
  for (const id of ids) {
    await db.delete(sources).where(eq(sources.id, id));
    bus.publish({ type: "source.updated", sourceId: id });
  }
  return ids;
}
