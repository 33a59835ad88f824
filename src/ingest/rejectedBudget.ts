import type { Deps } from "../domain/deps";

/**
 * How many rejected requests (bad signature, schema `reject`) a source
 * stores: they are kept with their bodies for debugging, but a source that
 * receives nothing else (a wrong secret, or someone posting junk at a public
 * URL) must not fill the disk. Each source has a token bucket of
 * `perMinute` stored rejections, refilled evenly over a minute; past it a
 * rejected request is answered the same and counted in the metrics, not
 * stored (docs/ingest.md "Rejected requests").
 *
 * The buckets live in this process's memory: no database round trip on the
 * hot path, and on several nodes each node has its own budget. Time is the
 * injected clock's.
 */
export const DEFAULT_REJECTED_STORE_PER_MINUTE = 60;

interface Bucket {
  tokens: number;
  at: number;
}

/** Enough for every source that is being rejected at once; past it the buckets start over (full). */
const MAX_BUCKETS = 10_000;
const budgets = new WeakMap<object, Map<string, Bucket>>();

/** Takes one stored rejection from the source's budget: false when it is spent (count, do not store). */
export function takeRejectedSlot(deps: Pick<Deps, "db" | "settings">, sourceId: string, nowMs: number): boolean {
  const perMinute = deps.settings.rejectedStorePerMinute ?? DEFAULT_REJECTED_STORE_PER_MINUTE;
  if (perMinute <= 0) return false;
  let buckets = budgets.get(deps.db);
  if (!buckets) budgets.set(deps.db, (buckets = new Map()));
  let bucket = buckets.get(sourceId);
  if (!bucket) {
    if (buckets.size >= MAX_BUCKETS) buckets.clear();
    bucket = { tokens: perMinute, at: nowMs };
    buckets.set(sourceId, bucket);
  } else if (nowMs > bucket.at) {
    bucket.tokens = Math.min(perMinute, bucket.tokens + ((nowMs - bucket.at) * perMinute) / 60_000);
    bucket.at = nowMs;
  }
  if (bucket.tokens < 1) return false;
  bucket.tokens -= 1;
  return true;
}
