/**
 * When a failed delivery is tried again (docs/decisions.md D6).
 *
 * - exponential (default): retry_interval_seconds, then doubling each time,
 *   with ±20% jitter so a receiver that failed for everyone is not hit by a
 *   thundering herd when it recovers; never more than 6 h.
 * - linear: the same interval between every try (Hookdeck's and Convoy's meaning).
 * - A `Retry-After` on a 429 or 503 replaces the computed delay (also capped at 6 h).
 * - max_retries counts retries after the first try: max_retries 8 means at most 9 tries.
 * - A retry schedule (retry_schedule), when set, replaces all three: retry n
 *   waits its n-th step, and there are as many retries as steps. Its jitter
 *   only adds (up to +20%): a receiver told "5m" is never tried again sooner.
 *   Steps go up to 7 days (src/contracts/retrySchedule.ts), past the 6 h cap.
 * - A 410 Gone is never retried: the receiver said the URL is gone for good.
 */
export const MAX_RETRY_DELAY_MS = 6 * 3600 * 1000;
export const JITTER = 0.2;

export interface RetrySettings {
  retryStrategy: string;
  retryIntervalSeconds: number;
  maxRetries: number;
  /** Seconds before each retry; null: the strategy above applies. */
  retrySchedule?: readonly number[] | null;
}

/** How many retries follow a first try that failed. */
export function retriesAllowed(settings: RetrySettings): number {
  return settings.retrySchedule ? settings.retrySchedule.length : settings.maxRetries;
}

/** Delay before retry number `retry` (1 = the first retry). `random` is in [0, 1). */
export function retryDelayMs(settings: RetrySettings, retry: number, random: () => number = Math.random): number {
  const schedule = settings.retrySchedule;
  if (schedule) {
    const step = schedule[Math.min(retry, schedule.length) - 1]! * 1000;
    return Math.round(step * (1 + JITTER * random()));
  }
  const base = settings.retryIntervalSeconds * 1000;
  if (settings.retryStrategy === "linear") return Math.min(base, MAX_RETRY_DELAY_MS);
  // 2^(retry-1) overflows to Infinity long before it matters; Math.min copes.
  const doubled = Math.min(base * 2 ** Math.max(0, retry - 1), MAX_RETRY_DELAY_MS);
  const jittered = doubled * (1 - JITTER + 2 * JITTER * random());
  return Math.round(Math.min(jittered, MAX_RETRY_DELAY_MS));
}

/**
 * A Retry-After header as milliseconds from `now`: delta-seconds or an HTTP
 * date (RFC 9110 §10.2.3). Null when absent or unreadable.
 */
export function parseRetryAfter(value: string | null | undefined, now: Date): number | null {
  if (!value) return null;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Math.min(Number(v) * 1000, MAX_RETRY_DELAY_MS);
  const at = Date.parse(v);
  if (Number.isNaN(at)) return null;
  return Math.min(Math.max(0, at - now.getTime()), MAX_RETRY_DELAY_MS);
}

export type RetryDecision = { retry: true; delayMs: number } | { retry: false };

/**
 * Whether attempt `attemptNumber` (1-based within its chain) that failed is
 * retried, and after how long. Failures that a retry cannot fix (`retryable`
 * false: transform errors, refused addresses) and replays (`noRetry`) are not.
 */
export function decideRetry(opts: {
  settings: RetrySettings;
  attemptNumber: number;
  retryable: boolean;
  noRetry: boolean;
  responseStatus: number | null;
  retryAfter: string | null;
  now: Date;
  random?: () => number;
}): RetryDecision {
  if (!opts.retryable || opts.noRetry || opts.responseStatus === 410) return { retry: false };
  const retriesUsed = opts.attemptNumber - 1;
  if (retriesUsed >= retriesAllowed(opts.settings)) return { retry: false };
  if (opts.responseStatus === 429 || opts.responseStatus === 503) {
    const after = parseRetryAfter(opts.retryAfter, opts.now);
    if (after !== null) return { retry: true, delayMs: after };
  }
  return { retry: true, delayMs: retryDelayMs(opts.settings, retriesUsed + 1, opts.random) };
}
