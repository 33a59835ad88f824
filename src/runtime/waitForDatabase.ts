import { isDatabaseUnreachable, unreachableReason } from "../db/errors";
import type { Logger } from "../observability/logger";

/**
 * `serve` started before its PostgreSQL can be reached (a reboot brings both
 * up at once; docs/postgres.md, "Start-up order"): rather than exit and leave
 * a service manager to restart it until it gives up, it tries again with
 * backoff (0.5 s doubling to 30 s), logging each try, for as long as
 * HOOKRELAY_DATABASE_WAIT allows (unlimited by default). Anything else (a
 * refused password, a missing database, a server too old) stops start-up at
 * once: waiting cannot mend it.
 */
export async function waitForDatabase<T>(open: () => Promise<T>, opts: { logger: Logger; limitMs?: number; sleep?: (ms: number) => Promise<void> }): Promise<T> {
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const started = Date.now();
  let delay = 500;
  for (let attempt = 1; ; attempt++) {
    try {
      const opened = await open();
      if (attempt > 1) opts.logger.info("database reachable; starting", { attempts: attempt, waited_ms: Date.now() - started });
      return opened;
    } catch (error) {
      if (!isDatabaseUnreachable(error)) throw error;
      const waited = Date.now() - started;
      if (opts.limitMs !== undefined && waited + delay > opts.limitMs) throw error;
      opts.logger.warn("database not reachable yet; trying again", {
        attempt,
        retry_in_ms: delay,
        error: error instanceof Error && error.name === "DatabaseUnavailable" ? error.message : unreachableReason(error),
      });
      await sleep(delay);
      delay = Math.min(delay * 2, 30_000);
    }
  }
}
