import { AppError } from "./errors";

/** Kinds the spec gives a prefix; every other id is 32 lowercase hex. */
export const idPrefix = {
  apiKey: "ak_",
  source: "src_",
  event: "evt_",
  attempt: "da_",
  destination: "dst_",
  channel: "nc_",
} as const;

export type PrefixedKind = keyof typeof idPrefix;

const HEX32 = /^[0-9a-f]{32}$/;

/**
 * A new id: a UUIDv7 in hex, so ids sort in creation order (monotonic within
 * the process). Lists ordered newest first by (created_at, id) stay in
 * creation order for rows made within the same millisecond, and new rows
 * land on the newest index pages. Not a secret: tokens come from elsewhere.
 */
export function hex32(): string {
  return Bun.randomUUIDv7("hex").replaceAll("-", "");
}

export function newId(kind?: PrefixedKind): string {
  return (kind ? idPrefix[kind] : "") + hex32();
}

/**
 * The stored form of an id taken from a path or body: accepts it with or
 * without its prefix. Anything else cannot name a row, so it is a 404.
 */
export function normalizeId(raw: string, kind?: PrefixedKind, what = "resource"): string {
  const prefix = kind ? idPrefix[kind] : "";
  const bare = prefix && raw.startsWith(prefix) ? raw.slice(prefix.length) : raw;
  if (!HEX32.test(bare)) throw new AppError("not_found", `${what} not found`);
  return prefix + bare;
}

/** Like normalizeId, but for optional filters: an id that cannot exist still filters to nothing. */
export function normalizeIdOrNull(raw: string, kind?: PrefixedKind): string | null {
  try {
    return normalizeId(raw, kind);
  } catch {
    return null;
  }
}
