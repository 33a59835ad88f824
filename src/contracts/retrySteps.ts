/**
 * A retry schedule (docs/delivery.md, "Retry schedules"): the delay before
 * each retry, as durations such as `5s`, `5m`, `2h`, `1d`. Bounded so a
 * schedule is cheap to store and to read: at most 20 steps, each from 1 s to
 * 7 days, each written in at most 8 characters. Its own file, free of zod,
 * so the UI bundle can import it (zod probes `new Function`, which the UI's
 * Content-Security-Policy refuses).
 */
export const RETRY_SCHEDULE_MAX_STEPS = 20;
export const RETRY_STEP_MIN_SECONDS = 1;
export const RETRY_STEP_MAX_SECONDS = 7 * 86_400;
/** Svix's default schedule, the example the API documents. */
export const RETRY_SCHEDULE_EXAMPLE = ["5s", "5m", "30m", "2h", "5h", "10h", "10h"];

const UNIT_SECONDS = { s: 1, m: 60, h: 3600, d: 86_400 } as const;
const STEP = /^(\d{1,6})([smhd])$/;

/** A step's length in seconds, or null when it is not `<digits><s|m|h|d>`. */
export function retryStepSeconds(step: string): number | null {
  const m = STEP.exec(step);
  if (!m) return null;
  return Number(m[1]) * UNIT_SECONDS[m[2] as keyof typeof UNIT_SECONDS];
}
