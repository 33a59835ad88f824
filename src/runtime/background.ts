import type { Config } from "../config/config";
import type { Deps } from "../domain/deps";
import { pruneExpiredSessions } from "../domain/sessions";
import type { Logger } from "../observability/logger";
import type { Metrics } from "../observability/metrics";
import { every, type BackgroundTask } from "./tasks";

export interface BackgroundContext {
  deps: Deps;
  config: Config;
  logger: Logger;
  metrics: Metrics;
}

/** Everything `serve` runs beside HTTP: each part adds its workers and schedulers here. */
export function startBackgroundWork({ deps, logger }: BackgroundContext): BackgroundTask[] {
  return [every("session-pruning", 3600_000, () => pruneExpiredSessions(deps), logger)];
}
