/**
 * hookrelay's PostgreSQL advisory lock keys, one bigint each, in one place so
 * two never collide (the migrations' is MIGRATION_LOCK in open.ts, 0x686f6f6b).
 * Advisory locks are per database: two hookrelay databases on one server do
 * not share them.
 */
/** Held for the life of a session by the cluster's scheduler (src/cluster/schedulerLease.ts). */
export const SCHEDULER_LOCK = 0x686f6f6c;
/** Transaction locks taken by `exclusive(db, name, …)` (src/db/exclusive.ts). */
export const EXCLUSIVE_LOCKS = {
  bootstrap: 0x686f6f6d,
} as const;
export type ExclusiveName = keyof typeof EXCLUSIVE_LOCKS;
