import { createHash, timingSafeEqual } from "node:crypto";

/** Decodes a presented signature; null when it is not valid in that encoding. */
export function decodeSignature(value: string, encoding: "hex" | "base64"): Buffer | null {
  const v = value.trim();
  if (v === "") return null;
  if (encoding === "hex") return /^(?:[0-9a-fA-F]{2})+$/.test(v) ? Buffer.from(v, "hex") : null;
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(v)) return null;
  return Buffer.from(v, "base64");
}

/** Constant-time equality of a computed digest and a presented one (lengths are public). */
export function digestEquals(expected: Uint8Array, presented: Uint8Array | null): boolean {
  return presented !== null && presented.length === expected.length && timingSafeEqual(expected, presented);
}

/** Constant-time equality of two strings of any length (compares their SHA-256). */
export function stringEquals(a: string, b: string): boolean {
  return timingSafeEqual(createHash("sha256").update(a).digest(), createHash("sha256").update(b).digest());
}

/** Seconds since the epoch from a provider's timestamp header; null unless a plain integer. */
export function parseUnixSeconds(raw: string | undefined): number | null {
  if (raw === undefined || !/^\s*\d{1,12}\s*$/.test(raw)) return null;
  return Number(raw.trim());
}

/** A timestamp problem in words, or null when within tolerance in both directions. */
export function timestampProblem(ts: number | null, nowSeconds: number, toleranceSeconds: number): string | null {
  if (ts === null) return "missing or malformed timestamp";
  if (toleranceSeconds <= 0) return null;
  if (ts < nowSeconds - toleranceSeconds) return `timestamp is older than the ${toleranceSeconds} s tolerance`;
  if (ts > nowSeconds + toleranceSeconds) return `timestamp is more than ${toleranceSeconds} s in the future`;
  return null;
}
