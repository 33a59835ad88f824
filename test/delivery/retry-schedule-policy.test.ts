import { describe, expect, it } from "vitest";
import { decideRetry, retryDelayMs } from "../../src/delivery/retryPolicy";
import { retryScheduleInput, retryScheduleSeconds, retryStepSeconds } from "../../src/contracts/retrySchedule";

const svix = [5, 300, 1800, 7200, 18_000, 36_000, 36_000];
const settings = { retryStrategy: "exponential", retryIntervalSeconds: 30, maxRetries: 8, retrySchedule: svix };
const now = new Date("2026-01-01T00:00:00Z");
const failed = (attemptNumber: number, extra: Partial<Parameters<typeof decideRetry>[0]> = {}) =>
  decideRetry({ settings, attemptNumber, retryable: true, noRetry: false, responseStatus: 502, retryAfter: null, now, random: () => 0, ...extra });

describe("a retry schedule", () => {
  it("waits each step in turn, jitter only adding up to 20%", () => {
    expect(svix.map((_, i) => retryDelayMs(settings, i + 1, () => 0))).toEqual(svix.map((s) => s * 1000));
    expect(retryDelayMs(settings, 2, () => 0.5)).toBe(330_000);
    expect(retryDelayMs(settings, 2, () => 0.9999999)).toBeLessThanOrEqual(360_000);
  });

  it("is not capped at 6 hours: a 7-day step waits 7 days", () => {
    expect(retryDelayMs({ ...settings, retrySchedule: [604_800] }, 1, () => 0)).toBe(604_800_000);
  });

  it("has as many retries as steps, whatever max_retries says", () => {
    expect(failed(7)).toEqual({ retry: true, delayMs: 36_000_000 });
    expect(failed(8)).toEqual({ retry: false });
    expect(decideRetry({ settings: { ...settings, retrySchedule: [5], maxRetries: 0 }, attemptNumber: 1, retryable: true, noRetry: false, responseStatus: 500, retryAfter: null, now, random: () => 0 })).toEqual({ retry: true, delayMs: 5000 });
  });

  it("lets Retry-After on a 429 or 503 replace the step", () => {
    expect(failed(1, { responseStatus: 429, retryAfter: "120" })).toEqual({ retry: true, delayMs: 120_000 });
    expect(failed(1, { responseStatus: 503, retryAfter: "120" })).toEqual({ retry: true, delayMs: 120_000 });
  });

  it("never retries a 410 Gone, with or without a schedule", () => {
    expect(failed(1, { responseStatus: 410 })).toEqual({ retry: false });
    expect(failed(1, { responseStatus: 410, settings: { ...settings, retrySchedule: null } })).toEqual({ retry: false });
  });
});

describe("retry_schedule validation", () => {
  it("reads s, m, h and d", () => {
    expect(["1s", "5m", "2h", "7d"].map(retryStepSeconds)).toEqual([1, 300, 7200, 604_800]);
    expect(retryStepSeconds("5 m")).toBeNull();
    expect(retryStepSeconds("1.5h")).toBeNull();
  });

  it("accepts 1 to 20 steps of 1s to 7d, as an array or its JSON text, and null", () => {
    expect(retryScheduleInput.safeParse(["5s", "7d"]).success).toBe(true);
    expect(retryScheduleInput.safeParse('["5s","5m"]').data).toEqual(["5s", "5m"]);
    expect(retryScheduleInput.safeParse(null).data).toBeNull();
    expect(retryScheduleInput.safeParse(Array(20).fill("1s")).success).toBe(true);
  });

  it.each([
    ["empty", []],
    ["21 steps", Array(21).fill("1s")],
    ["zero", ["0s"]],
    ["not a duration", ["abc"]],
    ["over 7 days", ["8d"]],
    ["too long a string", ["0000000001s"]],
    ["not a list", "5s"],
  ])("refuses %s", (_, value) => {
    expect(retryScheduleInput.safeParse(value).success).toBe(false);
  });

  it("reads what was stored back as seconds, and nothing from unreadable text", () => {
    expect(retryScheduleSeconds('["5s","1m"]')).toEqual([5, 60]);
    expect(retryScheduleSeconds(null)).toBeNull();
    expect(retryScheduleSeconds("{")).toBeNull();
  });
});
