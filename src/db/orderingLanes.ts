import { and, asc, eq, inArray, sql, type SQL } from "drizzle-orm";
import { CLAIMED_COLUMNS, type AttemptRow } from "./deliverySql";
import { PG_CLAIMED_COLUMNS } from "./pg/queue";
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

/**
 * The partial index attempts_lane's own condition (src/db/schema/delivery.ts), spelled out in every query on
 * lines: SQLite uses a partial index only when the query's WHERE contains the index's condition as a term
 * (it does not prove `status IN ('queued', 'delivering')` implies it), and PostgreSQL then needs no proof either.
 */
export const LANE_LIVE = sql.raw(
  `("delivery_attempts"."ordering_lane" is not null and ("delivery_attempts"."status" in ('queued', 'delivering', 'held') or ("delivery_attempts"."is_dlq" = 1 and "delivery_attempts"."ordering_hold" = 1)))`,
);

/**
 * The partial index attempts_lane_head's condition: a line's head (at most one row a line). "Does this line have
 * a head" reads it in one seek; through attempts_lane the same question read every row held behind the head.
 */
export const LANE_HEAD = sql.raw(
  `("delivery_attempts"."ordering_lane" is not null and ("delivery_attempts"."status" in ('queued', 'delivering') or ("delivery_attempts"."is_dlq" = 1 and "delivery_attempts"."ordering_hold" = 1)))`,
);

const live = (t: string) => `(${t}.ordering_lane is not null and (${t}.status in ('queued', 'delivering', 'held') or (${t}.is_dlq = 1 and ${t}.ordering_hold = 1)))`;
/** attempts_lane_head's condition on table alias `t`. */
function head(t: string): string {
  return `(${t}.ordering_lane is not null and (${t}.status in ('queued', 'delivering') or (${t}.is_dlq = 1 and ${t}.ordering_hold = 1)))`;
}

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
  const distinct = [...new Set(lanes)];
  // One EXISTS per line: it stops at the line's first live row (a DISTINCT over the lines read every row held in each).
  if (dialectOf(db) !== "postgres") return new Set(sqliteOccupied(db).all(JSON.stringify(distinct)).map((r) => r.lane));
  const rows = await pgRows<{ lane: string }>(db, sql`SELECT l.lane FROM unnest(${pgArray(distinct)}::text[]) AS l (lane) WHERE ${sql.raw(OCCUPIED)}`);
  return new Set(rows.map((r) => r.lane));
}

const OCCUPIED = `EXISTS (SELECT 1 FROM delivery_attempts x WHERE x.ordering_lane = l.lane AND ${live("x")})`;
const sqliteOccupied = preparedFor((db: Db) => sqliteOf(db).prepare<{ lane: string }, [string]>(`SELECT l.value AS lane FROM json_each(?1) l WHERE ${OCCUPIED.replaceAll("l.lane", "l.value")}`));

/**
 * For each line with no active row: its oldest held row (received order:
 * scheduled_at holds the event's received_at while held, then the event
 * id) becomes `queued`, due `now`. Answers how many rows it promoted.
 */
export async function promoteHeads(db: Db, lanes: Iterable<string>, now: string): Promise<number> {
  let promoted = 0;
  for (const lane of new Set(lanes)) {
    const [active] = await db.select({ id: a.id }).from(a).where(and(eq(a.orderingLane, lane), LANE_HEAD)).limit(1);
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
    AND ${sql.raw(head("x"))})`;
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
    .where(and(inArray(a.orderingLane, [...new Set(lanes)]), LANE_HEAD, eq(a.status, "queued"), eq(a.attemptNumber, 1)));
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

/**
 * The oldest held row of each line with no head, made its line's head: `queued` due now, or, with `claim`,
 * claimed at once for the caller (`delivering`, its lease and node) and returned whole. $NOW, $LEASE, $BY and
 * the lines are filled in per dialect.
 */
const PROMOTE = (lanes: string, claim: boolean, returning: string) => `
  UPDATE delivery_attempts AS a SET ${claim ? "status = 'delivering', lease_until = $LEASE, claimed_by = $BY" : "status = 'queued'"}, scheduled_at = $NOW
   WHERE a.id IN (
     SELECT (SELECT h.id FROM delivery_attempts h
              WHERE h.ordering_lane = l.lane AND ${live("h")} AND h.status = 'held'
              ORDER BY h.scheduled_at, h.event_id LIMIT 1)
       FROM ${lanes}
      WHERE NOT EXISTS (SELECT 1 FROM delivery_attempts x WHERE x.ordering_lane = l.lane AND ${head("x")}))
     AND a.status = 'held'
  RETURNING ${returning}`;

const SQLITE_LANES = "(SELECT value AS lane FROM json_each(?1)) l";
const sqliteParams = (text: string) => text.replace("$NOW", "?2").replace("$LEASE", "?3").replace("$BY", "?4");
/** SQLite: PROMOTE prepared once per database (the recording transaction runs it for every batch with ordered heads). */
const sqlitePromote = preparedFor((db: Db) => sqliteOf(db).prepare<{ id: string }, [string, string]>(sqliteParams(PROMOTE(SQLITE_LANES, false, "id"))));
const sqlitePromoteClaimed = preparedFor((db: Db) =>
  sqliteOf(db).prepare<AttemptRow, [string, string, string, string | null]>(sqliteParams(PROMOTE(SQLITE_LANES, true, CLAIMED_COLUMNS))),
);

/** PostgreSQL: PROMOTE with its parameters bound where the placeholders stand. */
function pgPromote(lanes: ReadonlySet<string>, now: string, claim: HeadClaim | undefined): SQL {
  const text = PROMOTE("unnest($LANES::text[]) AS l (lane)", claim !== undefined, claim ? PG_CLAIMED_COLUMNS : "a.id");
  const values: Record<string, unknown> = { $NOW: now, $LANES: pgArray([...lanes]), $LEASE: claim?.lease, $BY: claim?.claimedBy };
  const parts = text.split(/(\$NOW|\$LANES|\$LEASE|\$BY)/);
  return sql.join(
    parts.map((part, i) => (i % 2 === 0 ? sql.raw(part) : part === "$LANES" ? (values[part] as SQL) : sql`${values[part]}`)),
    sql.raw(""),
  );
}

/**
 * promoteHeads for a whole batch of lines in one statement: each line with no
 * active row gets its oldest held row queued. Answers how many it queued.
 */
export async function promoteHeadsAll(db: Db, lanes: ReadonlySet<string>, now: string): Promise<number> {
  if (lanes.size === 0) return 0;
  if (dialectOf(db) !== "postgres") return sqlitePromote(db).all(JSON.stringify([...lanes]), now).length;
  return (await pgRows<{ id: string }>(db, pgPromote(lanes, now, undefined))).length;
}

/** Who claims the heads that claimNextHeads promotes: the claim's lease (ISO) and node, as a claim of the queue sets them. */
export interface HeadClaim {
  lease: string;
  claimedBy: string | null;
}

/**
 * As promoteHeadsAll, but each promoted head is claimed for the caller in the
 * same statement (the recording transaction's path, src/domain/ordering.ts
 * moveLinesOn): the worker that settled a line's head starts the next one
 * without a claim of its own, so a line with a backlog costs one write
 * transaction a delivery, not two turns of the pump. The line's rule holds:
 * the row is claimed in the transaction that settles the head before it,
 * under the same line lock, with a lease like any claim (kill -9 re-sends it,
 * never the row behind it, which stays held).
 */
export async function claimNextHeads(db: Db, lanes: ReadonlySet<string>, now: string, claim: HeadClaim): Promise<AttemptRow[]> {
  if (lanes.size === 0) return [];
  if (dialectOf(db) !== "postgres") return sqlitePromoteClaimed(db).all(JSON.stringify([...lanes]), now, claim.lease, claim.claimedBy);
  return pgRows<AttemptRow>(db, pgPromote(lanes, now, claim));
}
