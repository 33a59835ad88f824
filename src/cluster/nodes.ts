import { hostname } from "node:os";
import { and, asc, eq, gte, isNotNull, isNull, lt, or } from "drizzle-orm";
import type { Db } from "../db/db";
import { nodes } from "../db/schema";
import { iso } from "../core/clock";
import type { Clock } from "../core/clock";
import { NODE_FORGET_AFTER_MS, NODE_TIMEOUT_MS, type ThisNode } from "../core/node";

/**
 * Cluster membership (docs/decisions.md D13): every `serve` process has a row in `nodes`
 * and keeps its heartbeat fresh (src/core/node.ts has the timing). A node whose heartbeat is older than
 * NODE_TIMEOUT_MS is gone: it drops out of GET /v1/cluster, out of the
 * node count that shares rate limits, and the deliveries it had claimed go
 * back to the queue. On SQLite there is one node, the same way.
 */
export type NodeRow = typeof nodes.$inferSelect;

/** Writes this node's row at start-up (its first heartbeat). */
export async function registerNode(db: Db, clock: Clock, node: ThisNode): Promise<void> {
  const now = iso(clock.now());
  await db.insert(nodes).values({ id: node.id, version: node.version, hostname: hostname(), pid: process.pid, address: node.address, startedAt: now, lastHeartbeatAt: now, stoppedAt: null });
}

/** Refreshes this node's heartbeat (and address, once the port is known); re-creates the row if someone pruned it. */
export async function heartbeat(db: Db, clock: Clock, node: ThisNode): Promise<void> {
  const now = iso(clock.now());
  const updated = await db.update(nodes).set({ lastHeartbeatAt: now, address: node.address, stoppedAt: null }).where(eq(nodes.id, node.id)).returning({ id: nodes.id });
  if (updated.length === 0) await registerNode(db, clock, node);
}

/** A clean stop: the node leaves the live set at once instead of after its timeout. */
export async function markStopped(db: Db, clock: Clock, nodeId: string): Promise<void> {
  await db.update(nodes).set({ stoppedAt: iso(clock.now()) }).where(eq(nodes.id, nodeId));
}

const liveSince = (now: Date) => iso(new Date(now.getTime() - NODE_TIMEOUT_MS));

/** The nodes whose heartbeat is fresh and that have not stopped, oldest first. */
export async function liveNodes(db: Db, now: Date): Promise<NodeRow[]> {
  return db
    .select()
    .from(nodes)
    .where(and(gte(nodes.lastHeartbeatAt, liveSince(now)), isNull(nodes.stoppedAt)))
    .orderBy(asc(nodes.startedAt), asc(nodes.id));
}

/** Ids of nodes that are gone (late heartbeat, or stopped): their claims may be handed back. */
export async function goneNodeIds(db: Db, now: Date): Promise<string[]> {
  const rows = await db
    .select({ id: nodes.id })
    .from(nodes)
    .where(or(lt(nodes.lastHeartbeatAt, liveSince(now)), isNotNull(nodes.stoppedAt)));
  return rows.map((r) => r.id);
}

/** Forgets nodes gone for a day. */
export async function pruneGoneNodes(db: Db, now: Date): Promise<number> {
  const rows = await db
    .delete(nodes)
    .where(lt(nodes.lastHeartbeatAt, iso(new Date(now.getTime() - NODE_FORGET_AFTER_MS))))
    .returning({ id: nodes.id });
  return rows.length;
}
