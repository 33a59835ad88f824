import { eq, sql } from "drizzle-orm";
import { AppError, parseOrThrow } from "../contracts/errors";
import { createPortalLinkInput, type CreatePortalLinkInput } from "../contracts/portal";
import { applications } from "../db/schema";
// A pure leaf shared with the API's auth middleware, which checks what this signs.
import { signPortalToken } from "../rules/portalTokens";
import { iso } from "../core/clock";
import { transaction } from "../db/transaction";
import { recordAudit } from "../domain/audit";
import type { Deps, Scope } from "../domain/deps";
import { findApplication, serializeApplication } from "./applications";

/** An application's consumer portal links (docs/outbound.md, "The portal"): minting, revoking, and checking them. */

/** The HKDF purpose of the key that signs portal links (SecretBox.deriveKey). */
export const PORTAL_KEY_PURPOSE = "portal links";
const DEFAULT_PORTAL_TTL_MS = 3600_000;

/**
 * A consumer portal link (docs/outbound.md, "The portal"): `{base_url}/portal#token=…`,
 * the token signed with a key derived from the data dir's secret key. The
 * token travels in the fragment, which browsers send to no server, so it
 * stays out of access logs and Referer headers.
 */
export async function createPortalLink(deps: Deps, scope: Scope, appId: string, raw: CreatePortalLinkInput = {}) {
  const input = parseOrThrow(createPortalLinkInput, raw ?? {}, "Invalid portal link request");
  const row = await findApplication(deps, scope, appId);
  if (row.status !== "active") throw new AppError("conflict", `Application ${row.uid} is ${row.status}: its portal links do not work; enable it first`, { status: row.status });
  const ttlMs = input.expires_in !== undefined ? input.expires_in * 1000 : (deps.settings.portalLinkTtlMs ?? DEFAULT_PORTAL_TTL_MS);
  const exp = Math.floor((deps.clock.now().getTime() + ttlMs) / 1000);
  const token = signPortalToken(deps.secrets.deriveKey(PORTAL_KEY_PURPOSE), { app: row.id, org: row.orgId, env: row.envId, exp, gen: row.portalGeneration });
  const expiresAt = new Date(exp * 1000).toISOString();
  // Nothing is stored for a link (it is signed), but handing one out grants access: the trail says who did, never the link.
  await recordAudit(deps, scope, { action: "create", resourceType: "portal_link", resourceId: row.id, after: { application_id: row.id, expires_at: expiresAt } });
  return { url: `${deps.settings.baseUrl}/portal#token=${token}`, expires_at: expiresAt };
}

/**
 * Revokes every portal link issued for the application so far, at once and
 * on every node: links carry the generation they were minted in, and this
 * moves the stored one on (docs/outbound.md, "Revoking links"). Links minted
 * afterwards work.
 */
export async function revokePortalLinks(deps: Deps, scope: Scope, appId: string) {
  await transaction(deps.db, async () => {
    const row = await findApplication(deps, scope, appId);
    await deps.db
      .update(applications)
      .set({ portalGeneration: sql`${applications.portalGeneration} + 1`, updatedAt: iso(deps.clock.now()) })
      .where(eq(applications.id, row.id));
    await recordAudit(deps, scope, { action: "revoke", resourceType: "portal_link", resourceId: row.id, after: { application_id: row.id } });
  });
  return { success: true as const };
}

/**
 * A verified portal link's claims against its application as stored now:
 * refused (401) once the application is disabled or its links were revoked
 * after this one was minted. Read on every request, from the database every
 * node shares, so a revocation holds everywhere at once. A deleted
 * application is left to findApplication (404).
 */
export async function checkPortalLink({ db }: Pick<Deps, "db">, claims: { app: string; gen?: number }): Promise<void> {
  const [row] = await db
    .select({ status: applications.status, generation: applications.portalGeneration })
    .from(applications)
    .where(eq(applications.id, claims.app))
    .limit(1);
  if (!row) return;
  if (row.status !== "active" || (claims.gen ?? 0) !== row.generation) {
    throw new AppError("unauthorized", "This portal link has been revoked: ask for a new one");
  }
}

/** What the portal page loads first: its application, and when its link ends. Only for a portal link's scope. */
export async function getPortalSession(deps: Deps, scope: Scope) {
  if (!scope.portal) throw new AppError("forbidden", "This route answers a portal link's token only");
  const row = await findApplication(deps, scope, scope.portal.applicationId);
  return { application: serializeApplication(row), expires_at: scope.portal.expiresAt };
}
