import type { Handshake } from "../rules/templates";

/** The answer to a provider's endpoint check (e.g. Slack's url_verification), or null for a normal request. */
export function handshakeReply(handshake: Handshake | undefined, json: () => unknown): Record<string, unknown> | null {
  if (!handshake) return null;
  const body = json();
  if (!body || typeof body !== "object" || Array.isArray(body)) return null;
  const record = body as Record<string, unknown>;
  if (record[handshake.field] !== handshake.equals) return null;
  return { [handshake.echo]: record[handshake.echo] ?? null };
}
