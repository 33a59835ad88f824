/**
 * Which endpoints a message goes to (docs/decisions.md D10): every active endpoint
 * that has not expired and whose filter_types admit the event type (null:
 * every type). A pure leaf shared by the domain's fan-out and its resend
 * checks; it imports nothing of ours.
 */
export interface FanoutCandidate {
  status: string;
  /** JSON array text of event type names, or null. */
  filterTypes: string | null;
  expiresAt: string | null;
}

export function isExpired(endpoint: Pick<FanoutCandidate, "expiresAt">, now: Date): boolean {
  return endpoint.expiresAt !== null && Date.parse(endpoint.expiresAt) <= now.getTime();
}

/** The event types an endpoint subscribes to; null for every type (a stored value that no longer parses admits nothing). */
export function filterTypesOf(text: string | null): string[] | null {
  if (text === null) return null;
  try {
    const v = JSON.parse(text) as unknown;
    return Array.isArray(v) ? v.map(String) : [];
  } catch {
    return [];
  }
}

export function admits(endpoint: FanoutCandidate, eventType: string, now: Date): boolean {
  if (endpoint.status !== "active" || isExpired(endpoint, now)) return false;
  const types = filterTypesOf(endpoint.filterTypes);
  return types === null || types.includes(eventType);
}
