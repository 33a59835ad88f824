import { liveNodes } from "../cluster/nodes";
import { HEARTBEAT_INTERVAL_MS } from "../core/node";
import type { Deps } from "../domain/deps";
import type { Logger } from "../observability/logger";
import { errorMessage } from "../contracts/errors";
import type { DestinationPacer } from "./rateLimiter";

/**
 * Counts the live nodes now and every heartbeat interval, and has the pacer
 * send 1/n of each rate: n nodes together hold the destination's and the
 * application's limit. A node that joins or dies changes the share within
 * one interval (plus NODE_TIMEOUT_MS for a death).
 */
export function shareRatesAmongLiveNodes(deps: Deps, pacer: DestinationPacer, logger: Logger): ReturnType<typeof setInterval> {
  const refresh = () =>
    liveNodes(deps.db, deps.clock.now()).then(
      (nodes) => pacer.shareAmong(nodes.length),
      // At error, as background work reports a failure: while the database is away, serve's logger turns such
      // lines into debug (src/db/health.ts, databaseAwareLogger); a warn would repeat the outage with its SQL.
      (error) => logger.error("counting the live nodes failed; rate limits keep the last share", { error: errorMessage(error) }),
    );
  void refresh();
  const timer = setInterval(refresh, HEARTBEAT_INTERVAL_MS);
  timer.unref?.();
  return timer;
}
