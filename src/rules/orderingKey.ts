import type { FilterRequest } from "./filter";
import { fieldValue } from "./filter";

/** Keys are bounded: a key is an index entry and a line of the ordering listing, not a payload. */
export const MAX_ORDERING_KEY_LENGTH = 256;

/**
 * An event's ordering key on a connection (docs/delivery.md, "Ordered
 * delivery"): the value at the connection's key path, as text. Missing,
 * null, objects and arrays give null: those events share the one null-key
 * line. A longer key is cut to MAX_ORDERING_KEY_LENGTH characters.
 */
export function orderingKeyOf(path: string | null, request: () => FilterRequest): string | null {
  if (path === null) return null;
  const v = fieldValue(path, request());
  if (typeof v === "string") return cleanKey(v);
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return null;
}

/** Bounded, and without NUL (PostgreSQL text cannot hold it). */
export function cleanKey(key: string): string {
  return key.slice(0, MAX_ORDERING_KEY_LENGTH).replaceAll("\u0000", "\uFFFD");
}

/** The line a row waits in: its target (connection, or the endpoint's destination) and key. Ids hold no `:`, so the two never mix. */
export function orderingLane(targetId: string, key: string | null): string {
  return key === null ? targetId : `${targetId}:${key}`;
}
