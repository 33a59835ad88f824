import type { BackgroundTask } from "../core/tasks";
import type { Logger } from "../observability/logger";

/**
 * A full garbage collection once the process has gone quiet after growing.
 *
 * JavaScriptCore collects as the program allocates; a process that stops
 * allocating (a drained backlog, no requests) is never collected again, so
 * the garbage of its last busy minutes stays resident until something wakes
 * it: after a 100k backlog drained, RSS stayed at 195–199 MiB for 5 s and
 * more, against 118 MiB once a collection came (docs/performance.md,
 * "Memory"). A full collection costs tens of milliseconds of the one
 * JavaScript thread, which is why it runs only when the process is idle (a
 * second with under IDLE_CPU_SHARE of a core used, every thread counted) and
 * only when RSS has grown by GROWTH_BYTES since the last one: an idle server
 * that allocates nothing is never collected twice, and a busy one is left to
 * the engine's own collections.
 */
export const CHECK_MS = 1000;
/** A second using less than this share of one core (all threads) counts as idle. */
export const IDLE_CPU_SHARE = 0.05;
/** RSS grown by this much since the last collection (or start-up) makes an idle second collect. */
export const GROWTH_BYTES = 32 * 1024 * 1024;

export interface IdleCollectorProbe {
  /** CPU microseconds used by the process so far (user + system, all threads). */
  cpuMicros(): number;
  rssBytes(): number;
  /** A full, synchronous collection. */
  collect(): void;
}

const processProbe: IdleCollectorProbe = {
  cpuMicros: () => {
    const u = process.cpuUsage();
    return u.user + u.system;
  },
  rssBytes: () => process.memoryUsage.rss(),
  collect: () => Bun.gc(true),
};

/** Decides, one second at a time, whether to collect: the rule above, apart from timers so it can be tested alone. */
export class IdleCollector {
  private lastCpu: number;
  private lastAt: number;
  private baseline: number;

  constructor(
    private readonly probe: IdleCollectorProbe,
    now: number,
  ) {
    this.lastCpu = probe.cpuMicros();
    this.lastAt = now;
    this.baseline = probe.rssBytes();
  }

  /** Called every CHECK_MS (`now` in ms); answers what a collection freed, or null when it did not collect. */
  check(now: number): { before: number; after: number; tookMs: number } | null {
    const cpu = this.probe.cpuMicros();
    const share = (cpu - this.lastCpu) / 1000 / Math.max(1, now - this.lastAt);
    this.lastCpu = cpu;
    this.lastAt = now;
    if (share >= IDLE_CPU_SHARE) return null;
    const before = this.probe.rssBytes();
    if (before - this.baseline < GROWTH_BYTES) {
      // Memory handed back by the engine on its own lowers the mark growth is measured from.
      this.baseline = Math.min(this.baseline, before);
      return null;
    }
    const started = performance.now();
    this.probe.collect();
    const tookMs = performance.now() - started;
    this.baseline = this.probe.rssBytes();
    // The collection's own CPU is not the next second's load.
    this.lastCpu = this.probe.cpuMicros();
    return { before, after: this.baseline, tookMs };
  }
}

/** `serve`'s idle collector: checks every CHECK_MS on a timer that never keeps the process alive. */
export function startIdleCollector(logger: Logger, probe: IdleCollectorProbe = processProbe): BackgroundTask {
  const collector = new IdleCollector(probe, performance.now());
  let stopped = false;
  const timer = setInterval(() => {
    const done = collector.check(performance.now());
    if (done) {
      const mib = (b: number) => Math.round((b / 1048576) * 10) / 10;
      logger.debug("collected garbage while idle", { rss_before_mib: mib(done.before), rss_after_mib: mib(done.after), took_ms: Math.round(done.tookMs) });
    }
  }, CHECK_MS);
  timer.unref?.();
  return {
    name: "idle-collector",
    running: () => !stopped,
    async stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}
