/**
 * The median from the stats rollups' duration histogram (src/domain/durationHistogram.ts)
 * against the exact median, over the bucket bounds the migration writes.
 */
import { describe, expect, it } from "vitest";
import { histogramMedian, type HistogramBucket } from "../../src/domain/durationHistogram";
import { migrations } from "../../src/generated/migrations.gen";

const bounds = (() => {
  const statement = migrations.flatMap((m) => m.sql).find((s) => s.includes("INSERT INTO duration_buckets"))!;
  return [...statement.slice(statement.indexOf("VALUES")).matchAll(/\((\d+)\)/g)].map((m) => Number(m[1]));
})();

/** What the rollups hold for these durations: per bucket, the count and the extremes. */
function histogramOf(durations: number[]): HistogramBucket[] {
  const buckets = new Map<number, HistogramBucket>();
  for (const d of durations) {
    const lowerMs = bounds.filter((b) => b <= d).at(-1)!;
    const b = buckets.get(lowerMs) ?? { lowerMs, n: 0, minMs: d, maxMs: d };
    buckets.set(lowerMs, { lowerMs, n: b.n + 1, minMs: Math.min(b.minMs!, d), maxMs: Math.max(b.maxMs!, d) });
  }
  return [...buckets.values()];
}

function exactMedian(durations: number[]): number {
  const s = [...durations].sort((x, y) => x - y);
  const n = s.length;
  return n % 2 ? s[(n - 1) / 2]! : (s[n / 2 - 1]! + s[n / 2]!) / 2;
}

/** A small deterministic generator, so a failure can be replayed. */
function random(seed: number) {
  let x = seed;
  return () => ((x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
}

describe("the median from the duration histogram", () => {
  it("has the buckets the migration writes: every ms under 16, then four a doubling, at most 19% wide", () => {
    expect(bounds.slice(0, 17)).toEqual([...Array(17).keys()]);
    expect(bounds).toHaveLength(96);
    for (let i = 16; i < bounds.length - 1; i++) expect((bounds[i + 1]! - 1) / bounds[i]!).toBeLessThan(1.19);
  });

  it("is exact when each bucket holds one distinct duration, and for one or two attempts", () => {
    expect(histogramMedian(histogramOf([150, 160, 400]), bounds)).toBe(160);
    expect(histogramMedian(histogramOf([3, 9]), bounds)).toBe(6);
    expect(histogramMedian(histogramOf([120, 121]), bounds)).toBe(120.5);
    expect(histogramMedian(histogramOf([5000]), bounds)).toBe(5000);
    expect(histogramMedian([], bounds)).toBeNull();
  });

  it("is within 19% of the exact median over many shapes of durations", () => {
    const next = random(7);
    for (let round = 0; round < 300; round++) {
      const n = 1 + Math.floor(next() * 400);
      const scale = 10 ** (next() * 5);
      const durations = Array.from({ length: n }, () => Math.floor(scale * (next() < 0.8 ? next() : 1 + 20 * next())));
      const exact = exactMedian(durations);
      const approx = histogramMedian(histogramOf(durations), bounds)!;
      expect(Math.abs(approx - exact), `${n} durations around ${Math.round(scale)} ms`).toBeLessThanOrEqual(Math.max(0.5, 0.19 * exact));
    }
  });

  it("stays inside the last, open-ended bucket's seen extremes", () => {
    const huge = [20_000_000, 30_000_000, 40_000_000];
    const approx = histogramMedian(histogramOf(huge), bounds)!;
    expect(approx).toBeGreaterThanOrEqual(20_000_000);
    expect(approx).toBeLessThanOrEqual(40_000_000);
  });
});
