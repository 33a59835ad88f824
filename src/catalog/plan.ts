import { MAX_RECORD_KEY_LENGTH } from "../contracts/collections";
import type { StoredRequest } from "../rules/eventView";
import { eventView, parseBody } from "../rules/eventView";
import { applyTransform, DEFAULT_TRANSFORM_TIMEOUT_MS } from "../rules/transform";
import { atPath } from "../rules/json";
import { errorMessage } from "../contracts/errors";

/**
 * What one stored event means for a collection, decided outside any
 * transaction (a JSONata transform is asynchronous); the builder then
 * applies the plans of a batch in one write transaction.
 */
export type EventPlan = { eventId: string; receivedAt: string; eventType: string | null } & (
  | { kind: "upsert"; key: string; data: string }
  | { kind: "delete"; key: string }
  | { kind: "ignored" }
  | { kind: "missing_key" }
  | { kind: "transform_failed"; error: string }
);

/** A collection's definition, parsed once per batch. */
export interface CollectionRules {
  eventTypes: Set<string> | null;
  deleteEventTypes: Set<string>;
  eventTypePath: string;
  keyPath: string;
  transform: string | null;
}

export function rulesOf(c: { eventTypes: string | null; deleteEventTypes: string | null; eventTypePath: string; keyPath: string; transformExpression: string | null }): CollectionRules {
  const list = (text: string | null) => (text ? new Set(JSON.parse(text) as string[]) : null);
  return { eventTypes: list(c.eventTypes), deleteEventTypes: list(c.deleteEventTypes) ?? new Set(), eventTypePath: c.eventTypePath, keyPath: c.keyPath, transform: c.transformExpression };
}

export interface BuildEvent extends StoredRequest {
  id: string;
  receivedAt: string;
  /** The type ingest stored (a template's header, a topic publish's event_type). */
  eventType: string | null;
}

/**
 * The event's type is read at event_type_path in the body; when the body
 * has none there, the type ingest stored for it (GitHub's X-GitHub-Event
 * header, a topic publish's event_type) stands in.
 */
export async function planEvent(event: BuildEvent, rules: CollectionRules): Promise<EventPlan> {
  const body = parseBody(event.body, event.contentType);
  const typed = atPath(body, rules.eventTypePath);
  const eventType = typeof typed === "string" && typed !== "" ? typed.slice(0, 200) : event.eventType;
  const base = { eventId: event.id, receivedAt: event.receivedAt, eventType };
  const deletes = eventType !== null && rules.deleteEventTypes.has(eventType);
  if (!deletes && rules.eventTypes && (eventType === null || !rules.eventTypes.has(eventType))) return { ...base, kind: "ignored" };
  const key = recordKey(atPath(body, rules.keyPath));
  if (key === null) return { ...base, kind: "missing_key" };
  if (deletes) return { ...base, kind: "delete", key };
  if (rules.transform === null) return { ...base, kind: "upsert", key, data: JSON.stringify(body) };
  try {
    // Headers and query are parsed only for a transform, which may read them.
    const result = await applyTransform(rules.transform, { ...eventView(event), body }, { timeoutMs: DEFAULT_TRANSFORM_TIMEOUT_MS });
    if (result === null || result === undefined) return { ...base, kind: "transform_failed", error: "The transform returned no value" };
    return { ...base, kind: "upsert", key, data: JSON.stringify(result) };
  } catch (e) {
    return { ...base, kind: "transform_failed", error: errorMessage(e) };
  }
}

/** Strings and finite numbers key a record; anything else (absent, null, objects, overlong) does not. */
function recordKey(value: unknown): string | null {
  const key = typeof value === "string" ? value : typeof value === "number" && Number.isFinite(value) ? String(value) : null;
  return key === null || key === "" || key.length > MAX_RECORD_KEY_LENGTH ? null : key;
}

/**
 * Whether two data texts hold the same JSON value. Equal texts are the
 * common case; otherwise the values are compared with object keys in any
 * order (a provider may send the same object with its keys reordered).
 */
export function sameData(a: string, b: string): boolean {
  if (a === b) return true;
  try {
    return canonical(JSON.parse(a)) === canonical(JSON.parse(b));
  } catch {
    return false;
  }
}

function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (v !== null && typeof v === "object") {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(v);
}
