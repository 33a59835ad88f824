import type { ReservedSQL, SQL } from "bun";
import { sql } from "drizzle-orm";
import type { Db } from "../db";
import { pgRows } from "./rows";

/**
 * A session-level advisory lock held on a connection of its own, reserved
 * from the pool. PostgreSQL frees the lock when that session ends: a clean
 * close, the holder's process dying (its socket closes), or the server
 * ending a session that went quiet for `idleTimeoutMs` (a holder whose
 * machine vanished without closing the socket; the holder's own checks
 * keep it from ever being that quiet).
 */
export interface LockSession {
  /**
   * Whether this session holds the lock, taking it if it is free; a held
   * lock is checked by a round trip. Throws when the connection is broken:
   * the lock is then lost (close this session and open another).
   */
  hold(): Promise<boolean>;
  /** Ends the session, and so frees the lock if it held it. */
  close(): Promise<void>;
}

/** The session's name in pg_stat_activity: how GET /v1/cluster tells which node holds a lock. */
const APPLICATION_PREFIX = "hookrelay ";

export async function openLockSession(client: SQL, key: number, opts: { owner: string; idleTimeoutMs: number }): Promise<LockSession> {
  const session: ReservedSQL = await client.reserve();
  let held = false;
  try {
    // A reserved connection's settings stay with it; it is closed, never handed back to the pool.
    await session`SELECT set_config('application_name', ${APPLICATION_PREFIX + opts.owner}, false), set_config('idle_session_timeout', ${String(opts.idleTimeoutMs)}, false)`;
  } catch (error) {
    await session.close().catch(() => {});
    throw error;
  }
  return {
    async hold() {
      if (held) {
        await session`SELECT 1`;
        return true;
      }
      const [row] = (await session`SELECT pg_try_advisory_lock(${key}) AS taken`) as { taken: boolean }[];
      held = row!.taken;
      return held;
    },
    async close() {
      held = false;
      await session.close().catch(() => {});
    },
  };
}

/** The owner (as given to openLockSession) of the session holding the advisory lock `key` in this database, if any. */
export async function lockOwner(db: Db, key: number): Promise<string | null> {
  const rows = await pgRows<{ name: string | null }>(
    db,
    sql`
    SELECT a.application_name AS name
    FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
    WHERE l.locktype = 'advisory' AND l.granted
      AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
      AND l.classid = ${Math.floor(key / 2 ** 32)} AND l.objid = ${key % 2 ** 32} AND l.objsubid = 1
    LIMIT 1`,
  );
  const name = rows[0]?.name;
  return name?.startsWith(APPLICATION_PREFIX) ? name.slice(APPLICATION_PREFIX.length) : null;
}
