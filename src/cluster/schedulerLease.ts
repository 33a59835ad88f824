import type { Db } from "../db/db";
import type { Store } from "../db/store";
import { SCHEDULER_LOCK } from "../db/pg/lockKeys";
import { lockOwner, openLockSession, type LockSession } from "../db/pg/sessionLock";
import type { Logger } from "../observability/logger";
import type { BackgroundTask } from "../core/tasks";
import type { NodeRow } from "./nodes";
import type { Deps } from "../domain/deps";
import type { ThisNode } from "../core/node";
import { errorMessage } from "../contracts/errors";

/**
 * The scheduler: the one node that runs the cluster-wide jobs (retention,
 * session pruning, ephemeral source cleanup, scheduled backups, the job
 * runner, periodic alert evaluation, collection builders, forgetting gone
 * nodes). Two nodes running them at once would do the work twice (a replay
 * job queued twice, two builders appending one collection).
 *
 * On PostgreSQL the lease is a session advisory lock held on a connection of
 * its own. Every node tries to take it every LEASE_RETRY_MS; the holder
 * checks its connection as often. When the holder dies its connection
 * closes and PostgreSQL frees the lock at once; when its machine vanishes
 * without closing the socket, the server ends the quiet session after
 * LEASE_SESSION_TIMEOUT_MS. Either way a survivor holds the lease within
 * LEASE_TAKEOVER_MS. A holder whose connection breaks stops being the
 * scheduler (its jobs stop) until it takes the lease again.
 *
 * On SQLite there is one node, and it always holds the lease.
 */
export const LEASE_RETRY_MS = 2_000;
export const LEASE_SESSION_TIMEOUT_MS = 10_000;
/** The bound on a takeover after the holder died: the server's timeout, then the next try. */
export const LEASE_TAKEOVER_MS = LEASE_SESSION_TIMEOUT_MS + LEASE_RETRY_MS;

export interface SchedulerLease {
  held(): boolean;
  /** Calls `listener` with the current state now, and again on every change. */
  watch(listener: (held: boolean) => void): () => void;
  /** Gives the lease up (another node takes it at its next try) and stops trying. */
  stop(): Promise<void>;
}

export interface LeaseOptions {
  logger: Logger;
  retryMs?: number;
  sessionTimeoutMs?: number;
}

/** Starts contending for the lease; resolves after the first try (a lone node is the scheduler from the start). */
export async function startSchedulerLease(store: Store, node: ThisNode, opts: LeaseOptions): Promise<SchedulerLease> {
  if (!store.pg) return alwaysHeld();
  const client = store.pg.client;
  const { logger } = opts;
  const retryMs = opts.retryMs ?? LEASE_RETRY_MS;
  const listeners = new Set<(held: boolean) => void>();
  let held = false;
  let session: LockSession | null = null;
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let trying: Promise<void> | null = null;

  const become = (now: boolean, why?: string) => {
    if (now === held) return;
    held = now;
    if (now) logger.info("this node is now the scheduler (runs the cluster-wide jobs)", { node_id: node.id });
    else logger.warn("this node is no longer the scheduler", { node_id: node.id, ...(why ? { reason: why } : {}) });
    for (const listener of [...listeners]) listener(now);
  };

  async function attempt() {
    try {
      session ??= await openLockSession(client, SCHEDULER_LOCK, { owner: node.id, idleTimeoutMs: opts.sessionTimeoutMs ?? LEASE_SESSION_TIMEOUT_MS });
      become(await session.hold());
    } catch (error) {
      // The connection broke (or none could be made): whatever this session held is gone.
      const lost = session;
      session = null;
      await lost?.close();
      become(false, errorMessage(error));
    }
  }

  function schedule() {
    if (stopped) return;
    timer = setTimeout(() => {
      trying = attempt().finally(() => {
        trying = null;
        schedule();
      });
    }, retryMs);
    timer.unref?.();
  }

  await attempt();
  schedule();
  return {
    held: () => held,
    watch(listener) {
      listeners.add(listener);
      listener(held);
      return () => listeners.delete(listener);
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await trying;
      await session?.close();
      session = null;
      become(false, "stopping");
      listeners.clear();
    },
  };
}

function alwaysHeld(): SchedulerLease {
  return {
    held: () => true,
    watch(listener) {
      listener(true);
      return () => {};
    },
    async stop() {},
  };
}

/**
 * Which of the live nodes is the scheduler, for GET /v1/cluster. PostgreSQL
 * knows: the session holding the lock is named after its node
 * (pg_stat_activity.application_name). On SQLite the one serve of the data
 * dir is (the newest live row: a predecessor killed a moment ago may still
 * look live).
 */
export async function schedulerNodeId({ db, store }: Pick<Deps, "db" | "store">, live: NodeRow[]): Promise<string | null> {
  if (store.shared) return lockOwner(db, SCHEDULER_LOCK);
  return live.at(-1)?.id ?? null;
}

/**
 * Tasks that run only while this node is the scheduler: started when it
 * takes the lease, stopped (their in-flight work finished) when it loses
 * it. `current()` is what runs now (empty while another node schedules).
 */
export interface SchedulerTasks<T extends BackgroundTask> extends BackgroundTask {
  current(): readonly T[];
}

export function whileScheduler<T extends BackgroundTask>(lease: SchedulerLease, name: string, start: () => T[]): SchedulerTasks<T> {
  let running: T[] = [];
  let stopped = false;
  // Starts and stops happen one after the other: a lease lost while its tasks start stops them after.
  let turn: Promise<void> = Promise.resolve();
  const stopAll = async () => {
    const those = running;
    running = [];
    await Promise.all(those.map((t) => t.stop()));
  };
  let pending = 0;
  const unwatch = lease.watch((held) => {
    if (held && pending === 0) {
      // Nothing is stopping: start now, not a tick later.
      if (!stopped && running.length === 0) running = start();
      return;
    }
    pending++;
    turn = turn
      .then(async () => {
        if (held && !stopped && running.length === 0) running = start();
        else if (!held) await stopAll();
      })
      .finally(() => pending--);
  });
  return {
    name,
    current: () => running,
    running: () => !stopped && running.every((t) => t.running()),
    async stop() {
      stopped = true;
      unwatch();
      await turn;
      await stopAll();
    },
  };
}
