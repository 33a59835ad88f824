import type { PlainSpanStarter } from "../observability/plainSpan";
import type { Deps } from "../domain/deps";
import type { Logger } from "../observability/logger";
import type { Metrics } from "../observability/metrics";
import type { BackgroundTask } from "../core/tasks";
import { inWriteTurn } from "../db/writeTurn";
import { claimBatch, LEASE_MS, loadClaimedEvents, nextDueAt, releaseOrphanedClaims, type AttemptRow } from "./queue";
import { iso } from "../core/clock";
import { DestinationPacer } from "./rateLimiter";
import { shareRatesAmongLiveNodes } from "./rateSharing";
import { DeliveryCaches } from "./deliveryCaches";
import { deliver, type Claimed, type DeliveryContext } from "./deliver";
import { OutcomeBatch } from "./outcomeBatch";
import { DrainCollector } from "./drainCollector";
import { errorMessage } from "../contracts/errors";

/**
 * The delivery worker pool: up to `concurrency` requests in flight at once.
 *
 * The pump claims due rows ahead into a ready list, so the rows a slot
 * starts next are already claimed and loaded: a finished delivery starts the
 * next ready row at once, and no claim, event read or commit sits between one
 * request and the next. The pump records every outcome that finished since it
 * last ran and, when the ready list runs low, claims the next batch, in one
 * write transaction (group commit): the turn's, which ingest's group commit
 * shares (src/db/writeTurn.ts). While enough rows are ready, outcomes are
 * recorded a few milliseconds later in bigger batches: claiming, recording
 * and committing cost less per row in a bigger transaction (a commit writes
 * the pages its rows share once), which is most of a delivery's CPU when
 * a backlog drains (docs/performance.md, sixth round). When an ordered
 * line's head settles, the recording itself claims the line's next row for
 * this worker (src/db/orderingLanes.ts, claimNextHeads), which starts once
 * the transaction has committed: one key with a backlog costs one write
 * transaction a delivery. Rows claimed and not
 * yet recorded (sending, awaiting their record, ready) never exceed
 * HELD_PER_SLOT times the concurrency; only those sent and not yet recorded
 * can be delivered twice after a crash.
 * It is woken by the bus (`delivery.queued`), by finished deliveries, by a
 * timer set for the next scheduled retry or rate-limit slot, and by a slow
 * safety poll; never by a tight loop.
 */
export interface DeliveryWorkerOptions {
  concurrency: number;
  logger: Logger;
  metrics?: Metrics;
  /** Set when tracing is on: each attempt is a CLIENT span in its event's trace (./attemptSpan.ts). */
  spans?: PlainSpanStarter;
  /** HOOKRELAY_OTEL_PROPAGATE: destinations receive each attempt's traceparent. */
  propagateTrace?: boolean;
  /** Safety poll: catches rows queued by another process (CLI local mode). */
  pollMs?: number;
  /** How long edits to a destination or connection may take to reach deliveries. */
  cacheMs?: number;
  /** A wake from the bus claims this much later, so a burst of wakes becomes one claim over a batch. */
  coalesceMs?: number;
  /** Told which replay jobs had a delivery settle, after it is recorded. */
  onJobsSettled?: (jobIds: string[]) => void;
}

export interface DeliveryWorker extends BackgroundTask {
  wake(): void;
  /** Deliveries in flight now. */
  active(): number;
}

/**
 * Rows a worker holds per sending slot: one sending, its share of a ready
 * list that keeps every slot busy through a pump, and of outcomes that wait
 * for a bigger commit.
 */
export const HELD_PER_SLOT = 4;
const NO_DESTINATIONS: ReadonlySet<string> = new Set();
/** How long a finished delivery's outcome may wait for others to share its commit, while the ready list is full. */
const RECORD_COALESCE_MS = 2;

export function startDeliveryWorker(deps: Deps, opts: DeliveryWorkerOptions): DeliveryWorker {
  const { db, clock } = deps;
  const logger = opts.logger;
  const pollMs = opts.pollMs ?? 5000;
  /** Rows held at most (in flight, awaiting their record, and ready). */
  const readyTarget = opts.concurrency * HELD_PER_SLOT;
  const pacer = new DestinationPacer();
  // Rates are the cluster's: with several nodes sharing the store each sends its share (rateLimiter.ts).
  const sharing = deps.store.shared ? shareRatesAmongLiveNodes(deps, pacer, logger) : null;
  const caches = new DeliveryCaches(deps, opts.cacheMs ?? 1000);
  const unsubscribe = caches.followEdits(deps.bus);
  // What a drained backlog left behind goes back once the worker is idle (drainCollector.ts).
  const collector = new DrainCollector();
  const batch = new OutcomeBatch(deps, {
    logger,
    metrics: opts.metrics,
    onJobsSettled: opts.onJobsSettled,
    forgetDestination: (id) => caches.destinations.forget(id),
  });

  let stopped = false;
  let active = 0;
  const inFlight = new Set<Promise<void>>();
  /** Claimed and loaded, waiting for a free slot. */
  let ready: Claimed[] = [];
  /** The last claim found less than it asked for: claim again only when woken or when the timer fires. */
  let drained = false;
  /**
   * Counts wakes: a wake that comes while a claim runs may announce rows
   * that claim did not see, so that claim does not make the worker drained
   * (the wake would be lost until the poll).
   */
  let wakes = 0;
  const dueAgain = () => {
    drained = false;
    wakes++;
  };
  let pumping = false;
  /** The pump running now (while `pumping`): stop() awaits it. */
  let pumpRun: Promise<void> = Promise.resolve();
  let pumpAgain = false;
  let pumpTimer: ReturnType<typeof setTimeout> | null = null;
  let timer: ReturnType<typeof setTimeout> | null = null;
  /** When `timer` fires (clock time). */
  let timerAt = Infinity;
  /**
   * Rate-limited destinations a claim took one row of (a claim takes no more
   * of them): more of their rows may be due. Once that row's send takes its
   * slot, the worker claims again when the next slot comes. The claim that
   * took it may have gone idle before the slot was taken, and a slot that
   * has passed no longer holds a wake: without this, the rest would wait for
   * the safety poll.
   */
  const pacedClaims = new Set<string>();
  const slotTaken = (destinationId: string) => {
    if (pacedClaims.delete(destinationId)) wakeBy(pacer.freeAt(destinationId));
  };
  const sending: DeliveryContext = { deps, caches, pacer, metrics: opts.metrics, spans: opts.spans, propagateTrace: opts.propagateTrace, stopping: () => stopped, slotTaken };

  // A previous run of this process may have died mid-delivery: those rows are due again.
  // The first pump waits for this, so nothing is claimed before it.
  const orphansRequeued = releaseOrphanedClaims(db, clock.now()).then(
    (n) => void (n > 0 && logger.info("re-queued deliveries interrupted by the last shutdown", { count: n })),
    (err) => logger.error("re-queueing interrupted deliveries failed", { error: errorMessage(err) }),
  );

  function schedulePump(delayMs = 0) {
    if (stopped && active === 0 && batch.waiting() === 0 && ready.length === 0) return;
    if (delayMs > 0) {
      pumpTimer ??= setTimeout(() => {
        pumpTimer = null;
        schedulePump();
      }, delayMs);
      return;
    }
    if (pumpTimer) clearTimeout(pumpTimer);
    pumpTimer = null;
    if (pumping) {
      pumpAgain = true;
      return;
    }
    // At once: the pump's writes wait for the turn's write transaction anyway, which they share with ingest.
    pumpRun = pump();
  }

  function armTimer(at: number) {
    if (timer) clearTimeout(timer);
    if (stopped) return;
    const delay = Math.min(Math.max(at - clock.now().getTime(), 10), pollMs);
    timerAt = clock.now().getTime() + delay;
    timer = setTimeout(() => {
      timer = null;
      timerAt = Infinity;
      dueAgain();
      schedulePump();
    }, delay);
    timer.unref?.();
  }

  /** Claims again by `at` at the latest (sooner when the timer is set for sooner). */
  function wakeBy(at: number) {
    if (at < timerAt) armTimer(at);
  }

  async function pump() {
    if (pumping) {
      pumpAgain = true;
      return;
    }
    pumping = true;
    try {
      await orphansRequeued;
      do {
        pumpAgain = false;
        if (stopped) {
          // Rows claimed but never started go back to the queue.
          for (const c of ready) batch.handBack(c.row);
          ready = [];
        }
        // One write transaction records what finished and claims what comes next: the turn's, shared with ingest.
        let afterCommit: () => void = () => {};
        let want = 0;
        let heads: AttemptRow[] = [];
        let oneEach: ReadonlySet<string> = NO_DESTINATIONS;
        let wakesAtClaim = 0;
        let excludedUntil: number | null = null;
        const claim = await inWriteTurn(db, async () => {
          // An ordered line's next row is claimed right here when its head settles (a worker that is stopping leaves it queued).
          const now = clock.now();
          const recorded = await batch.record(dueAgain, stopped ? undefined : { lease: iso(new Date(now.getTime() + LEASE_MS)), claimedBy: deps.node.id });
          afterCommit = recorded.announce;
          heads = recorded.claimed;
          // Claims come in batches: once the ready list runs low, enough to hold HELD_PER_SLOT rows a slot again.
          want = stopped || drained || ready.length >= opts.concurrency ? 0 : Math.max(0, readyTarget - held() - ready.length - heads.length);
          if (want === 0) return { rows: [], complete: true };
          oneEach = pacer.rateLimited();
          wakesAtClaim = wakes;
          // The claim leaves out destinations without a slot now: it is due again at the first of their slots,
          // even when that has passed by the time the worker goes idle.
          excludedUntil = pacer.nextUnblockAt(now.getTime());
          return claimBatch(db, { now, limit: want, claimedBy: deps.node.id, exclude: pacer.blocked(now.getTime()), oneEach });
        });
        for (const row of claim.rows) if (oneEach.has(row.destinationId)) pacedClaims.add(row.destinationId);
        afterCommit();
        const rows = heads.length > 0 ? [...heads, ...claim.rows] : claim.rows;
        if (want > 0 && claim.rows.length < want) {
          // A claim that stopped part way round the destinations with rows waiting goes on in the next turn;
          // one that saw every due row it could take has drained what is due, unless a wake came meanwhile
          // (that wake's own pump claims again).
          if (!claim.complete) pumpAgain = true;
          else if (wakes === wakesAtClaim) drained = true;
        }
        if (rows.length > 0) {
          const claimedEvents = await loadClaimedEvents(db, rows);
          const eventById = new Map(claimedEvents.map((e) => [e.id, e]));
          const claimedAt = Date.now();
          // An event missing here was pruned by retention meanwhile: its attempts went with it (foreign key cascade).
          for (const row of rows) ready.push({ row, event: eventById.get(row.eventId) ?? null, claimedAt });
        }
        fill();
        if (stopped) break;
        if (drained && ready.length === 0) {
          if (active === 0 && batch.waiting() === 0) collector.idle();
          // Drained what is due: sleep until the next scheduled row or rate-limit slot.
          const next = await nextDueAt(db, clock.now());
          const unblock = pacer.nextUnblockAt(clock.now().getTime());
          const candidates = [next?.getTime(), unblock ?? undefined, excludedUntil ?? undefined, clock.now().getTime() + pollMs].filter((t): t is number => t !== undefined);
          // A wake asked for meanwhile (wakeBy) stands.
          armTimer(Math.min(...candidates, timerAt));
        }
      } while (pumpAgain && !stopped);
    } catch (err) {
      // Outcomes in that transaction are lost with it: their rows stay `delivering` and are
      // delivered again once their lease runs out or after a restart (at least once).
      logger.error("delivery pump failed", { error: errorMessage(err) });
      armTimer(clock.now().getTime() + 1000);
    } finally {
      pumping = false;
    }
    if (pumpAgain) schedulePump();
  }

  /** Starts ready rows while sending slots are free. */
  function fill() {
    while (active < opts.concurrency && ready.length > 0 && !stopped) start(ready.shift()!);
  }

  /** Claimed rows that are sending or whose outcome awaits its record (with the ready list, at most readyTarget). */
  function held(): number {
    return active + batch.waiting();
  }

  function start(claimed: Claimed) {
    const { row } = claimed;
    active++;
    collector.busy();
    const p: Promise<void> = deliver(sending, claimed)
      .then((delivered) => {
        if (delivered === "hand back") batch.handBack(row);
        else if (delivered) {
          batch.finish(delivered);
          collector.finished();
        }
      })
      .catch((err) => {
        // Unexpected (a bug or the database going away): hand the row back rather than lose it.
        logger.error("delivery failed unexpectedly", { attempt_id: row.id, error: errorMessage(err) });
        batch.handBack(row);
      })
      .finally(() => {
        active--;
        inFlight.delete(p);
        // The next ready row starts now, not after the outcome's commit: the receiver and the HTTP
        // client thread keep working while the pump writes (docs/performance.md, fourth round).
        fill();
        // Record at once when rows are needed or many outcomes wait; else let a few more join the commit.
        const recordNow = ready.length < opts.concurrency || batch.waiting() >= opts.concurrency * 2;
        schedulePump(recordNow ? 0 : RECORD_COALESCE_MS);
      });
    inFlight.add(p);
  }

  const task: DeliveryWorker = {
    name: "delivery-worker",
    running: () => !stopped,
    wake: () => {
      dueAgain();
      schedulePump(opts.coalesceMs ?? 0);
    },
    active: () => active,
    async stop() {
      stopped = true;
      collector.busy();
      unsubscribe();
      if (sharing) clearInterval(sharing);
      if (timer) clearTimeout(timer);
      if (pumpTimer) clearTimeout(pumpTimer);
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
      // A pump that ends with more to do starts the next one itself: wait for the last.
      while (pumping) await pumpRun;
      for (const c of ready) batch.handBack(c.row);
      ready = [];
      try {
        (await inWriteTurn(db, () => batch.record(dueAgain))).announce();
      } catch (err) {
        logger.error("recording the last delivery outcomes failed; they are delivered again after the restart", { error: errorMessage(err) });
      }
    },
  };
  schedulePump();
  return task;
}
