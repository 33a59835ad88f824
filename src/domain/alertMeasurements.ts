import { inScope } from "./scope";
import { and, asc, count, desc, eq, exists, gt, gte, inArray, isNotNull, lt, lte, or, sql, type SQL } from "drizzle-orm";
import { deliveryAttempts as a, destinations, events as e, sources } from "../db/schema";
import { iso } from "../core/clock";
import type { Deps } from "./deps";

/**
 * What alert rules measure, over a window ending now, within a rule's
 * scope: its environment, and its source and/or destination when set.
 * Attempts are placed in time by created_at (when the try was queued, as
 * the dashboard does); a source scope reaches attempts through their event.
 */
export interface MeasureScope {
  orgId: string;
  envId: string;
  sourceId: string | null;
  destinationId: string | null;
}

/**
 * The high-water mark of what a rule has reported: the last counted item's
 * time and id (id null: everything up to the time, for volume_drop).
 */
export interface Mark {
  at: string;
  id: string | null;
}

/**
 * What a rule has not reported yet: attempts after its mark, ordered by a
 * time column (sent_at: when the try started, set as it finishes; dlq_at)
 * then id. Counts are taken up to the newest such key read first, so an
 * item that finishes meanwhile is either counted now or left for the next
 * pass, never both. (An attempt that started before the mark but finished
 * after it was reported is not counted: a trigger undercounts rather than
 * reports anything twice.)
 */
type KeyColumn = typeof a.sentAt | typeof a.dlqAt;
const afterMark = (col: KeyColumn, m: Mark | null): SQL | undefined =>
  m === null ? undefined : m.id === null ? gt(col, m.at) : or(gt(col, m.at), and(eq(col, m.at), gt(a.id, m.id)));
const upToMark = (col: KeyColumn, m: Mark): SQL | undefined => or(lt(col, m.at), and(eq(col, m.at), lte(a.id, m.id ?? "")));

async function newestKey(db: Deps["db"], col: KeyColumn, where: SQL | undefined): Promise<Mark | null> {
  // Without the null check the two dialects would sort a null key at opposite ends.
  const [row] = await db
    .select({ at: col, id: a.id })
    .from(a)
    .where(and(where, isNotNull(col)))
    .orderBy(desc(col), desc(a.id))
    .limit(1);
  return row?.at ? { at: row.at, id: row.id } : null;
}

/** An attempt whose event came from the source: one primary-key lookup per attempt of the window. */
const fromSource = (db: Deps["db"], sourceId: string) => exists(db.select({ one: sql`1` }).from(e).where(and(eq(e.id, a.eventId), eq(e.sourceId, sourceId))));

function attemptScope(db: Deps["db"], scope: MeasureScope, since: Date): SQL | undefined {
  return and(
    inScope(a, scope),
    gte(a.createdAt, iso(since)),
    scope.destinationId ? eq(a.destinationId, scope.destinationId) : undefined,
    scope.sourceId ? fromSource(db, scope.sourceId) : undefined,
  );
}

/** Finished attempts in the window by outcome. */
export async function attemptOutcomes({ db }: Deps, scope: MeasureScope, since: Date, only?: SQL | undefined): Promise<{ succeeded: number; failed: number }> {
  const rows = await db
    .select({ status: a.status, n: count() })
    .from(a)
    .where(and(attemptScope(db, scope, since), inArray(a.status, ["success", "failed"]), only))
    .groupBy(a.status);
  return {
    succeeded: rows.find((r) => r.status === "success")?.n ?? 0,
    failed: rows.find((r) => r.status === "failed")?.n ?? 0,
  };
}

/**
 * The nearest-rank percentile of attempt durations in the window (attempts
 * that got a response or timed out); null when there were none.
 */
export async function latencyPercentile({ db }: Deps, scope: MeasureScope, since: Date, percentile: number, only?: SQL | undefined): Promise<{ samples: number; valueMs: number | null }> {
  const where = and(attemptScope(db, scope, since), isNotNull(a.durationMs), only);
  const [total] = await db.select({ n: count() }).from(a).where(where);
  const samples = total?.n ?? 0;
  if (samples === 0) return { samples, valueMs: null };
  const rank = Math.max(1, Math.ceil((percentile / 100) * samples));
  const [row] = await db
    .select({ ms: a.durationMs })
    .from(a)
    .where(where)
    .orderBy(asc(a.durationMs))
    .limit(1)
    .offset(rank - 1);
  return { samples, valueMs: row?.ms ?? null };
}

function dlqScope(db: Deps["db"], scope: MeasureScope, since: Date): SQL | undefined {
  return and(
    // Written as the partial indexes attempts_dlq and attempts_dlq_scope are, so the planner sees they apply.
    sql`${a.isDlq} = 1`,
    inScope(a, scope),
    gte(a.dlqAt, iso(since)),
    scope.destinationId ? eq(a.destinationId, scope.destinationId) : undefined,
    scope.sourceId ? fromSource(db, scope.sourceId) : undefined,
  );
}

/** Deliveries that landed in the DLQ within the window and are still there. */
export async function dlqArrivals({ db }: Deps, scope: MeasureScope, since: Date): Promise<number> {
  const [row] = await db.select({ n: count() }).from(a).where(dlqScope(db, scope, since));
  return row?.n ?? 0;
}

/** Those of them the rule has not reported yet (after its mark), and the mark that covers them. */
export async function newDlqArrivals({ db }: Deps, scope: MeasureScope, since: Date, mark: Mark | null): Promise<{ count: number; mark: Mark | null }> {
  const where = and(dlqScope(db, scope, since), afterMark(a.dlqAt, mark));
  const top = await newestKey(db, a.dlqAt, where);
  if (!top) return { count: 0, mark: null };
  const [row] = await db.select({ n: count() }).from(a).where(and(where, upToMark(a.dlqAt, top)));
  return { count: row?.n ?? 0, mark: top };
}

/** Finished attempts of the window the rule has not reported yet (started after its mark), and the mark that covers them. */
export async function newAttemptOutcomes(deps: Deps, scope: MeasureScope, since: Date, mark: Mark | null): Promise<{ succeeded: number; failed: number; mark: Mark | null }> {
  const fresh = and(inArray(a.status, ["success", "failed"]), afterMark(a.sentAt, mark));
  const top = await newestKey(deps.db, a.sentAt, and(attemptScope(deps.db, scope, since), fresh));
  if (!top) return { succeeded: 0, failed: 0, mark: null };
  return { ...(await attemptOutcomes(deps, scope, since, and(fresh, upToMark(a.sentAt, top)))), mark: top };
}

/** The percentile over the window's timed attempts the rule has not reported yet, and the mark that covers them. */
export async function newLatencyPercentile(deps: Deps, scope: MeasureScope, since: Date, percentile: number, mark: Mark | null): Promise<{ samples: number; valueMs: number | null; mark: Mark | null }> {
  const fresh = afterMark(a.sentAt, mark);
  const top = await newestKey(deps.db, a.sentAt, and(attemptScope(deps.db, scope, since), isNotNull(a.durationMs), fresh));
  if (!top) return { samples: 0, valueMs: null, mark: null };
  return { ...(await latencyPercentile(deps, scope, since, percentile, and(fresh, upToMark(a.sentAt, top)))), mark: top };
}

/**
 * Events that arrived in the window: from the source when the rule names
 * one, else from every source of the environment. With a destination, the
 * events routed to it (their first tries).
 */
export async function eventsArrived({ db }: Deps, scope: MeasureScope, since: Date): Promise<number> {
  if (scope.destinationId) {
    const [row] = await db
      .select({ n: count() })
      .from(a)
      .where(and(attemptScope(db, scope, since), eq(a.triggerType, "initial")));
    return row?.n ?? 0;
  }
  const [row] = await db
    .select({ n: count() })
    .from(e)
    .where(and(inScope(e, scope), gte(e.receivedAt, iso(since)), scope.sourceId ? eq(e.sourceId, scope.sourceId) : undefined));
  return row?.n ?? 0;
}

/** The names a notification mentions: "to Orders API", "from GitHub". */
export async function scopeNames({ db }: Deps, scope: Pick<MeasureScope, "sourceId" | "destinationId">): Promise<{ source: string | null; destination: string | null }> {
  const [source] = scope.sourceId ? await db.select({ name: sources.name }).from(sources).where(eq(sources.id, scope.sourceId)).limit(1) : [];
  const [destination] = scope.destinationId ? await db.select({ name: destinations.name }).from(destinations).where(eq(destinations.id, scope.destinationId)).limit(1) : [];
  return { source: source?.name ?? null, destination: destination?.name ?? null };
}

/** The source of an event, for issue_opened rules scoped to a source. */
export async function sourceOfEvent({ db }: Deps, eventId: string | null): Promise<string | null> {
  if (!eventId) return null;
  const [row] = await db.select({ sourceId: e.sourceId }).from(e).where(eq(e.id, eventId)).limit(1);
  return row?.sourceId ?? null;
}
