import { describe, expect, it } from "vitest";
import { decideRetry, MAX_RETRY_DELAY_MS, parseRetryAfter, retryDelayMs } from "../../src/delivery/retryPolicy";

const exp = { retryStrategy: "exponential", retryIntervalSeconds: 30, maxRetries: 8 };
const now = new Date("2026-01-01T00:00:00Z");

describe("retryDelayMs", () => {
  it("doubles from retry_interval_seconds with ±20% jitter", () => {
    expect(retryDelayMs(exp, 1, () => 0.5)).toBe(30_000);
    expect(retryDelayMs(exp, 2, () => 0.5)).toBe(60_000);
    expect(retryDelayMs(exp, 4, () => 0.5)).toBe(240_000);
    expect(retryDelayMs(exp, 1, () => 0)).toBe(24_000);
    expect(retryDelayMs(exp, 1, () => 0.9999999)).toBeCloseTo(36_000, -1);
  });

  it("never waits more than 6 hours, however many retries", () => {
    for (const retry of [10, 11, 20, 50, 2000]) {
      for (const r of [0, 0.5, 0.999]) expect(retryDelayMs(exp, retry, () => r)).toBeLessThanOrEqual(MAX_RETRY_DELAY_MS);
    }
    expect(retryDelayMs({ ...exp, retryIntervalSeconds: 86_400 }, 1, () => 0.5)).toBe(MAX_RETRY_DELAY_MS);
  });

  it("keeps the interval constant for linear", () => {
    const lin = { ...exp, retryStrategy: "linear" };
    expect([1, 2, 5].map((n) => retryDelayMs(lin, n))).toEqual([30_000, 30_000, 30_000]);
  });
});

describe("parseRetryAfter", () => {
  it("reads delta-seconds and HTTP dates", () => {
    expect(parseRetryAfter("120", now)).toBe(120_000);
    expect(parseRetryAfter("Thu, 01 Jan 2026 00:01:00 GMT", now)).toBe(60_000);
    expect(parseRetryAfter("Wed, 31 Dec 2025 00:00:00 GMT", now)).toBe(0);
    expect(parseRetryAfter("soon", now)).toBeNull();
    expect(parseRetryAfter(null, now)).toBeNull();
    expect(parseRetryAfter("999999999", now)).toBe(MAX_RETRY_DELAY_MS);
  });
});

describe("decideRetry", () => {
  const base = { settings: exp, attemptNumber: 1, retryable: true, noRetry: false, responseStatus: 500, retryAfter: null, now, random: () => 0.5 };

  it("retries until max_retries retries were made", () => {
    expect(decideRetry(base)).toEqual({ retry: true, delayMs: 30_000 });
    expect(decideRetry({ ...base, attemptNumber: 8 })).toEqual({ retry: true, delayMs: 30_000 * 2 ** 7 });
    expect(decideRetry({ ...base, attemptNumber: 9 })).toEqual({ retry: false });
    expect(decideRetry({ ...base, settings: { ...exp, maxRetries: 0 } })).toEqual({ retry: false });
  });

  it("honours Retry-After on 429 and 503 only", () => {
    expect(decideRetry({ ...base, responseStatus: 429, retryAfter: "5" })).toEqual({ retry: true, delayMs: 5000 });
    expect(decideRetry({ ...base, responseStatus: 503, retryAfter: "7" })).toEqual({ retry: true, delayMs: 7000 });
    expect(decideRetry({ ...base, responseStatus: 500, retryAfter: "5" })).toEqual({ retry: true, delayMs: 30_000 });
  });

  it("never retries replays or failures a retry cannot fix", () => {
    expect(decideRetry({ ...base, noRetry: true })).toEqual({ retry: false });
    expect(decideRetry({ ...base, retryable: false })).toEqual({ retry: false });
  });
});
