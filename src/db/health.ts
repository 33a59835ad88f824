import type { Logger } from "../observability/logger";
import { isDatabaseUnreachable, unreachableReason } from "./errors";

/**
 * Whether the database answers, as the server last saw it (docs/postgres.md,
 * "When the database goes away"). Requests that fail because it is
 * unreachable report it here; the first such failure logs one warning and
 * starts a probe, and the probe's first success logs that it is back. So a
 * database that is away for an hour gives two log lines, not one per request.
 */
export interface DatabaseHealth {
  /** Reports a failure; returns whether it means the database is unreachable. */
  failed(error: unknown): boolean;
  /** Whether the database is away at the last look. */
  isDown(): boolean;
  stop(): void;
}

export function trackDatabaseHealth(opts: { ping: () => Promise<void>; logger: Logger; probeIntervalMs?: number; now?: () => number }): DatabaseHealth {
  const { ping, logger } = opts;
  const interval = opts.probeIntervalMs ?? 1000;
  const now = opts.now ?? Date.now;
  let downSince: number | null = null;
  let probe: ReturnType<typeof setTimeout> | null = null;
  let stopped = false;

  const scheduleProbe = () => {
    if (stopped || probe) return;
    probe = setTimeout(async () => {
      try {
        await ping();
        probe = null;
        if (downSince !== null) {
          logger.info("database available again", { unavailable_ms: now() - downSince });
          downSince = null;
        }
      } catch {
        probe = null;
        scheduleProbe();
      }
    }, interval);
    probe.unref?.();
  };

  return {
    failed(error) {
      if (!isDatabaseUnreachable(error)) return false;
      if (downSince === null) {
        downSince = now();
        logger.warn("database unavailable: requests answer 503 until it is back", { error: unreachableReason(error) });
      }
      scheduleProbe();
      return true;
    },
    isDown: () => downSince !== null,
    stop() {
      stopped = true;
      if (probe) clearTimeout(probe);
      probe = null;
    },
  };
}

/**
 * The logger background work writes through: a failure it logs as an error
 * while the database is away is the outage again (already logged once), not
 * news, and its text is a statement. Such lines go to debug. An error line
 * while the database seemed fine waits for one ping: if the database does not
 * answer, that failure is what reports the outage.
 */
export function databaseAwareLogger(logger: Logger, health: DatabaseHealth, ping: () => Promise<void>): Logger {
  return {
    debug: logger.debug,
    info: logger.info,
    warn: logger.warn,
    error(msg, fields) {
      if (health.isDown()) return logger.debug(msg, fields);
      ping().then(
        () => logger.error(msg, fields),
        (error) => (health.failed(error) ? logger.debug(msg, fields) : logger.error(msg, fields)),
      );
    },
  };
}
