import { startCatalogWork } from "../catalog/background";
import { startAlertWork } from "../alerts/background";
import type { Config } from "../config/config";
import { startDeliveryWork } from "../delivery/background";
import type { Deps } from "../domain/deps";
import { deleteExpiredEphemeralSources, pruneOldEvents } from "../domain/retention";
import { pruneExpiredSessions } from "../domain/sessions";
import type { Logger } from "../observability/logger";
import type { Metrics } from "../observability/metrics";
import { startBackupSchedule } from "./backupSchedule";
import { every, type BackgroundTask } from "./tasks";

export interface BackgroundContext {
  deps: Deps;
  config: Config;
  logger: Logger;
  metrics: Metrics;
}

/** Everything `serve` runs beside HTTP: each part adds its workers and schedulers here. */
export function startBackgroundWork(ctx: BackgroundContext): BackgroundTask[] {
  const { deps, logger } = ctx;
  return [
    ...startDeliveryWork(ctx),
    ...startCatalogWork(ctx),
    ...startAlertWork(ctx),
    every("session-pruning", 3600_000, () => pruneExpiredSessions(deps), logger),
    every("event-retention", 3600_000, () => pruneOldEvents(deps), logger),
    every("ephemeral-source-cleanup", 300_000, () => deleteExpiredEphemeralSources(deps), logger),
    ...startBackupSchedule(ctx),
  ];
}
