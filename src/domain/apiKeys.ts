import { and, desc, eq, sql } from "drizzle-orm";
import { apiKeys, environments, memberships, users } from "../db/schema";
import type { Db } from "../db/db";
import { can, weaker, type Role } from "../contracts/roles";
import { AppError, notFound } from "../contracts/errors";
import { newId, normalizeId } from "../contracts/ids";
import type { CreateApiKeyInput } from "../contracts/apiKeys";
import { iso } from "../core/clock";
import { apiKeyCredential } from "./credentials";
import { instanceOwnerId } from "./instanceOwner";
import { randomToken, sha256Hex } from "./hash";
import { transaction } from "../db/transaction";
import { recordAudit } from "./audit";
import type { Deps, Scope } from "./deps";

export const KEY_PREFIX_LENGTH = 12;

type ApiKeyRow = typeof apiKeys.$inferSelect;

export function serializeApiKey(row: ApiKeyRow, userEmail: string | null = null) {
  return {
    id: row.id,
    name: row.name,
    key_prefix: row.keyPrefix,
    scopes: row.scopes,
    request_count: row.requestCount,
    revoked: row.revoked,
    created_at: row.createdAt,
    last_used_at: row.lastUsedAt,
    org_id: row.orgId,
    env_id: row.envId,
    user_id: row.userId,
    user_email: userEmail,
  };
}

/** What the trail records of a key: its settings, not its use (the count and last use change on every request). */
function auditedKey(row: ApiKeyRow) {
  const { request_count: _count, last_used_at: _used, ...shown } = serializeApiKey(row);
  return shown;
}

export async function createApiKey(deps: Deps, scope: Scope, input: CreateApiKeyInput) {
  const { db, clock } = deps;
  const orgId = input.org_id ?? scope.orgId;
  const envId = input.env_id ?? scope.envId;
  if (orgId !== scope.orgId) throw notFound("Environment");
  const [env] = await db
    .select({ id: environments.id })
    .from(environments)
    .where(and(eq(environments.id, envId), eq(environments.orgId, orgId)))
    .limit(1);
  if (!env) throw notFound("Environment");
  const key = `hr_${randomToken(24)}`;
  const row: ApiKeyRow = {
    id: newId("apiKey"),
    orgId,
    envId,
    // Local CLI mode is the operator on the machine: the key is the instance owner's (docs/api.md).
    userId: scope.userId ?? (scope.via === "local" ? await instanceOwnerId(db) : null),
    name: input.name,
    keyHash: sha256Hex(key),
    keyPrefix: key.slice(0, KEY_PREFIX_LENGTH),
    scopes: input.scopes ?? "*",
    requestCount: 0,
    revoked: 0,
    createdAt: iso(clock.now()),
    lastUsedAt: null,
    revokedAt: null,
  };
  await transaction(db, async () => {
    await db.insert(apiKeys).values(row);
    await recordAudit(deps, scope, { action: "create", resourceType: "api_key", resourceId: row.id, after: auditedKey(row), envId: row.envId });
  });
  return { id: row.id, name: row.name, key, key_prefix: row.keyPrefix, scopes: row.scopes, created_at: row.createdAt };
}

/**
 * Keys of the caller's organization, newest first, never with the key
 * itself: an admin or owner sees every member's (docs/teams.md), anyone else
 * only their own.
 */
export async function listApiKeys({ db }: Deps, scope: Scope) {
  const rows = await db
    .select({ key: apiKeys, email: users.email })
    .from(apiKeys)
    .leftJoin(users, eq(users.id, apiKeys.userId))
    .where(and(eq(apiKeys.orgId, scope.orgId), can(scope.role, "administer") ? undefined : ownKeys(scope)))
    .orderBy(desc(apiKeys.createdAt));
  return { api_keys: rows.map((r) => serializeApiKey(r.key, r.email)) };
}

/** A caller below admin reaches only the keys it made (none, without a user). */
const ownKeys = (scope: Scope) => (scope.userId ? eq(apiKeys.userId, scope.userId) : sql`1 = 0`);

/** Revokes a key of the organization: any, for an admin or owner; another member's is a 403 to anyone else. */
export async function revokeApiKey(deps: Deps, scope: Scope, rawId: string) {
  const { db, clock, bus } = deps;
  const id = normalizeId(rawId, "apiKey", "API key");
  await transaction(db, async () => {
    const [before] = await db.select().from(apiKeys).where(and(eq(apiKeys.id, id), eq(apiKeys.orgId, scope.orgId))).limit(1);
    if (!before) throw notFound("API key");
    if (!can(scope.role, "administer") && (scope.userId === null || before.userId !== scope.userId)) {
      throw new AppError("forbidden", `This API key is another member's: revoking it needs the admin role or higher; yours here is ${scope.role}`);
    }
    const [after] = await db.update(apiKeys).set({ revoked: 1, revokedAt: iso(clock.now()) }).where(eq(apiKeys.id, id)).returning();
    await recordAudit(deps, scope, { action: "revoke", resourceType: "api_key", resourceId: id, before: auditedKey(before), after: auditedKey(after!), envId: before.envId });
  });
  // Once committed (deps.bus publishes after the commit): live streams held open with the key end now, on every node.
  bus.publish({ type: "credential.revoked", credential: apiKeyCredential(id) });
  return { success: true as const };
}

/** Resolves a presented key to its scope and counts the use; revoked or unknown keys are refused at once. */
export async function authenticateApiKey({ db, clock }: Deps, key: string): Promise<Scope> {
  const [row] = await db
    .update(apiKeys)
    .set({ requestCount: sql`${apiKeys.requestCount} + 1`, lastUsedAt: iso(clock.now()) })
    .where(and(eq(apiKeys.keyHash, sha256Hex(key)), eq(apiKeys.revoked, 0)))
    .returning();
  if (!row) throw new AppError("unauthorized", "Invalid or revoked API key");
  const scopes = row.scopes ?? "*";
  return { orgId: row.orgId, envId: row.envId, userId: row.userId, via: "api_key", scopes, apiKeyId: row.id, actorName: row.name, role: weaker(await keyHolderRole(db, row), scopes === "read" ? "viewer" : "owner") };
}

/**
 * The role of the member a key belongs to, now: a key acts with at most it,
 * and not at all once the member is disabled or gone (docs/teams.md). A key
 * with no member (made before teams, its creator since deleted) acts as an admin.
 */
async function keyHolderRole(db: Db, row: Pick<ApiKeyRow, "orgId" | "userId">): Promise<Role> {
  if (row.userId === null) return "admin";
  const [member] = await db
    .select({ role: memberships.role, status: memberships.status })
    .from(memberships)
    .where(and(eq(memberships.orgId, row.orgId), eq(memberships.userId, row.userId)))
    .limit(1);
  if (!member || member.status !== "active") throw new AppError("unauthorized", "This API key's member is no longer active in its organization");
  return member.role as Role;
}
