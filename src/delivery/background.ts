import type { Gauge } from "prom-client";
import { FilterRuleCache } from "../domain/deliveries";
import type { Deps } from "../domain/deps";
import type { BusMessage } from "../core/bus";
import { pruneExpiredJobs } from "../domain/jobs";
import { sweepHeadlessLines } from "../domain/ordering";
import type { BackgroundContext } from "../runtime/context";
import { every, type BackgroundTask } from "../core/tasks";
import { wakeable } from "../core/wakeable";
import { whileScheduler } from "../cluster/schedulerLease";
import { startJobRunner } from "./jobRunner";
import { queueStats, releaseClaimsOfGoneNodes } from "./queue";
import { onCommit } from "../db/transaction";
import { ingestRouting, releaseHeldEvents, routePendingEvents, ROUTE_BATCH } from "./router";
import { startDeliveryWorker } from "./worker";
import { fromAnotherNode } from "../live/clusterBus";
import { errorMessage } from "../contracts/errors";

/**
 * Everything delivery runs beside HTTP: the router (events → queued
 * attempts), the worker pool, and on the cluster's scheduler the job runner
 * (replay, bulk retry, redrive) and job pruning. The bus wakes each part; slow polls are the safety net.
 * Stop order matters: intake first (router, jobs), then the worker drains
 * what is in flight.
 */
export interface DeliveryWorkOptions {
  /** Pause between replay batches (the spec's one second). */
  replayPauseMs?: number;
}

/**
 * Wakes from the bus arrive once per ingested event; waiting this long turns
 * a burst into one routing transaction and one claim. A few ms of lag out of
 * the 20 ms p50 budget, for several times fewer write transactions under load.
 */
const COALESCE_MS = 2;

/**
 * How often each node hands back the claims of gone nodes (and expired
 * leases): a dead node's rows are delivered by the survivors within
 * NODE_TIMEOUT_MS plus this. Every node runs it; SKIP LOCKED keeps two
 * from waiting on each other, and a row is handed back once.
 */
const RELEASE_GONE_EVERY_MS = 3000;

export function startDeliveryWork(ctx: BackgroundContext, opts: DeliveryWorkOptions = {}): BackgroundTask[] {
  const { config, logger, metrics } = ctx;
  // The safety-net poll of the router, worker and job runner.
  const pollMs = ctx.pollMs ?? 5000;
  // Messages the delivery parts publish themselves (an event delivered, ignored or released) are
  // for the UI and the CLI; the router must not wake for them: it has already done that work.
  const own = new WeakSet<BusMessage>();
  const deps: Deps = {
    ...ctx.deps,
    bus: {
      publish: (m) => {
        own.add(m);
        ctx.deps.bus.publish(m);
      },
      subscribe: (listener) => ctx.deps.bus.subscribe(listener),
    },
  };

  const rules = new FilterRuleCache();
  let releaseHeld = true; // at start-up: sources may have been resumed while the process was down
  const router = wakeable(
    "delivery-router",
    async () => {
      if (releaseHeld) {
        releaseHeld = false;
        await releaseHeldEvents(deps);
      }
      return (await routePendingEvents(deps, { rules, logger })) === ROUTE_BATCH;
    },
    { pollMs, logger, coalesceMs: COALESCE_MS },
  );
  // Events this process stores are routed inside ingest's own group commit. The router above
  // takes the rest: held events released, events a CLI stored in local mode (the poll), and
  // any batch whose routing failed.
  const stopRoutingAtIngest = deps.store.ingest.start({
    routeStored: {
      begin: (sourceIds) => ingestRouting(deps, sourceIds, rules, logger, () => router.wake()),
      failed: (error) => {
        logger.error("routing at ingest failed; the router takes these events", { error: errorMessage(error) });
        // Once the events are committed unrouted, for the router to find.
        onCommit(deps.db, () => router.wake());
      },
    },
  });
  const routerPoll = setInterval(() => {
    releaseHeld = true;
    router.wake();
  }, pollMs);
  routerPoll.unref?.();

  // Jobs and their pruning are cluster-wide: one runner, on the scheduler, so no job runs twice at once.
  const jobsRunner = whileScheduler(ctx.lease, "job-runner", () => [startJobRunner(deps, { logger, pollMs, pauseMs: opts.replayPauseMs })]);
  const pruning = whileScheduler(ctx.lease, "job-pruning", () => [every("job-pruning", 3600_000, () => pruneExpiredJobs(deps), logger)]);
  // Ordered lines whose head went without an outcome (docs/delivery.md, "Ordered delivery").
  const lineSweep = whileScheduler(ctx.lease, "ordering-sweep", () => [
    every(
      "ordering-sweep",
      60_000,
      async () => {
        if ((await sweepHeadlessLines(deps)) > 0) worker.wake();
      },
      logger,
    ),
  ]);
  const worker = startDeliveryWorker(deps, {
    concurrency: config.deliveryConcurrency,
    logger,
    metrics,
    spans: ctx.spans,
    propagateTrace: config.otelPropagate,
    pollMs,
    coalesceMs: COALESCE_MS,
    onJobsSettled: (ids) => jobsRunner.current().forEach((runner) => runner.settled(ids)),
  });

  const unsubscribe = deps.bus.subscribe((m) => {
    switch (m.type) {
      case "event.created":
        // Routed in the transaction that stored it (deps.store.ingest.start above).
        break;
      case "event.updated":
        // Another node's router routes what its own changes released: any node's router reads the same table.
        if (!own.has(m) && !fromAnotherNode(m)) router.wake();
        break;
      case "source.updated":
        releaseHeld = true;
        router.wake();
        break;
      case "delivery.queued":
        worker.wake();
        break;
      case "job.created":
        jobsRunner.current().forEach((runner) => runner.wake());
        break;
      case "bus.resumed":
        // What other nodes announced while this one was not listening: look for it now.
        releaseHeld = true;
        router.wake();
        worker.wake();
        jobsRunner.current().forEach((runner) => runner.wake());
        break;
    }
  });

  // Gauges read on scrape, so /metrics is never stale.
  collectOnScrape(metrics.queueDepth, async () => (await queueStats(deps.db, deps.clock.now())).depth);
  collectOnScrape(metrics.oldestPendingSeconds, async () => (await queueStats(deps.db, deps.clock.now())).oldestDueSeconds);

  const reaper = every(
    "claims-of-gone-nodes",
    RELEASE_GONE_EVERY_MS,
    async () => {
      const released = await releaseClaimsOfGoneNodes(deps.db, deps.clock.now());
      if (released === 0) return;
      logger.info("re-queued deliveries claimed by a node that is gone", { count: released });
      worker.wake();
    },
    logger,
  );
  const intake: BackgroundTask = {
    name: "delivery-intake",
    running: () => router.running(),
    async stop() {
      unsubscribe();
      stopRoutingAtIngest();
      clearInterval(routerPoll);
      await Promise.all([router.stop(), jobsRunner.stop()]);
    },
  };
  // One task so the order holds: intake stops, then in-flight deliveries finish.
  const all: BackgroundTask = {
    name: "delivery",
    running: () => intake.running() && worker.running() && jobsRunner.running() && pruning.running(),
    async stop() {
      await intake.stop();
      await Promise.all([worker.stop(), pruning.stop(), lineSweep.stop(), reaper.stop()]);
    },
  };
  return [all];
}

/** prom-client calls a gauge's `collect` before every scrape. */
function collectOnScrape(gauge: Gauge, read: () => Promise<number>) {
  (gauge as unknown as { collect: () => Promise<void> }).collect = async () => {
    try {
      gauge.set(await read());
    } catch {
      // The database may be closing; keep the last value.
    }
  };
}
