import type { Logger } from "../observability/logger";
import { errorMessage } from "../contracts/errors";

/** Something `serve` runs beside the HTTP server, stopped cleanly on shutdown. */
export interface BackgroundTask {
  name: string;
  running(): boolean;
  /** Resolves once in-flight work has finished. */
  stop(): Promise<void>;
}

/** Runs `work` every `intervalMs` (never overlapping itself), first run after one interval. */
export function every(name: string, intervalMs: number, work: () => Promise<unknown>, logger: Logger): BackgroundTask {
  let stopped = false;
  let current: Promise<unknown> | null = null;
  const timer = setInterval(() => {
    if (current || stopped) return;
    current = work()
      .catch((err) => logger.error(`${name} failed`, { error: errorMessage(err) }))
      .finally(() => (current = null));
  }, intervalMs);
  timer.unref?.();
  return {
    name,
    running: () => !stopped,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await current;
    },
  };
}
