import { and, desc, eq, inArray } from "drizzle-orm";
import { DESTINATION_DEFAULTS, type SigningAlgorithm } from "../contracts/destinations";
import {
  createEndpointInput,
  rotateSecretInput,
  SECRET_ROTATION_OVERLAP_MS,
  updateEndpointInput,
  type CreateEndpointInput,
  type EndpointDto,
  type RotateSecretInput,
  type UpdateEndpointInput,
} from "../contracts/endpoints";
import { AppError, notFound, parseOrThrow } from "../contracts/errors";
import { retryScheduleText } from "../contracts/retrySchedule";
import { hex32, idPrefix } from "../contracts/ids";
import { applicationEndpoints, applications, deliveryAttempts, destinations } from "../db/schema";
import { lockRow } from "../db/rowLock";
import { transaction } from "../db/transaction";
import { findApplication } from "./applications";
import { iso } from "../core/clock";
import { recordAudit } from "../domain/audit";
import type { Deps, Scope } from "../domain/deps";
import { publicKeyOfRow, signingKeyFor } from "../domain/destinationSecrets";
import { settleMessages, type MessageSettlement } from "../domain/messageSettlement";
import { checkPortalUrl } from "./endpointGuard";

/**
 * Application endpoints (docs/decisions.md D10, docs/outbound.md). Each endpoint
 * delivers through a destination row of its own, `dst_<endpoint id>`, with
 * application_id set (hidden from /v1/destinations): that row holds what the
 * delivery engine reads (url, status, rate limit, the current signing
 * secret), the endpoint row what only endpoints have.
 */

type EndpointRow = typeof applicationEndpoints.$inferSelect;
type DestinationRow = typeof destinations.$inferSelect;
interface Joined {
  endpoint: EndpointRow;
  destination: DestinationRow;
}

export const endpointDestinationId = (endpointId: string) => idPrefix.destination + endpointId;

export function serializeEndpoint({ endpoint: e, destination: d }: Joined): EndpointDto {
  return {
    id: e.id,
    org_id: e.orgId,
    env_id: e.envId,
    application_id: e.applicationId,
    url: d.url,
    description: e.description,
    signing_algorithm: d.signingAlgorithm as EndpointDto["signing_algorithm"],
    status: d.status,
    filter_types: e.filterTypes,
    rate_limit_per_second: d.rateLimitPerSecond,
    retry_schedule: d.retrySchedule,
    expires_at: e.expiresAt,
    ordered: e.ordered === 1,
    on_dlq: e.onDlq as EndpointDto["on_dlq"],
    portal_held: e.portalHeld,
    created_at: e.createdAt,
    updated_at: e.updatedAt,
  };
}

/** The name the hidden destination carries: attempts and issues show it as destination_name. */
const destinationName = (app: { name: string }, url: string) => `${app.name}: ${url}`.slice(0, 500);

/** Stored with duplicates removed; [] is stored as null: both mean every type. */
function filterTypesText(types: string[] | null | undefined): string | null {
  if (!types || types.length === 0) return null;
  return JSON.stringify([...new Set(types)]);
}

const isoOrNull = (s: string | null | undefined) => (s ? new Date(s).toISOString() : null);

export async function findEndpoint(deps: Deps, scope: Scope, appId: string, endpointId: string): Promise<Joined & { app: typeof applications.$inferSelect }> {
  const app = await findApplication(deps, scope, appId);
  if (!/^[0-9a-f]{32}$/.test(endpointId)) throw notFound("Endpoint");
  const [row] = await deps.db
    .select({ endpoint: applicationEndpoints, destination: destinations })
    .from(applicationEndpoints)
    .innerJoin(destinations, eq(destinations.id, applicationEndpoints.destinationId))
    .where(and(eq(applicationEndpoints.id, endpointId), eq(applicationEndpoints.applicationId, app.id)))
    .limit(1);
  if (!row) throw notFound("Endpoint");
  return { ...row, app };
}

/** How many endpoints an application may have unless HOOKRELAY_MAX_ENDPOINTS_PER_APP says otherwise. */
export const DEFAULT_MAX_ENDPOINTS_PER_APP = 20;

export async function createEndpoint(deps: Deps, scope: Scope, appId: string, raw: CreateEndpointInput) {
  const input = parseOrThrow(createEndpointInput, raw, "Invalid endpoint");
  const app = await findApplication(deps, scope, appId);
  if (scope.portal) checkPortalUrl(deps, app, input.url);
  const now = iso(deps.clock.now());
  const id = hex32();
  const signing = signingKeyFor(input.signing_algorithm, input.secret, "secret");
  const destination: DestinationRow = {
    id: endpointDestinationId(id),
    orgId: app.orgId,
    envId: app.envId,
    name: destinationName(app, input.url),
    url: input.url,
    httpMethod: "POST",
    headers: null,
    authType: "none",
    authConfig: null,
    timeoutMs: DESTINATION_DEFAULTS.timeout_ms,
    rateLimitPerSecond: input.rate_limit_per_second ?? null,
    maxRetries: DESTINATION_DEFAULTS.max_retries,
    retryStrategy: DESTINATION_DEFAULTS.retry_strategy,
    retryIntervalSeconds: DESTINATION_DEFAULTS.retry_interval_seconds,
    retrySchedule: retryScheduleText(input.retry_schedule),
    signingSecret: deps.secrets.seal(signing.key),
    signingAlgorithm: signing.algorithm,
    status: input.status ?? "active",
    applicationId: app.id,
    createdAt: now,
    updatedAt: now,
  };
  const endpoint: EndpointRow = {
    id,
    orgId: app.orgId,
    envId: app.envId,
    applicationId: app.id,
    destinationId: destination.id,
    description: input.description ?? null,
    filterTypes: filterTypesText(input.filter_types),
    expiresAt: isoOrNull(input.expires_at),
    previousSecret: null,
    previousSecretExpiresAt: null,
    failingSince: null,
    portalHeld: scope.portal ? 1 : 0,
    ordered: input.ordered ? 1 : 0,
    onDlq: input.on_dlq ?? "continue",
    createdAt: now,
    updatedAt: now,
  };
  const max = deps.settings.maxEndpointsPerApp ?? DEFAULT_MAX_ENDPOINTS_PER_APP;
  await transaction(deps.db, async (tx) => {
    // Counted under the application's row lock: two creates at once cannot both take the last place.
    await lockRow(tx, applications, app.id);
    const count = await tx.$count(applicationEndpoints, eq(applicationEndpoints.applicationId, app.id));
    if (count >= max) {
      throw new AppError("conflict", `Application ${app.uid} has ${count} endpoints, the most it may have (HOOKRELAY_MAX_ENDPOINTS_PER_APP): delete one first`, { max_endpoints: max });
    }
    await tx.insert(destinations).values(destination);
    await tx.insert(applicationEndpoints).values(endpoint);
    await recordAudit(deps, scope, { action: "create", resourceType: "endpoint", resourceId: id, after: serializeEndpoint({ endpoint, destination }), envId: app.envId });
  });
  return { endpoint: serializeEndpoint({ endpoint, destination }) };
}

/** The application's endpoints, newest first. */
export async function listEndpoints(deps: Deps, scope: Scope, appId: string) {
  const app = await findApplication(deps, scope, appId);
  const rows = await deps.db
    .select({ endpoint: applicationEndpoints, destination: destinations })
    .from(applicationEndpoints)
    .innerJoin(destinations, eq(destinations.id, applicationEndpoints.destinationId))
    .where(eq(applicationEndpoints.applicationId, app.id))
    .orderBy(desc(applicationEndpoints.createdAt), desc(applicationEndpoints.id));
  return { endpoints: rows.map(serializeEndpoint) };
}

export async function getEndpoint(deps: Deps, scope: Scope, appId: string, endpointId: string) {
  return { endpoint: serializeEndpoint(await findEndpoint(deps, scope, appId, endpointId)) };
}

/**
 * PATCH: the fields given. Enabling an endpoint again clears its failure
 * clock (HOOKRELAY_ENDPOINT_DISABLE_AFTER counts from its next failure).
 */
export async function updateEndpoint(deps: Deps, scope: Scope, appId: string, endpointId: string, raw: UpdateEndpointInput) {
  return transaction(deps.db, () => updateEndpointIn(deps, scope, appId, endpointId, raw));
}

async function updateEndpointIn(deps: Deps, scope: Scope, appId: string, endpointId: string, raw: UpdateEndpointInput) {
  const input = parseOrThrow(updateEndpointInput, raw, "Invalid endpoint");
  const current = await findEndpoint(deps, scope, appId, endpointId);
  if (input.url !== undefined && scope.portal) checkPortalUrl(deps, current.app, input.url);
  const now = iso(deps.clock.now());
  const endpoint: EndpointRow = { ...current.endpoint, updatedAt: now };
  const destination: DestinationRow = { ...current.destination, updatedAt: now };
  if (input.url !== undefined) {
    destination.url = input.url;
    destination.name = destinationName(current.app, input.url);
    // Whoever set the URL last decides whether it is held (portalHeldBlocksPrivate).
    endpoint.portalHeld = scope.portal ? 1 : 0;
  }
  if (input.description !== undefined) endpoint.description = input.description;
  if (input.filter_types !== undefined) endpoint.filterTypes = filterTypesText(input.filter_types);
  if (input.rate_limit_per_second !== undefined) destination.rateLimitPerSecond = input.rate_limit_per_second;
  if (input.retry_schedule !== undefined) destination.retrySchedule = retryScheduleText(input.retry_schedule);
  if (input.signing_algorithm !== undefined && input.signing_algorithm !== destination.signingAlgorithm) {
    // A new algorithm is a rotation to a new key of its kind: the old key keeps signing through the overlap.
    Object.assign(endpoint, overlapFrom(current.destination, deps.clock.now()));
    destination.signingSecret = deps.secrets.seal(signingKeyFor(input.signing_algorithm, undefined, "signing_algorithm").key);
    destination.signingAlgorithm = input.signing_algorithm;
  }
  if (input.expires_at !== undefined) endpoint.expiresAt = isoOrNull(input.expires_at);
  if (input.ordered !== undefined) endpoint.ordered = input.ordered ? 1 : 0;
  if (input.on_dlq !== undefined) endpoint.onDlq = input.on_dlq;
  if (input.status !== undefined) {
    if (input.status === "active" && destination.status !== "active") endpoint.failingSince = null;
    destination.status = input.status;
  }
  await transaction(deps.db, async (tx) => {
    const { id: _e, ...endpointChanges } = endpoint;
    const { id: _d, ...destinationChanges } = destination;
    await tx.update(applicationEndpoints).set(endpointChanges).where(eq(applicationEndpoints.id, endpoint.id));
    await tx.update(destinations).set(destinationChanges).where(eq(destinations.id, destination.id));
    await recordAudit(deps, scope, { action: "update", resourceType: "endpoint", resourceId: endpoint.id, before: serializeEndpoint(current), after: serializeEndpoint({ endpoint, destination }) });
  });
  deps.bus.publish({ type: "destination.updated", destinationId: destination.id });
  return { endpoint: serializeEndpoint({ endpoint, destination }) };
}

/**
 * Deletes the endpoint (its destination row, and with it its issues).
 * Deliveries still queued for it are dropped and no longer hold their
 * messages `pending`; one in flight is recorded as it ends.
 */
export async function deleteEndpoint(deps: Deps, scope: Scope, appId: string, endpointId: string) {
  const now = deps.clock.now();
  const { destination, changed } = await transaction(deps.db, async (tx) => {
    const current = await findEndpoint(deps, scope, appId, endpointId);
    const { destination } = current;
    const dropped = await tx
      .delete(deliveryAttempts)
      .where(and(eq(deliveryAttempts.destinationId, destination.id), inArray(deliveryAttempts.status, ["queued", "held"])))
      .returning({ eventId: deliveryAttempts.eventId });
    const settlements = new Map<string, MessageSettlement>();
    for (const d of dropped) {
      const s = settlements.get(d.eventId) ?? { settled: 0, dlq: 0 };
      s.settled++;
      settlements.set(d.eventId, s);
    }
    const settled = await settleMessages(tx, settlements, now);
    await tx.delete(destinations).where(eq(destinations.id, destination.id));
    await recordAudit(deps, scope, { action: "delete", resourceType: "endpoint", resourceId: current.endpoint.id, before: serializeEndpoint(current) });
    return { destination, changed: settled.changed };
  });
  deps.bus.publish({ type: "destination.updated", destinationId: destination.id });
  for (const e of changed) deps.bus.publish({ type: "event.updated", orgId: e.orgId, envId: e.envId, eventId: e.id, sourceId: e.sourceId });
  return { success: true as const };
}

/** The replaced key keeps signing beside the new one until the overlap ends. */
function overlapFrom(replaced: DestinationRow, now: Date): Pick<EndpointRow, "previousSecret" | "previousSecretExpiresAt"> {
  return { previousSecret: replaced.signingSecret, previousSecretExpiresAt: iso(new Date(now.getTime() + SECRET_ROTATION_OVERLAP_MS)) };
}

/** An ed25519 endpoint's public key: not a secret, a read key (or its portal link) may read it. */
export async function getEndpointPublicKey(deps: Deps, scope: Scope, appId: string, endpointId: string) {
  const { destination } = await findEndpoint(deps, scope, appId, endpointId);
  return publicKeyOfRow(destination, deps.secrets, "endpoint");
}

/** The plaintext signing secret: the one place it leaves the database. */
export async function getEndpointSecret(deps: Deps, scope: Scope, appId: string, endpointId: string) {
  const { destination } = await findEndpoint(deps, scope, appId, endpointId);
  return { secret: deps.secrets.open(destination.signingSecret) };
}

/**
 * Replaces the signing secret (the one given, or a new one). For 24 hours
 * the replaced secret keeps signing beside the new one, so a receiver can
 * switch to the new secret at any moment within that time without one
 * message failing its check. A second rotation within the 24 hours drops the
 * oldest secret: only the one it replaces keeps signing.
 */
export async function rotateEndpointSecret(deps: Deps, scope: Scope, appId: string, endpointId: string, raw: RotateSecretInput = {}) {
  const input = parseOrThrow(rotateSecretInput, raw ?? {}, "Invalid rotation");
  const now = deps.clock.now();
  const { destination, secret } = await transaction(deps.db, async (tx) => {
    const { endpoint, destination } = await findEndpoint(deps, scope, appId, endpointId);
    // A new key of the same algorithm, or the one given (its prefix chooses the algorithm).
    const signing = signingKeyFor(input.secret === undefined ? (destination.signingAlgorithm as SigningAlgorithm) : undefined, input.secret, "secret");
    await tx
      .update(destinations)
      .set({ signingSecret: deps.secrets.seal(signing.key), signingAlgorithm: signing.algorithm, updatedAt: iso(now) })
      .where(eq(destinations.id, destination.id));
    await tx
      .update(applicationEndpoints)
      .set({ ...overlapFrom(destination, now), updatedAt: iso(now) })
      .where(eq(applicationEndpoints.id, endpoint.id));
    // The secret itself never enters the trail: that it was rotated is the news.
    await recordAudit(deps, scope, { action: "rotate_secret", resourceType: "endpoint", resourceId: endpoint.id });
    return { destination, secret: signing.key };
  });
  deps.bus.publish({ type: "destination.updated", destinationId: destination.id });
  return { secret };
}
