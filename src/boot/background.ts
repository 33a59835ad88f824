import { startCatalogWork } from "../catalog/background";
import { startAlertWork } from "../alerts/background";
import { heartbeat, pruneGoneNodes } from "../cluster/nodes";
import { HEARTBEAT_INTERVAL_MS } from "../core/node";
import { whileScheduler, type SchedulerLease } from "../cluster/schedulerLease";
import type { Config } from "../config/config";
import { startDeliveryWork } from "../delivery/background";
import type { Deps } from "../domain/deps";
import { deleteExpiredEphemeralSources, pruneOldAuditEntries, pruneOldChangelog, pruneOldEvents } from "../domain/retention";
import { pruneExpiredSessions } from "../domain/sessions";
import type { Logger } from "../observability/logger";
import type { Metrics } from "../observability/metrics";
import { startBackupSchedule } from "./backupSchedule";
import type { BackgroundContext } from "../runtime/context";
import { every, type BackgroundTask } from "../core/tasks";

/**
 * Everything `serve` runs beside HTTP: each part adds its workers and
 * schedulers here. Work every node shares (ingest routing, deliveries, the
 * heartbeat) runs everywhere; the cluster-wide jobs run on the scheduler.
 */
export function startBackgroundWork(ctx: BackgroundContext): BackgroundTask[] {
  const { deps, logger } = ctx;
  return [
    ...startDeliveryWork(ctx),
    ...startAlertWork(ctx),
    every("node-heartbeat", HEARTBEAT_INTERVAL_MS, () => heartbeat(deps.db, deps.clock, deps.node), logger),
    whileScheduler(ctx.lease, "cluster-jobs", () => [
      ...startCatalogWork(ctx),
      every("session-pruning", 3600_000, () => pruneExpiredSessions(deps), logger),
      every("event-retention", 3600_000, async () => {
        await pruneOldEvents(deps);
        await pruneOldChangelog(deps);
        await pruneOldAuditEntries(deps);
      }, logger),
      every("ephemeral-source-cleanup", 300_000, () => deleteExpiredEphemeralSources(deps), logger),
      every("node-pruning", 3600_000, () => pruneGoneNodes(deps.db, deps.clock.now()), logger),
      ...startBackupSchedule(ctx),
    ]),
  ];
}
