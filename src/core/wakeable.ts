import type { Logger } from "../observability/logger";
import type { BackgroundTask } from "./tasks";
import { errorMessage } from "../contracts/errors";

export interface WakeableTask extends BackgroundTask {
  /** Asks for a run soon; wakes arriving during a run cause one more run after it. */
  wake(): void;
}

/**
 * A loop that sleeps until woken (by the bus) and polls slowly as a safety
 * net. `work` returns true when it left work behind (a full batch), so the
 * loop runs again at once instead of waiting for the next wake.
 *
 * `coalesceMs`: a wake runs the work that much later, so a burst of wakes
 * (one per ingested event) becomes one run over a batch: fewer, larger
 * write transactions, for a few milliseconds of latency.
 */
export function wakeable(name: string, work: () => Promise<boolean>, opts: { pollMs: number; logger: Logger; coalesceMs?: number }): WakeableTask {
  let stopped = false;
  let current: Promise<void> | null = null;
  let again = false;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let scheduled = true; // the first run below

  const soon = () => (opts.coalesceMs ? setTimeout(run, opts.coalesceMs) : setImmediate(run));
  const arm = (ms: number) => {
    if (timer) clearTimeout(timer);
    timer = stopped ? null : setTimeout(run, ms);
    timer?.unref?.();
  };

  function run() {
    scheduled = false;
    if (stopped) return;
    if (current) {
      again = true;
      return;
    }
    again = false;
    current = (async () => {
      try {
        let more = true;
        while (more && !stopped) more = await work();
      } catch (err) {
        opts.logger.error(`${name} failed`, { error: errorMessage(err) });
      }
    })().finally(() => {
      current = null;
      if (again && !stopped) soon();
      else arm(opts.pollMs);
    });
  }

  setImmediate(run);
  return {
    name,
    running: () => !stopped,
    wake: () => {
      if (stopped) return;
      if (current) again = true;
      else if (!scheduled) {
        scheduled = true;
        if (timer) clearTimeout(timer);
        timer = null;
        soon();
      }
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await current;
    },
  };
}
