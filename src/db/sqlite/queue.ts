import { takeTurns, walkBudget } from "../claimTurns";
import { deliverySql, type AttemptRow } from "../deliverySql";
import type { Db } from "../db";
import { preparedFor } from "../prepared";
import type { ClaimedBatch, ClaimRequest, OutcomeRecord, QueueStore } from "../queueStore";

/**
 * The delivery queue on SQLite: the prepared bun:sqlite statements of
 * deliverySql.ts behind the async QueueStore. Every method does its work
 * synchronously before its promise settles (bun:sqlite is synchronous, and
 * one connection serves the process), so a claim's reads and its UPDATE are
 * never split by another writer.
 */
export const sqliteQueue = preparedFor(
  (db: Db): QueueStore => ({
    claim: async (request) => claimSqlite(db, request),
    async release(rows) {
      const release = deliverySql(db).release;
      for (const r of rows) release.run(r.id, r.leaseUntil);
    },
    // serve.lock makes one serve process per database: every claim left at its start-up (or its
    // shutdown deadline) is a previous run's, or its own.
    async releaseOrphaned() {
      return deliverySql(db).releaseOrphaned.all().length;
    },
    async releaseClaimsOf() {
      return deliverySql(db).releaseOrphaned.all().length;
    },
    // The one node is alive while it asks; its previous runs' claims went back at its start-up.
    async releaseGone() {
      return 0;
    },
    async loadEvents(eventIds) {
      if (eventIds.length === 0) return [];
      return deliverySql(db).loadEvents.all(JSON.stringify(eventIds));
    },
    async destinationForDelivery(destinationId) {
      return deliverySql(db).destinationForDelivery.get(destinationId) ?? undefined;
    },
    async recordOutcomes(outcomes) {
      return completeEach(db, outcomes);
    },
    async refreshEventStatuses(eventIds) {
      if (eventIds.length === 0) return [];
      return deliverySql(db)
        .refreshEventStatuses.all(JSON.stringify(eventIds))
        .map((r) => ({ id: r.id, orgId: r.org_id, envId: r.env_id, sourceId: r.source_id, status: r.status }));
    },
    async nextScheduledAfter(now) {
      return deliverySql(db).nextScheduled.get(now)?.at ?? null;
    },
    async oldestQueued() {
      return deliverySql(db).oldestQueued.get()?.at ?? null;
    },
  }),
);

/** One prepared UPDATE per outcome (deliverySql.complete says why not one for the batch). */
function completeEach(db: Db, outcomes: readonly OutcomeRecord[]): Set<string> {
  const complete = deliverySql(db).complete;
  const recorded = new Set<string>();
  for (const o of outcomes) {
    const a = o.attempt;
    const { changes } = complete.run(
      a.rowId!,
      o.status,
      o.requestUrl,
      o.requestMethod,
      o.requestHeaders,
      o.requestBodySize,
      o.responseStatus,
      o.responseHeaders,
      o.responseBody,
      o.durationMs,
      o.error,
      o.errorDetail,
      o.nextRetryAt,
      o.isDlq,
      o.dlqAt,
      a.leaseUntil,
      a.id,
      o.sentAt,
    );
    if (changes > 0) recorded.add(a.id);
  }
  return recorded;
}

// ---------------------------------------------------------------- the claim


/** Where the walk over destinations stands, per database: it goes round them in id order, claim after claim. */
interface WalkState {
  /** The last destination visited. */
  cursor?: string;
  /** The round in progress: where it began, and whether it has wrapped past the last destination id. */
  lap?: { start?: string; wrapped: boolean };
}
const walks = new WeakMap<Db, WalkState>();

/**
 * Claims up to `limit` due rows: queued rows whose time has come, and rows
 * whose lease expired, without `exclude` (destinations out of rate-limit
 * slots) and paused destinations. Its cost follows the batch, not the number
 * of destinations with rows waiting (docs/performance.md, "Outbound fan-out"):
 *
 * 1. The oldest `limit + 1` due rows are read from attempts_due_time (by
 *    scheduled_at): when there are no more than `limit`, every due row is in
 *    hand, and they are shared out in turns.
 * 2. Otherwise many rows are due, and a destination with a long backlog may
 *    hold all of the oldest. Destinations then take turns: a walk goes round
 *    the destinations with queued rows (attempts_due, a loose index scan: one
 *    seek each) from where the last claim stopped, one row of each; when it
 *    has been round them all with room left, more of each in turns. So one
 *    destination's backlog, or one slow endpoint, never starves another, and
 *    with 10,000 endpoints a batch of 128 visits about 128 of them. A walk
 *    visits at most WALK_VISITS_PER_ROW destinations per row asked for; rows
 *    it left room for are taken from the oldest due (step 1's).
 *
 * Rows within a destination go oldest first. Atomic because SQLite has one
 * writer and every statement here runs before the first await.
 */
function claimSqlite(db: Db, opts: ClaimRequest): ClaimedBatch {
  const s = deliverySql(db);
  const now = opts.now;
  const limit = opts.limit;
  const skip = new Set(opts.exclude);
  for (const d of s.pausedDestinations.all()) skip.add(d.id);
  const cap = (destinationId: string) => (opts.oneEach?.has(destinationId) ? 1 : limit);
  const state = walks.get(db) ?? {};
  walks.set(db, state);

  const oldest = s.dueByTime.all(now, limit + 1);
  let claimed: AttemptRow[];
  let complete: boolean;
  if (oldest.length <= limit) {
    // Every due row is here.
    const byDestination = new Map<string, number[]>();
    for (const r of oldest) {
      if (skip.has(r.destinationId)) continue;
      const list = byDestination.get(r.destinationId) ?? [];
      if (list.length < cap(r.destinationId)) list.push(r.rowId);
      byDestination.set(r.destinationId, list);
    }
    claimed = loadInOrder(s, takeTurns([...byDestination.values()], limit));
    complete = true;
    state.lap = undefined;
  } else {
    const walk = walkDestinations(s, state, now, limit, skip, cap);
    claimed = takeTurns(walk.lists, limit);
    complete = walk.lapDone;
    if (claimed.length < limit) {
      // Room the walk did not fill (it stopped part way round): the oldest due rows.
      const taken = new Set(claimed.map((r) => r.rowId));
      const perDestination = new Map<string, number>();
      for (const r of claimed) perDestination.set(r.destinationId, (perDestination.get(r.destinationId) ?? 0) + 1);
      const extra: number[] = [];
      for (const r of oldest) {
        if (claimed.length + extra.length >= limit) break;
        const n = perDestination.get(r.destinationId) ?? 0;
        if (taken.has(r.rowId) || skip.has(r.destinationId) || n >= cap(r.destinationId)) continue;
        perDestination.set(r.destinationId, n + 1);
        extra.push(r.rowId);
      }
      claimed.push(...loadInOrder(s, extra));
    }
  }

  if (claimed.length < limit) claimed.push(...s.leaseExpired.all(now, limit - claimed.length));
  if (claimed.length === 0) return { rows: claimed, complete };
  s.claim.run(JSON.stringify(claimed.map((r) => r.rowId)), opts.lease, opts.claimedBy);
  for (const row of claimed) row.leaseUntil = opts.lease;
  return { rows: claimed, complete };
}

type Statements = ReturnType<typeof deliverySql>;

/**
 * Goes round the destinations with queued rows from where the last walk
 * stopped, one due row of each, until `limit` rows or the visit budget. When
 * it completes the round it began (this claim or an earlier one), the
 * destinations it took from this time give more rows each, in turns.
 */
function walkDestinations(s: Statements, state: WalkState, now: string, limit: number, skip: ReadonlySet<string>, cap: (d: string) => number) {
  const budget = walkBudget(limit);
  const lap = state.lap ?? { start: state.cursor, wrapped: false };
  const lists = new Map<string, AttemptRow[]>();
  let count = 0;
  let visits = 0;
  let lapDone = false;
  // Each step reads the next destination with its oldest queued row: one seek, and the row when it is due.
  let next = s.firstRowAfter.get(state.cursor ?? "");
  while (count < limit && visits < budget) {
    if (next === null) {
      if (lap.start === undefined || lap.wrapped) {
        lapDone = true;
        break;
      }
      lap.wrapped = true;
      next = s.firstRowAfter.get("");
      continue;
    }
    const d = next.destinationId;
    if (lap.wrapped && lap.start !== undefined && d > lap.start) {
      lapDone = true;
      break;
    }
    visits++;
    state.cursor = d;
    if (!skip.has(d) && next.scheduledAt <= now) {
      const { scheduledAt: _, ...row } = next;
      lists.set(d, [row]);
      count++;
    }
    next = s.firstRowAfter.get(d);
  }
  state.lap = lapDone ? undefined : lap;
  if (lapDone) {
    // Round them all with room left: more rows of each, in equal shares, until full or none has more.
    let active = [...lists.keys()].filter((d) => cap(d) > 1);
    while (count < limit && active.length > 0) {
      const share = Math.ceil((limit - count) / active.length);
      const more: string[] = [];
      for (const d of active) {
        const have = lists.get(d)!;
        const want = Math.min(share, cap(d) - have.length);
        const rows = s.dueOf.all(d, now, want, have.length);
        have.push(...rows);
        count += rows.length;
        if (rows.length === want && have.length < cap(d)) more.push(d);
      }
      active = more;
    }
  }
  return { lists: [...lists.values()], lapDone };
}


/** The rows of these rowids, in the order given. */
function loadInOrder(s: Statements, rowIds: number[]): AttemptRow[] {
  if (rowIds.length === 0) return [];
  const byRowId = new Map(s.rowsByRowId.all(JSON.stringify(rowIds)).map((r) => [r.rowId, r]));
  return rowIds.map((id) => byRowId.get(id)).filter((r): r is AttemptRow => r !== undefined);
}
