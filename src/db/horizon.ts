import { dialectOf } from "./dialect";
import type { Db } from "./db";

/**
 * How far behind the clock a reader that walks events forward in received
 * order (received_at, id) stays, so it never passes an event that commits
 * later with an earlier received_at.
 *
 * SQLite: one process writes, and a reader inside its write transaction
 * sees every writer done, so only the clock's current millisecond is left
 * open (0 here; the builder holds that millisecond back itself).
 *
 * PostgreSQL: every node stamps received_at before its own commit, by its
 * own clock. A row stamped at t on node B may commit up to D later (its
 * ingest transaction) and B's clock may trail by S: a reader that stops at
 * now − H never passes it as long as H > D + S. Two seconds covers a group
 * commit that stalls for over a second and clocks kept by NTP
 * (docs/scaling.md, "Ordered readers").
 */
export const POSTGRES_READ_HORIZON_MS = 2_000;

export function readHorizonMs(db: Db): number {
  return dialectOf(db) === "postgres" ? POSTGRES_READ_HORIZON_MS : 0;
}

/** The received_at (ISO) before which events are final for a forward reader now. */
export function readHorizon(db: Db, now: Date): string {
  return new Date(now.getTime() - readHorizonMs(db)).toISOString();
}
