import type { BackgroundContext } from "../runtime/context";
import type { BackgroundTask } from "../core/tasks";
import { wakeable } from "../core/wakeable";
import { readHorizonMs } from "../db/horizon";
import { buildAll } from "./builder";

export interface CatalogWorkOptions {
  /** Safety-net poll: picks up events no bus announced (stored by a CLI in local mode). */
  pollMs?: number;
  /** Wakes arrive once per stored event; a burst becomes one pass over bigger batches. */
  coalesceMs?: number;
  /** While events arrive and the collection is fresh, the share of the time the builder may take (see below). */
  busyShare?: number;
}

/**
 * When the newest events were left for a later pass (see builder.ts): how
 * soon that pass comes. SQLite holds back one millisecond; PostgreSQL a read
 * horizon of seconds (src/db/horizon.ts), which a tenth of it retried often
 * enough without passes that find nothing new.
 */
const HELD_BACK_RETRY_MS = 10;
/** Ingest counts as active this long after its last stored event. */
const INGEST_ACTIVE_MS = 1000;
/**
 * Ingest and the builder share one thread. While events arrive, the builder
 * works at most a share of the time and pauses in between, so a collection
 * costs ingest little of its throughput (docs/decisions.md D14: within 10%). The share
 * follows the lag: small while the collection is fresh (a burst is absorbed
 * and built right after it), larger once the collection has been behind for
 * longer than FRESHNESS_MS, so a load that never eases still leaves it at a
 * bounded distance. Without arriving events (a backfill, a quiet moment) it
 * works at full speed.
 */
const FRESH_SHARE = 0.02;
const BEHIND_SHARE = 0.25;
const FRESHNESS_MS = 30_000;

/** The builder's share of the time while events arrive, given how long it has been behind (null: it is not). */
export function builderShare(behindForMs: number | null, fresh = FRESH_SHARE): number {
  return behindForMs !== null && behindForMs > FRESHNESS_MS ? Math.max(fresh, BEHIND_SHARE) : fresh;
}

/**
 * The collection builder beside HTTP: woken by the bus when an event is
 * stored on a source that has a collection, or when a collection is
 * created, rebuilt or deleted; never on the ingest path itself.
 */
export function startCatalogWork(ctx: BackgroundContext, opts: CatalogWorkOptions = {}): BackgroundTask[] {
  const { deps, logger } = ctx;
  let behindSince: number | null = null;
  let watched = new Set<string>();
  let lastEventAt = -Infinity;
  let resumeAt = 0;
  let timer: ReturnType<typeof setTimeout> | null = null;
  const heldBackRetryMs = Math.max(HELD_BACK_RETRY_MS, readHorizonMs(deps.db) / 10);
  const wakeIn = (ms: number) => {
    if (timer) return;
    timer = setTimeout(() => {
      timer = null;
      builder.wake();
    }, ms);
    timer.unref?.();
  };

  const builder = wakeable(
    "collection-builder",
    async () => {
      const now = performance.now();
      if (now < resumeAt) {
        wakeIn(resumeAt - now);
        return false;
      }
      const pass = await buildAll(deps, logger);
      watched = pass.sources;
      const at = performance.now();
      behindSince = pass.more ? (behindSince ?? at) : null;
      if (pass.handled > 0 && at - lastEventAt < INGEST_ACTIVE_MS) {
        const share = builderShare(behindSince === null ? null : at - behindSince, opts.busyShare);
        const pauseMs = (pass.busyMs * (1 - share)) / share;
        resumeAt = performance.now() + pauseMs;
        if (pass.more || pass.heldBack) wakeIn(Math.max(pauseMs, pass.heldBack ? heldBackRetryMs : 0));
        return false;
      }
      if (pass.heldBack) wakeIn(heldBackRetryMs);
      return pass.more;
    },
    { pollMs: opts.pollMs ?? 5000, logger, coalesceMs: opts.coalesceMs ?? 20 },
  );
  const unsubscribe = deps.bus.subscribe((m) => {
    if (m.type === "event.created") {
      lastEventAt = performance.now();
      if (watched.has(m.sourceId)) builder.wake();
    } else if (m.type === "collection.updated" || m.type === "bus.resumed") {
      resumeAt = 0;
      builder.wake();
    }
  });
  return [
    {
      name: builder.name,
      running: builder.running,
      async stop() {
        unsubscribe();
        if (timer) clearTimeout(timer);
        await builder.stop();
      },
    },
  ];
}
