import { createHash } from "node:crypto";
import type { DedupStrategy } from "../contracts/sources";
import { atPath } from "../rules/json";

/** Keys longer than this are stored as their hash: the index stays small and exact. */
const MAX_PLAIN_KEY = 128;

/**
 * What identifies a delivery for de-duplication, or null when the request
 * carries no key (missing header, non-JSON body, absent field): such an event
 * is kept as unique.
 */
export function dedupKey(strategy: DedupStrategy, field: string | null, headers: Record<string, string>, body: Uint8Array, json: () => unknown): string | null {
  let raw: string | undefined;
  if (strategy === "body_hash") return createHash("sha256").update(body).digest("hex");
  if (strategy === "header") raw = field ? headers[field.toLowerCase()] : undefined;
  else {
    const v = field ? atPath(json(), field) : undefined;
    raw = v === undefined || v === null ? undefined : typeof v === "string" ? v : JSON.stringify(v);
  }
  if (raw === undefined || raw === "") return null;
  // A NUL (JSON's \u0000 in the field) cannot be stored in PostgreSQL's text: such a key is kept as its hash too.
  return raw.length > MAX_PLAIN_KEY || raw.includes("\u0000") ? "sha256:" + createHash("sha256").update(raw).digest("hex") : raw;
}
