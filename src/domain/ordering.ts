import { and, eq, isNull, sql, type SQL } from "drizzle-orm";
import type { Db } from "../db/db";
import { deliveryAttempts } from "../db/schema";
import { claimNextHeads, demoteHead, headlessLanes, LANE_LIVE, lockLanes, occupiedLanes, promoteHeads, promoteHeadsAll, untriedHeads, type HeadClaim } from "../db/orderingLanes";
import type { AttemptRow } from "../db/deliverySql";
import { transaction } from "../db/transaction";
import { AppError } from "../contracts/errors";
import { cleanKey, orderingLane } from "../rules/orderingKey";
import { iso } from "../core/clock";
import { recordAudit } from "./audit";
import type { Deps, Scope } from "./deps";
import type { AttemptInsert } from "./deliveries";
import { getConnection } from "./connections";

/**
 * Ordered delivery (docs/delivery.md, "Ordered delivery"; docs/decisions.md
 * D22): routing puts a first try in its line (queued when the line is free,
 * held behind its head otherwise); recording a settled head moves the line
 * on; operators list the lines that wait and skip a blocked head.
 */

const a = deliveryAttempts;
/** When a row was received, while it waits to be placed (scheduled_at of a held row: its place in the line). */
const receivedOf = new WeakMap<AttemptInsert, string>();

/** Marks a first try as part of an ordered line; placeInLines decides whether it is its head. */
export function inLine(row: AttemptInsert, line: { lane: string; key: string | null; block: boolean; receivedAt: string }): void {
  row.orderingLane = line.lane;
  row.orderingKey = line.key;
  row.orderingHold = line.block ? 1 : 0;
  receivedOf.set(row, line.receivedAt);
}

/**
 * Inside the routing transaction, before the rows are inserted: each ordered
 * row whose line already has a live row (or an earlier row of this batch)
 * becomes `held`, in the line at its received time; the others are heads.
 * The lines are locked first (src/db/orderingLanes.ts), so a head settling
 * on another node cannot miss a row held here.
 */
export async function placeInLines(db: Db, rows: AttemptInsert[]): Promise<void> {
  const lined = rows.filter((r) => r.orderingLane);
  if (lined.length === 0) return;
  // A line's order is (received_at, event id): within a batch the first of them is the head.
  const at = (r: AttemptInsert) => receivedOf.get(r) ?? r.scheduledAt;
  lined.sort((x, y) => (before(at(x), x.eventId, at(y), y.eventId) ? -1 : before(at(y), y.eventId, at(x), x.eventId) ? 1 : 0));
  const lanes = lined.map((r) => r.orderingLane!);
  await lockLanes(db, lanes);
  const occupied = await occupiedLanes(db, lanes);
  // Events received on two nodes at nearly the same time may be routed in the other order: a head not
  // yet tried gives its place to a row received before it.
  const heads = await untriedHeads(db, [...occupied]);
  for (const r of lined) {
    const lane = r.orderingLane!;
    if (!occupied.has(lane)) {
      occupied.add(lane);
      continue;
    }
    const head = heads.get(lane);
    heads.delete(lane);
    if (head && before(at(r), r.eventId, head.receivedAt, head.eventId) && (await demoteHead(db, head))) continue;
    r.status = "held";
    r.scheduledAt = at(r);
  }
}

const before = (at: string, id: string, thanAt: string, thanId: string) => at < thanAt || (at === thanAt && id < thanId);

/**
 * Inside the recording transaction: these lines' heads settled; the next row
 * of each is queued, or, with `claim`, claimed for the worker that settled
 * them (src/db/orderingLanes.ts, claimNextHeads) and answered.
 */
export async function moveLinesOn(db: Db, lanes: ReadonlySet<string>, now: string, claim?: HeadClaim): Promise<{ queued: number; claimed: AttemptRow[] }> {
  if (lanes.size === 0) return { queued: 0, claimed: [] };
  await lockLanes(db, lanes);
  if (claim) return { queued: 0, claimed: await claimNextHeads(db, lanes, now, claim) };
  return { queued: await promoteHeadsAll(db, lanes, now), claimed: [] };
}

/** What clearing a chain's DLQ flag found of its line (redrive, manual retry). */
export interface ClearedDlq {
  lane: string | null;
  key: string | null;
  hold: number;
}

/**
 * A redrive or manual retry cleared a chain's DLQ flag. When that row was
 * the head blocking its line (on_dlq `block`), the new try takes its place
 * as the line's head, so the line moves on once it settles; without a new
 * try (one is already outstanding) the line moves on now.
 */
export async function resumeLine(db: Db, cleared: readonly ClearedDlq[], next: AttemptInsert | null, now: string): Promise<void> {
  const head = cleared.find((c) => c.lane !== null && c.hold === 1);
  if (!head) return;
  await lockLanes(db, [head.lane!]);
  if (next) {
    next.orderingLane = head.lane;
    next.orderingKey = head.key;
    next.orderingHold = 1;
  } else await promoteHeads(db, [head.lane!], now);
}

/** Columns to read back when clearing a DLQ flag, for resumeLine. */
export const clearedDlqColumns = { lane: a.orderingLane, key: a.orderingKey, hold: a.orderingHold };

/**
 * The safety net (the cluster's scheduler, every minute): lines whose head
 * is gone without a recorded outcome move on. Answers how many rows it queued.
 */
export async function sweepHeadlessLines(deps: Pick<Deps, "db" | "clock">): Promise<number> {
  const lanes = await headlessLanes(deps.db, MAX_ORDERING_LINES);
  if (lanes.length === 0) return 0;
  return transaction(deps.db, async (tx) => {
    await lockLanes(tx, lanes);
    return promoteHeads(tx, lanes, iso(deps.clock.now()));
  });
}

/** Where an ordered target's rows are: a connection's, or (connection null) an application endpoint's destination's. */
export type OrderingTarget = { connectionId: string } | { destinationId: string };

const targetOf = (t: OrderingTarget): SQL =>
  "connectionId" in t ? eq(a.connectionId, t.connectionId) : and(eq(a.destinationId, t.destinationId), isNull(a.connectionId))!;
const laneTarget = (t: OrderingTarget) => ("connectionId" in t ? t.connectionId : t.destinationId);

/** The most lines one listing answers: the oldest waiting first. */
export const MAX_ORDERING_LINES = 1000;

export interface OrderingLine {
  key: string | null;
  head_attempt_id: string | null;
  waiting: number;
  since: string;
  blocked: boolean;
}

/**
 * The lines of a target that wait or are blocked: their head (queued,
 * delivering, or a blocking DLQ attempt), how many rows are held behind it,
 * since when (the oldest held row's received time, or the blocking head's
 * DLQ time). One grouped read of the target's live line rows (attempts_lane).
 */
export async function listOrderingLines(db: Db, target: OrderingTarget): Promise<OrderingLine[]> {
  const held = sql`CASE WHEN ${a.status} = 'held' THEN 1 ELSE 0 END`;
  const blocking = sql`CASE WHEN ${a.isDlq} = 1 AND ${a.orderingHold} = 1 THEN 1 ELSE 0 END`;
  const rows = await db
    .select({
      lane: a.orderingLane,
      key: a.orderingKey,
      waiting: sql<number>`sum(${held})`.mapWith(Number),
      blocked: sql<number>`max(${blocking})`.mapWith(Number),
      heldSince: sql<string | null>`min(CASE WHEN ${a.status} = 'held' THEN ${a.scheduledAt} END)`,
      head: sql<string | null>`max(CASE WHEN ${a.status} != 'held' THEN ${a.id} END)`,
      headSince: sql<string | null>`max(CASE WHEN ${a.status} != 'held' THEN coalesce(${a.dlqAt}, ${a.createdAt}) END)`,
    })
    .from(a)
    .where(
      and(
        targetOf(target),
        LANE_LIVE,
      ),
    )
    .groupBy(a.orderingLane, a.orderingKey)
    .having(sql`sum(${held}) > 0 OR max(${blocking}) = 1`)
    .orderBy(sql`min(${a.scheduledAt})`)
    .limit(MAX_ORDERING_LINES);
  return rows.map((r) => ({
    key: r.key,
    head_attempt_id: r.head,
    waiting: r.waiting,
    since: (r.blocked === 1 ? r.headSince : r.heldSince) ?? r.headSince ?? "",
    blocked: r.blocked === 1,
  }));
}

/**
 * Moves a blocked line on: its head stays in the DLQ (still redrivable) but
 * no longer holds the line, and the next held row is queued. A line that is
 * not blocked is a 409: its head is in flight or waiting for its retry.
 */
export async function skipOrderingLine(deps: Deps, scope: Scope, target: OrderingTarget, resource: { type: string; id: string }, rawKey: string | null) {
  const key = rawKey === null ? null : cleanKey(rawKey);
  const lane = orderingLane(laneTarget(target), key);
  const now = iso(deps.clock.now());
  const result = await transaction(deps.db, async (tx) => {
    await lockLanes(tx, [lane]);
    const skipped = await tx
      .update(a)
      .set({ orderingHold: 0 })
      .where(and(targetOf(target), eq(a.orderingLane, lane), eq(a.isDlq, 1), eq(a.orderingHold, 1)))
      .returning({ id: a.id });
    if (skipped.length === 0) throw new AppError("conflict", `the key ${JSON.stringify(key)} is not blocked`);
    await promoteHeads(tx, [lane], now);
    await recordAudit(deps, scope, {
      action: "skip",
      resourceType: resource.type,
      resourceId: resource.id,
      after: { key, head_attempt_id: skipped[0]!.id },
    });
    return { key, skipped_attempt_id: skipped[0]!.id };
  });
  deps.bus.publish({ type: "delivery.queued" });
  return result;
}

/** GET /v1/connections/{id}/ordering. */
export async function connectionOrdering(deps: Deps, scope: Scope, rawId: string) {
  const { connection } = await getConnection(deps, scope, rawId);
  return { keys: await listOrderingLines(deps.db, { connectionId: connection.id }) };
}

/** POST /v1/connections/{id}/ordering/skip. */
export async function skipConnectionKey(deps: Deps, scope: Scope, rawId: string, key: string | null) {
  const { connection } = await getConnection(deps, scope, rawId);
  return skipOrderingLine(deps, scope, { connectionId: connection.id }, { type: "connection", id: connection.id }, key);
}
