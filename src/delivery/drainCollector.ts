/**
 * One full garbage collection once the worker has drained a backlog and
 * stayed idle for a moment.
 *
 * JavaScriptCore collects as a program allocates; a process that stops
 * allocating (a drained backlog, nothing arriving) is not collected again
 * for a long while, so the garbage of the drain stays resident: after
 * 100,000 deliveries RSS stayed at 195–199 MiB for 5 s and more, against
 * about 120 MiB once a collection came (docs/performance.md, "Memory"). A
 * full collection costs tens of milliseconds of the one JavaScript thread,
 * so it runs only after a drain of DRAINED_DELIVERIES or more, and only when
 * the worker has had nothing in hand for QUIET_MS: a steady trickle of
 * deliveries, or a rate-limited destination sending a few a second, never
 * triggers it.
 */
export const DRAINED_DELIVERIES = 10_000;
export const QUIET_MS = 1000;

/** Runs `run` after `ms`; answers how to cancel it. */
export type Schedule = (run: () => void, ms: number) => () => void;

const timerSchedule: Schedule = (run, ms) => {
  const t = setTimeout(run, ms);
  t.unref?.();
  return () => clearTimeout(t);
};

export class DrainCollector {
  private delivered = 0;
  private cancel: (() => void) | null = null;

  constructor(
    private readonly collect: () => void = () => Bun.gc(true),
    private readonly schedule: Schedule = timerSchedule,
  ) {}

  /** Deliveries finished since the last collection. */
  finished(n = 1) {
    this.delivered += n;
  }

  /** The worker has nothing sending, ready or waiting to be recorded: after a big enough drain, collect once it stays so. */
  idle() {
    if (this.delivered < DRAINED_DELIVERIES || this.cancel) return;
    this.cancel = this.schedule(() => {
      this.cancel = null;
      this.delivered = 0;
      this.collect();
    }, QUIET_MS);
  }

  /** Work again before the collection ran: it waits for the next idle moment. */
  busy() {
    if (!this.cancel) return;
    this.cancel();
    this.cancel = null;
  }
}
