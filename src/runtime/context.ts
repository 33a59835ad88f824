import type { SchedulerLease } from "../cluster/schedulerLease";
import type { Config } from "../config/config";
import type { Deps } from "../domain/deps";
import type { Logger } from "../observability/logger";
import type { Metrics } from "../observability/metrics";
import type { Tracer } from "@opentelemetry/api";
import type { PlainSpanStarter } from "../observability/plainSpan";

/** What every part's background work starts from (src/boot/background.ts hands it out). */
export interface BackgroundContext {
  deps: Deps;
  config: Config;
  logger: Logger;
  metrics: Metrics;
  /** Whether this node is the cluster's scheduler (src/cluster/schedulerLease.ts). */
  lease: SchedulerLease;
  /** Set when tracing is on (src/observability/tracing.ts); undefined: no spans at all. */
  tracer?: Tracer;
  /** Set with `tracer`: spans without the SDK's span object, for a delivery attempt (src/observability/plainSpan.ts). */
  spans?: PlainSpanStarter;
  /**
   * How often the delivery router, worker and job runner look for work
   * another process stored without a wake (CLI local mode); 5 s when unset.
   * Tests lengthen it to show that work which must not wait for it does not.
   */
  pollMs?: number;
}
