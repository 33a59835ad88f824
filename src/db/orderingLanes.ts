import { and, asc, eq, inArray, or, sql } from "drizzle-orm";
import { dialectOf } from "./dialect";
import type { Db } from "./db";
import { pgArray, pgRows } from "./pg/rows";
import { preparedFor, sqliteOf } from "./prepared";
import { deliveryAttempts, events } from "./schema";

/**
 * Ordered delivery's lines (docs/delivery.md, "Ordered delivery";
 * docs/decisions.md D22). A line has at most one row `queued` or
 * `delivering` (its head); the rows behind it are `held`, which no claim
 * reads, until the head settles and the oldest held row is turned `queued`.
 * A head in the DLQ of a `block` target (ordering_hold = 1) keeps its line
 * busy until an operator redrives or skips it.
 */

const a = deliveryAttempts;
/** A row that keeps its line from moving on: its head in flight or waiting to be tried, or a blocking DLQ head. */
const ACTIVE = or(inArray(a.status, ["queued", "delivering"]), and(eq(a.isDlq, 1), eq(a.orderingHold, 1)))!;

/**
 * The partial index attempts_lane's own condition (src/db/schema/delivery.ts), spelled out in every query on
 * lines: SQLite uses a partial index only when the query's WHERE contains the index's condition as a term
 * (it does not prove `status IN ('queued', 'delivering')` implies it), and PostgreSQL then needs no proof either.
 */
export const LANE_LIVE = sql.raw(
  `("delivery_attempts"."ordering_lane" is not null and ("delivery_attempts"."status" in ('queued', 'delivering', 'held') or ("delivery_attempts"."is_dlq" = 1 and "delivery_attempts"."ordering_hold" = 1)))`,
);

/** The advisory-lock namespace (pg_advisory_xact_lock's first int4) of ordering lines. */
const LANE_LOCK_SPACE = 0x68726f6c; // "hrol"

/**
 * Inside a write transaction: holds these lines until the COMMIT, so that
 * routing (which decides held or queued from what it reads) and settling
 * (which promotes the next held row) never interleave on one line. SQLite:
 * the write transaction already excludes every other writer. PostgreSQL:
 * transaction advisory locks, taken in ascending order (no deadlock between
 * two batches); lines are hashed to 32 bits, two that collide only wait on
 * each other.
 */
export async function lockLanes(db: Db, lanes: Iterable<string>): Promise<void> {
  if (dialectOf(db) !== "postgres") return;
  const keys = [...new Set([...lanes].map((l) => Number(BigInt.asIntN(32, Bun.hash.wyhash(l)))))].sort((x, y) => x - y);
  if (keys.length === 0) return;
  await pgRows(db, sql`SELECT count(pg_advisory_xact_lock(${LANE_LOCK_SPACE}::int4, k)) FROM unnest(${pgArray(keys)}::int4[]) AS k`);
}

/** Of these lines, those with any live row (a head, held rows, a blocking DLQ head): a new row joins them `held`. */
export async function occupiedLanes(db: Db, lanes: readonly string[]): Promise<Set<string>> {
  if (lanes.length === 0) return new Set();
  const rows = await db
    .selectDistinct({ lane: a.orderingLane })
    .from(a)
    .where(and(inArray(a.orderingLane, [...new Set(lanes)]), LANE_LIVE, or(ACTIVE, eq(a.status, "held"))));
  return new Set(rows.map((r) => r.lane!));
}

/**
 * For each line with no active row: its oldest held row (received order:
 * scheduled_at holds the event's received_at while held, then the event
 * id) becomes `queued`, due `now`. Answers how many rows it promoted.
 */
export async function promoteHeads(db: Db, lanes: Iterable<string>, now: string): Promise<number> {
  let promoted = 0;
  for (const lane of new Set(lanes)) {
    const [active] = await db.select({ id: a.id }).from(a).where(and(eq(a.orderingLane, lane), LANE_LIVE, ACTIVE)).limit(1);
    if (active) continue;
    const [next] = await db
      .select({ id: a.id })
      .from(a)
      .where(and(eq(a.orderingLane, lane), LANE_LIVE, eq(a.status, "held")))
      .orderBy(asc(a.scheduledAt), asc(a.eventId))
      .limit(1);
    if (!next) continue;
    await db.update(a).set({ status: "queued", scheduledAt: now }).where(and(eq(a.id, next.id), eq(a.status, "held")));
    promoted++;
  }
  return promoted;
}

/**
 * Lines with rows held but no head: their head went some way other than a
 * recorded outcome (retention pruned its event, an operator deleted it).
 * At most `limit`, read from attempts_lane.
 */
export async function headlessLanes(db: Db, limit: number): Promise<string[]> {
  // The inner rows are `x`: the outer row's column keeps its table's name.
  const active = sql`EXISTS (SELECT 1 FROM delivery_attempts x WHERE x.ordering_lane = ${a.orderingLane}
    AND (x.ordering_lane is not null and (x.status in ('queued', 'delivering', 'held') or (x.is_dlq = 1 and x.ordering_hold = 1)))
    AND (x.status IN ('queued', 'delivering') OR (x.is_dlq = 1 AND x.ordering_hold = 1)))`;
  const rows = await db
    .selectDistinct({ lane: a.orderingLane })
    .from(a)
    .where(and(LANE_LIVE, eq(a.status, "held"), sql`NOT ${active}`))
    .limit(limit);
  return rows.map((r) => r.lane!);
}

/** A line's head that was never tried: a row received earlier may still take its place (see demoteHead). */
export interface UntriedHead {
  id: string;
  eventId: string;
  receivedAt: string;
}

/** Of these lines, the heads queued for their first try, with their event's received time. */
export async function untriedHeads(db: Db, lanes: readonly string[]): Promise<Map<string, UntriedHead>> {
  const out = new Map<string, UntriedHead>();
  if (lanes.length === 0) return out;
  const rows = await db
    .select({ lane: a.orderingLane, id: a.id, eventId: a.eventId, receivedAt: events.receivedAt })
    .from(a)
    .innerJoin(events, eq(events.id, a.eventId))
    .where(and(inArray(a.orderingLane, [...new Set(lanes)]), LANE_LIVE, eq(a.status, "queued"), eq(a.attemptNumber, 1)));
  for (const r of rows) out.set(r.lane!, { id: r.id, eventId: r.eventId, receivedAt: r.receivedAt });
  return out;
}

/** Puts an untried head back in its line (held, at its received time), unless a claim took it meanwhile. */
export async function demoteHead(db: Db, head: UntriedHead): Promise<boolean> {
  const rows = await db
    .update(a)
    .set({ status: "held", scheduledAt: head.receivedAt })
    .where(and(eq(a.id, head.id), eq(a.status, "queued")))
    .returning({ id: a.id });
  return rows.length > 0;
}

const live = (t: string) => `(${t}.ordering_lane is not null and (${t}.status in ('queued', 'delivering', 'held') or (${t}.is_dlq = 1 and ${t}.ordering_hold = 1)))`;
const PROMOTE = (lanes: string) => `
  UPDATE delivery_attempts SET status = 'queued', scheduled_at = $NOW
   WHERE id IN (
     SELECT (SELECT h.id FROM delivery_attempts h
              WHERE h.ordering_lane = l.lane AND ${live("h")} AND h.status = 'held'
              ORDER BY h.scheduled_at, h.event_id LIMIT 1)
       FROM ${lanes}
      WHERE NOT EXISTS (SELECT 1 FROM delivery_attempts x
                         WHERE x.ordering_lane = l.lane AND ${live("x")}
                           AND (x.status in ('queued', 'delivering') or (x.is_dlq = 1 and x.ordering_hold = 1))))
     AND status = 'held'
  RETURNING id`;

/** SQLite: PROMOTE prepared once per database (the recording transaction runs it for every batch with ordered heads). */
const sqlitePromote = preparedFor((db: Db) => sqliteOf(db).prepare<{ id: string }, [string, string]>(PROMOTE("(SELECT value AS lane FROM json_each(?1)) l").replace("$NOW", "?2")));

/**
 * promoteHeads for a whole batch of lines in one statement: each line with no
 * active row gets its oldest held row queued. The recording transaction's
 * path (src/domain/ordering.ts, moveLinesOn).
 */
export async function promoteHeadsAll(db: Db, lanes: ReadonlySet<string>, now: string): Promise<number> {
  if (lanes.size === 0) return 0;
  if (dialectOf(db) !== "postgres") return sqlitePromote(db).all(JSON.stringify([...lanes]), now).length;
  const text = PROMOTE("unnest($LANES::text[]) AS l (lane)");
  const [before, after] = text.split("$LANES") as [string, string];
  const [head, tail] = before.split("$NOW") as [string, string];
  return (await pgRows<{ id: string }>(db, sql`${sql.raw(head)}${now}${sql.raw(tail)}${pgArray([...lanes])}${sql.raw(after)}`)).length;
}
