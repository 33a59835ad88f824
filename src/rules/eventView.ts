import type { FilterRequest } from "./filter";

/** The columns of a stored event that filters and transforms look at. */
export interface StoredRequest {
  body: Uint8Array;
  /** JSON object text, names lower-cased. */
  headers: string;
  /** JSON object text or a raw query string; null when none. */
  query: string | null;
  method: string;
  path: string | null;
  contentType: string | null;
}

/**
 * One view of a stored request for filter rules and transforms. The body is
 * the parsed JSON when it parses, the fields of a form-encoded body as an
 * object, otherwise the text as a string.
 */
export function eventView(event: StoredRequest): FilterRequest {
  return {
    body: parseBody(event.body, event.contentType),
    headers: stringRecord(parseJson(event.headers), true),
    query: parseQuery(event.query),
    method: event.method.toUpperCase(),
    path: event.path ?? "",
  };
}

const decoder = new TextDecoder();

export function parseBody(body: Uint8Array, contentType: string | null): unknown {
  if (body.byteLength === 0) return null;
  const text = decoder.decode(body);
  const json = parseJson(text);
  if (json !== undefined) return json;
  if (contentType && /^application\/x-www-form-urlencoded\b/i.test(contentType)) {
    return Object.fromEntries(new URLSearchParams(text));
  }
  return text;
}

function parseQuery(query: string | null): Record<string, string> {
  if (!query) return {};
  const json = parseJson(query);
  if (json !== undefined) return stringRecord(json, false);
  return Object.fromEntries(new URLSearchParams(query.startsWith("?") ? query.slice(1) : query));
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Flattens repeated values (stored as arrays) to one comma-joined string, as HTTP does for headers. */
function stringRecord(v: unknown, lowerKeys: boolean): Record<string, string> {
  const out: Record<string, string> = {};
  if (v === null || typeof v !== "object" || Array.isArray(v)) return out;
  for (const [k, raw] of Object.entries(v as Record<string, unknown>)) {
    const value = Array.isArray(raw) ? raw.map(String).join(", ") : raw === null || raw === undefined ? "" : String(raw);
    out[lowerKeys ? k.toLowerCase() : k] = value;
  }
  return out;
}
