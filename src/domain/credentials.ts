import { and, eq, gt, inArray } from "drizzle-orm";
import { apiKeys, sessions } from "../db/schema";
import { iso } from "../core/clock";
import { sha256Hex } from "./hash";
import type { Deps, Scope } from "./deps";

/**
 * The credential a request came with, as one string: `api_key:<id>` or
 * `session:<stored session id>`. What lives on after the request (a live
 * event stream) is held to it: it ends when the credential is revoked,
 * logged out or expires (docs/api.md, "Live streams").
 */
export type CredentialId = string;

export function credentialOf(scope: Scope, sessionToken: string | undefined): CredentialId | null {
  if (scope.via === "api_key" && scope.apiKeyId) return `api_key:${scope.apiKeyId}`;
  if (scope.via === "session" && sessionToken) return sessionCredential(sessionToken);
  return null;
}

export const sessionCredential = (token: string): CredentialId => `session:${sha256Hex(token)}`;
export const apiKeyCredential = (id: string): CredentialId => `api_key:${id}`;

/**
 * Which of these credentials still admit their holder, read from the
 * database (so a revocation made by any node, or by the CLI in local mode,
 * is seen): keys not revoked, sessions not logged out nor expired by the
 * clock.
 */
export async function validCredentials({ db, clock }: Pick<Deps, "db" | "clock">, credentials: CredentialId[]): Promise<Set<CredentialId>> {
  const keyIds = credentials.filter((c) => c.startsWith("api_key:")).map((c) => c.slice("api_key:".length));
  const sessionIds = credentials.filter((c) => c.startsWith("session:")).map((c) => c.slice("session:".length));
  const valid = new Set<CredentialId>();
  if (keyIds.length > 0) {
    const rows = await db.select({ id: apiKeys.id }).from(apiKeys).where(and(inArray(apiKeys.id, keyIds), eq(apiKeys.revoked, 0)));
    for (const r of rows) valid.add(apiKeyCredential(r.id));
  }
  if (sessionIds.length > 0) {
    const rows = await db.select({ id: sessions.id }).from(sessions).where(and(inArray(sessions.id, sessionIds), gt(sessions.expiresAt, iso(clock.now()))));
    for (const r of rows) valid.add(`session:${r.id}`);
  }
  return valid;
}
