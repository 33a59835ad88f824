/** Time is injected so retries, windows and expiry are testable without sleeping. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

export const iso = (d: Date) => d.toISOString();

/** A clock tests move by hand. */
export function manualClock(start = new Date("2026-01-01T00:00:00.000Z")) {
  let t = start.getTime();
  return {
    now: () => new Date(t),
    advance(ms: number) {
      t += ms;
    },
    set(d: Date) {
      t = d.getTime();
    },
  };
}
