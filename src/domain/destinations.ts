import { can } from "../contracts/roles";
import { retryScheduleText } from "../contracts/retrySchedule";
import { and, desc, eq, isNull } from "drizzle-orm";
import { destinations } from "../db/schema";
import {
  authConfigSchemas,
  DESTINATION_DEFAULTS,
  type AuthType,
  type CreateDestinationInput,
  type Destination,
  type DestinationStatus,
  type SigningAlgorithm,
  type UpdateDestinationInput,
} from "../contracts/destinations";
import { AppError, notFound, fromZod } from "../contracts/errors";
import { newId, normalizeId } from "../contracts/ids";
import { iso } from "../core/clock";
import { transaction } from "../db/transaction";
import { recordAudit } from "./audit";
import type { Deps, Scope } from "./deps";
import { createScope, inScope } from "./scope";
import type { SecretBox } from "./secrets";
import { maskedAuthConfig, openAuthConfig, publicKeyOfRow, sealHeaders, shownHeaders, signingKeyFor } from "./destinationSecrets";

type DestinationRow = typeof destinations.$inferSelect;
type AuthConfig = Record<string, unknown>;

/**
 * The API shape: signing_secret never appears, auth_config without its
 * secret fields, and the custom headers' values (they carry Authorization
 * and API keys) masked unless the caller may read secrets (scope `*`, and a role above viewer).
 */
export function serializeDestination(row: DestinationRow, secrets: SecretBox, scope: Pick<Scope, "role">): Destination {
  return {
    id: row.id,
    org_id: row.orgId,
    env_id: row.envId,
    name: row.name,
    url: row.url,
    http_method: row.httpMethod,
    headers: shownHeaders(row, secrets, !can(scope.role, "readSecrets")),
    auth_type: row.authType,
    auth_config: maskedAuthConfig(row, secrets),
    timeout_ms: row.timeoutMs,
    rate_limit_per_second: row.rateLimitPerSecond,
    max_retries: row.maxRetries,
    retry_strategy: row.retryStrategy,
    retry_interval_seconds: row.retryIntervalSeconds,
    signing_algorithm: row.signingAlgorithm as Destination["signing_algorithm"],
    retry_schedule: row.retrySchedule,
    status: row.status,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

/**
 * What the audit trail records of a destination: the API shape as a viewer
 * sees it (header values masked), and the sealed secrets under names the
 * trail masks (src/domain/audit.ts), so that a changed secret shows as
 * changed, never as what it is.
 */
const audited = (row: DestinationRow, secrets: SecretBox) => ({
  ...serializeDestination(row, secrets, { role: "viewer" }),
  signing_secret: row.signingSecret,
  secret_headers: row.headers,
  auth_secret: row.authConfig,
});

/**
 * auth_config checked against auth_type. When the type stays the same, the
 * given fields are laid over the stored ones, so a PATCH that changes only
 * the username need not resend the password it cannot read back.
 */
function resolveAuthConfig(type: AuthType, given: AuthConfig | null | undefined, stored: AuthConfig | null): AuthConfig | null {
  if (type === "none") {
    if (given && Object.keys(given).length > 0) {
      throw new AppError("validation_error", "auth_config must be empty when auth_type is none", [{ field: "body.auth_config", message: "must be null or absent for auth_type none" }]);
    }
    return null;
  }
  const merged = given === null ? {} : { ...(stored ?? {}), ...(given ?? {}) };
  const parsed = authConfigSchemas[type].safeParse(merged);
  if (!parsed.success) {
    throw fromZod(parsed.error, `Invalid auth_config for auth_type ${type}`, ["body", "auth_config"]);
  }
  return parsed.data;
}

export async function createDestination(deps: Deps, scope: Scope, input: CreateDestinationInput) {
  const { db, clock, secrets } = deps;
  const { orgId, envId } = createScope(scope, input);
  const authType = input.auth_type ?? DESTINATION_DEFAULTS.auth_type;
  const auth = resolveAuthConfig(authType, input.auth_config, null);
  const now = iso(clock.now());
  const signing = signingKeyFor(input.signing_algorithm, input.signing_secret, "signing_secret");
  const row: DestinationRow = {
    id: newId("destination"),
    orgId,
    envId,
    name: input.name,
    url: input.url,
    httpMethod: input.http_method ?? DESTINATION_DEFAULTS.http_method,
    headers: sealHeaders(secrets, input.headers),
    authType,
    authConfig: auth ? secrets.seal(JSON.stringify(auth)) : null,
    timeoutMs: input.timeout_ms ?? DESTINATION_DEFAULTS.timeout_ms,
    rateLimitPerSecond: input.rate_limit_per_second ?? null,
    maxRetries: input.max_retries ?? DESTINATION_DEFAULTS.max_retries,
    retryStrategy: input.retry_strategy ?? DESTINATION_DEFAULTS.retry_strategy,
    retryIntervalSeconds: input.retry_interval_seconds ?? DESTINATION_DEFAULTS.retry_interval_seconds,
    retrySchedule: retryScheduleText(input.retry_schedule),
    signingSecret: secrets.seal(signing.key),
    signingAlgorithm: signing.algorithm,
    status: input.status ?? DESTINATION_DEFAULTS.status,
    applicationId: null,
    createdAt: now,
    updatedAt: now,
  };
  await transaction(db, async () => {
    await db.insert(destinations).values(row);
    await recordAudit(deps, scope, { action: "create", resourceType: "destination", resourceId: row.id, after: audited(row, secrets), envId: row.envId });
  });
  return { destination: serializeDestination(row, secrets, scope) };
}

/**
 * The operator's own destinations: those an application endpoint delivers
 * through (application_id set) belong to the outbound API and are absent here.
 */
const operatorOwned = (scope: Pick<Scope, "orgId" | "envId">) => and(inScope(destinations, scope), isNull(destinations.applicationId));

/** The caller's destinations, newest first. */
export async function listDestinations({ db, secrets }: Deps, scope: Scope, filters: { status?: DestinationStatus } = {}) {
  const rows = await db
    .select()
    .from(destinations)
    .where(and(operatorOwned(scope), filters.status ? eq(destinations.status, filters.status) : undefined))
    .orderBy(desc(destinations.createdAt), desc(destinations.id));
  return { destinations: rows.map((r) => serializeDestination(r, secrets, scope)) };
}

/** A destination of the caller's scope, by id with or without `dst_`; 404 otherwise. */
export async function findDestinationRow({ db }: Deps, scope: Scope, rawId: string): Promise<DestinationRow> {
  const id = normalizeId(rawId, "destination", "Destination");
  const [row] = await db
    .select()
    .from(destinations)
    .where(and(eq(destinations.id, id), operatorOwned(scope)))
    .limit(1);
  if (!row) throw notFound("Destination");
  return row;
}

export async function getDestination(deps: Deps, scope: Scope, rawId: string) {
  return { destination: serializeDestination(await findDestinationRow(deps, scope, rawId), deps.secrets, scope) };
}

/** The plaintext signing secret: the one place it leaves the database. */
export async function getDestinationSecret(deps: Deps, scope: Scope, rawId: string) {
  const row = await findDestinationRow(deps, scope, rawId);
  return { secret: deps.secrets.open(row.signingSecret) };
}

/** An ed25519 destination's public key: not a secret, a read key may read it. */
export async function getDestinationPublicKey(deps: Deps, scope: Scope, rawId: string) {
  return publicKeyOfRow(await findDestinationRow(deps, scope, rawId), deps.secrets, "destination");
}

export async function updateDestination(deps: Deps, scope: Scope, rawId: string, input: UpdateDestinationInput) {
  return transaction(deps.db, () => updateDestinationIn(deps, scope, rawId, input));
}

async function updateDestinationIn(deps: Deps, scope: Scope, rawId: string, input: UpdateDestinationInput) {
  const { db, clock, secrets } = deps;
  const row = await findDestinationRow(deps, scope, rawId);
  const next: DestinationRow = { ...row };
  if (input.name !== undefined) next.name = input.name;
  if (input.url !== undefined) next.url = input.url;
  if (input.http_method !== undefined) next.httpMethod = input.http_method;
  if (input.headers !== undefined) next.headers = sealHeaders(secrets, input.headers);
  if (input.auth_type !== undefined || input.auth_config !== undefined) {
    const authType = input.auth_type ?? (row.authType as AuthType);
    const stored = authType === row.authType ? openAuthConfig(row, secrets, { lenient: true }) : null;
    const auth = resolveAuthConfig(authType, input.auth_config, stored);
    next.authType = authType;
    next.authConfig = auth ? secrets.seal(JSON.stringify(auth)) : null;
  }
  if (input.timeout_ms !== undefined) next.timeoutMs = input.timeout_ms;
  if (input.rate_limit_per_second !== undefined) next.rateLimitPerSecond = input.rate_limit_per_second;
  if (input.max_retries !== undefined) next.maxRetries = input.max_retries;
  if (input.retry_strategy !== undefined) next.retryStrategy = input.retry_strategy;
  if (input.retry_interval_seconds !== undefined) next.retryIntervalSeconds = input.retry_interval_seconds;
  if (input.retry_schedule !== undefined) next.retrySchedule = retryScheduleText(input.retry_schedule);
  // A new algorithm needs key material of its kind: the one given, or a new one.
  const algorithmChanges = input.signing_algorithm !== undefined && input.signing_algorithm !== row.signingAlgorithm;
  if (input.signing_secret !== undefined || algorithmChanges) {
    // A key given alone chooses the algorithm by its prefix.
    const algorithm = input.signing_algorithm ?? (input.signing_secret === undefined ? (row.signingAlgorithm as SigningAlgorithm) : undefined);
    const signing = signingKeyFor(algorithm, input.signing_secret, "signing_secret");
    next.signingSecret = secrets.seal(signing.key);
    next.signingAlgorithm = signing.algorithm;
  }
  if (input.status !== undefined) next.status = input.status;
  next.updatedAt = iso(clock.now());
  const { id, orgId, envId, createdAt, ...changes } = next;
  await db
    .update(destinations)
    .set(changes)
    .where(and(eq(destinations.id, id), eq(destinations.orgId, orgId), eq(destinations.envId, envId)));
  deps.bus.publish({ type: "destination.updated", destinationId: id });
  // Deliveries held while paused are due now: wake the workers rather than wait for their poll.
  if (row.status === "paused" && next.status === "active") deps.bus.publish({ type: "delivery.queued" });
  await recordAudit(deps, scope, { action: "update", resourceType: "destination", resourceId: id, before: audited(row, secrets), after: audited(next, secrets) });
  return { destination: serializeDestination(next, secrets, scope) };
}

/** Deletes the destination; its connections go with it (foreign key cascade). */
export async function deleteDestination(deps: Deps, scope: Scope, rawId: string) {
  const id = normalizeId(rawId, "destination", "Destination");
  await transaction(deps.db, async () => {
    const [deleted] = await deps.db
      .delete(destinations)
      .where(and(eq(destinations.id, id), operatorOwned(scope)))
      .returning();
    if (!deleted) throw notFound("Destination");
    await recordAudit(deps, scope, { action: "delete", resourceType: "destination", resourceId: id, before: audited(deleted, deps.secrets) });
  });
  deps.bus.publish({ type: "destination.updated", destinationId: id });
  return { success: true as const };
}
