/**
 * The median of a destination's attempt durations from the hourly rollups'
 * fixed log-scale histogram (src/db/schema/rollups.ts, `duration_buckets`).
 * Each bucket holds the integers from its lower bound up to the next bound
 * less one, and its rollup keeps the smallest and largest duration it saw,
 * so a median position is placed on a line from that smallest to that
 * largest value: exact when the bucket holds one distinct duration (every
 * bucket under 16 ms), otherwise within the bucket, at most 19% above its
 * lower bound (docs/api.md, "Stats").
 */
export interface HistogramBucket {
  /** The bucket's lower bound in ms (a `duration_buckets` row). */
  lowerMs: number;
  n: number;
  minMs: number | null;
  maxMs: number | null;
}

/** The median as the exact one is defined: the middle duration, or the average of the middle two. */
export function histogramMedian(buckets: readonly HistogramBucket[], bounds: readonly number[]): number | null {
  const sorted = buckets.filter((b) => b.n > 0).sort((x, y) => x.lowerMs - y.lowerMs);
  const total = sorted.reduce((n, b) => n + b.n, 0);
  if (total === 0) return null;
  const at = (position: number) => {
    let below = 0;
    for (const b of sorted) {
      if (position <= below + b.n) return placeIn(b, position - below, upperOf(b.lowerMs, bounds));
      below += b.n;
    }
    return placeIn(sorted[sorted.length - 1]!, sorted[sorted.length - 1]!.n, upperOf(sorted[sorted.length - 1]!.lowerMs, bounds));
  };
  return (at(Math.floor((total + 1) / 2)) + at(Math.floor((total + 2) / 2))) / 2;
}

/** The largest duration the bucket can hold: the next bound less one; the last bucket is open-ended. */
function upperOf(lowerMs: number, bounds: readonly number[]): number {
  const next = bounds.find((b) => b > lowerMs);
  return next === undefined ? Number.POSITIVE_INFINITY : next - 1;
}

/** The k-th (1-based) of the bucket's n durations, spread evenly from its smallest to its largest. */
function placeIn(b: HistogramBucket, k: number, upper: number): number {
  const lo = Math.max(b.lowerMs, b.minMs ?? b.lowerMs);
  const hi = Math.max(lo, Math.min(upper, b.maxMs ?? (Number.isFinite(upper) ? upper : lo)));
  return b.n === 1 ? (lo + hi) / 2 : lo + ((hi - lo) * (k - 1)) / (b.n - 1);
}
