import { and, desc, eq, isNotNull, lt, lte, or, sql } from "drizzle-orm";
import { DESTINATION_DEFAULTS } from "../contracts/destinations";
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
import { hex32, idPrefix } from "../contracts/ids";
import { decodeCursor, encodeCursor } from "../contracts/pagination";
import { listEndpointAttemptsQuery, type ListEndpointAttemptsQuery } from "../contracts/messages";
import type { Db } from "../db/db";
import { preparedFor } from "../db/prepared";
import { applicationEndpoints, applications, connections, deliveryAttempts, destinations, issues } from "../db/schema";
import { lockRow } from "../db/rowLock";
import { transaction } from "../db/transaction";
import { refusalReason } from "../outgoing/ssrf";
import { findApplication } from "./applications";
import { iso } from "../core/clock";
import type { Deps, Scope } from "./deps";
import { attemptSerializerFor } from "./deliveryAttempts";
import { generateSigningSecret } from "./destinations";

import type { OpenedIssue } from "./issues";
import { settleMessages, type MessageSettlement } from "./messages";

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
    signing_algorithm: e.signingAlgorithm,
    status: d.status,
    filter_types: e.filterTypes,
    rate_limit_per_second: d.rateLimitPerSecond,
    expires_at: e.expiresAt,
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

async function findEndpoint(deps: Deps, scope: Scope, appId: string, endpointId: string): Promise<Joined & { app: typeof applications.$inferSelect }> {
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

/**
 * What marks an endpoint as portal-held (docs/outbound.md, "What a portal
 * link can reach"): its URL was set through a portal link. Such an endpoint,
 * and every delivery to it, is held to the private-address block unless its
 * application is opted in (allow_private_endpoints), whatever the server's
 * default. An operator (API key, session, CLI) setting the URL releases it.
 */
export function portalHeldBlocksPrivate(held: number, appOptedIn: number, serverBlocksPrivate: boolean): boolean {
  return held === 1 && appOptedIn !== 1 ? true : serverBlocksPrivate;
}

/**
 * A portal link may not point an endpoint at an address the block refuses.
 * Checked here on what the URL itself names (an IP literal in any spelling,
 * `localhost`); names are resolved and checked at each delivery instead, so
 * that no answer here tells a portal user what the operator's DNS knows.
 */
function checkPortalUrl(deps: Deps, app: { allowPrivateEndpoints: number }, url: string) {
  const blockPrivate = portalHeldBlocksPrivate(1, app.allowPrivateEndpoints, deps.settings.blockPrivateDestinations);
  // A trailing dot names the same host ("localhost." is localhost).
  const host = new URL(url).hostname.replace(/^\[(.*)\]$/, "$1").replace(/\.$/, "").toLowerCase();
  const literal = /^[\d.]+$/.test(host) || host.includes(":");
  const reason = literal ? refusalReason(host, blockPrivate) : host === "localhost" || host.endsWith(".localhost") ? (blockPrivate ? "a loopback name" : null) : null;
  if (reason) {
    throw new AppError("validation_error", `A portal link may not point an endpoint at ${host}: it is ${reason}`, [
      { field: "body.url", message: "must point at a public address: a portal link cannot reach loopback, private, link-local or other non-global addresses" },
    ]);
  }
}

export async function createEndpoint(deps: Deps, scope: Scope, appId: string, raw: CreateEndpointInput) {
  const input = parseOrThrow(createEndpointInput, raw, "Invalid endpoint");
  const app = await findApplication(deps, scope, appId);
  if (scope.portal) checkPortalUrl(deps, app, input.url);
  const now = iso(deps.clock.now());
  const id = hex32();
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
    signingSecret: deps.secrets.seal(input.secret ?? generateSigningSecret()),
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
    signingAlgorithm: input.signing_algorithm ?? "standard-webhooks",
    filterTypes: filterTypesText(input.filter_types),
    expiresAt: isoOrNull(input.expires_at),
    previousSecret: null,
    previousSecretExpiresAt: null,
    failingSince: null,
    portalHeld: scope.portal ? 1 : 0,
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
  if (input.signing_algorithm !== undefined) endpoint.signingAlgorithm = input.signing_algorithm;
  if (input.expires_at !== undefined) endpoint.expiresAt = isoOrNull(input.expires_at);
  if (input.status !== undefined) {
    if (input.status === "active" && destination.status !== "active") endpoint.failingSince = null;
    destination.status = input.status;
  }
  await transaction(deps.db, async (tx) => {
    const { id: _e, ...endpointChanges } = endpoint;
    const { id: _d, ...destinationChanges } = destination;
    await tx.update(applicationEndpoints).set(endpointChanges).where(eq(applicationEndpoints.id, endpoint.id));
    await tx.update(destinations).set(destinationChanges).where(eq(destinations.id, destination.id));
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
  const { destination } = await findEndpoint(deps, scope, appId, endpointId);
  const now = deps.clock.now();
  const changed = await transaction(deps.db, async (tx) => {
    const dropped = await tx
      .delete(deliveryAttempts)
      .where(and(eq(deliveryAttempts.destinationId, destination.id), eq(deliveryAttempts.status, "queued")))
      .returning({ eventId: deliveryAttempts.eventId });
    const settlements = new Map<string, MessageSettlement>();
    for (const d of dropped) {
      const s = settlements.get(d.eventId) ?? { settled: 0, dlq: 0 };
      s.settled++;
      settlements.set(d.eventId, s);
    }
    const settled = await settleMessages(tx, settlements, now);
    await tx.delete(destinations).where(eq(destinations.id, destination.id));
    return settled.changed;
  });
  deps.bus.publish({ type: "destination.updated", destinationId: destination.id });
  for (const e of changed) deps.bus.publish({ type: "event.updated", orgId: e.orgId, envId: e.envId, eventId: e.id, sourceId: e.sourceId });
  return { success: true as const };
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
  const { endpoint, destination } = await findEndpoint(deps, scope, appId, endpointId);
  const secret = input.secret ?? generateSigningSecret();
  const now = deps.clock.now();
  await transaction(deps.db, async (tx) => {
    await tx
      .update(destinations)
      .set({ signingSecret: deps.secrets.seal(secret), updatedAt: iso(now) })
      .where(eq(destinations.id, destination.id));
    await tx
      .update(applicationEndpoints)
      .set({ previousSecret: destination.signingSecret, previousSecretExpiresAt: iso(new Date(now.getTime() + SECRET_ROTATION_OVERLAP_MS)), updatedAt: iso(now) })
      .where(eq(applicationEndpoints.id, endpoint.id));
  });
  deps.bus.publish({ type: "destination.updated", destinationId: destination.id });
  return { secret };
}

/** The endpoint's attempts (every message, retries included), newest first, in cursor pages. */
export async function listEndpointAttempts(deps: Deps, scope: Scope, appId: string, endpointId: string, raw: ListEndpointAttemptsQuery = {}) {
  const query = parseOrThrow(listEndpointAttemptsQuery, raw ?? {}, "Invalid query", ["query"]);
  const { destination } = await findEndpoint(deps, scope, appId, endpointId);
  const a = deliveryAttempts;
  const conds = [eq(a.destinationId, destination.id), query.status ? eq(a.status, query.status) : undefined];
  if (query.cursor) {
    const c = decodeCursor(query.cursor, "next");
    conds.push(lte(a.createdAt, c.t), or(lt(a.createdAt, c.t), lt(a.id, c.id)));
  }
  const rows = await deps.db
    .select({ attempt: a, connectionName: connections.name, destinationName: destinations.name })
    .from(a)
    .leftJoin(connections, eq(connections.id, a.connectionId))
    .leftJoin(destinations, eq(destinations.id, a.destinationId))
    .where(and(...conds))
    .orderBy(desc(a.createdAt), desc(a.id))
    .limit(query.limit + 1);
  const page = rows.slice(0, query.limit);
  const last = page[page.length - 1];
  return { attempts: page.map(attemptSerializerFor(scope)), cursor: rows.length > query.limit && last ? encodeCursor({ t: last.attempt.createdAt, id: last.attempt.id }, "next") : null };
}

// ---------------------------------------------------------------- for the delivery worker

/** What sending to an endpoint needs beyond its destination row. */
export interface EndpointDelivery {
  applicationId: string;
  /** The secrets that sign a request at `now`: the current one, and a rotated-out one during its overlap. */
  signingSecrets(now: Date): string[];
  expiresAt: string | null;
  /** The application's rate_limit (deliveries per second across its endpoints); null: none. */
  applicationRateLimit: number | null;
  /** Whether the private-address block holds for deliveries to it (portalHeldBlocksPrivate). */
  blockPrivate: boolean;
}

/** The columns an endpoint's delivery settings are made from (the worker reads them with its destination, src/db/deliverySql.ts). */
export interface EndpointDeliveryColumns {
  applicationId: string;
  expiresAt: string | null;
  /** Sealed. */
  previousSecret: string | null;
  previousUntil: string | null;
  /** The destination's signing secret, sealed. */
  current: string;
  rateLimit: number | null;
  portalHeld: number | null;
  allowPrivateEndpoints: number | null;
}

export function endpointDeliveryFrom(row: EndpointDeliveryColumns, secrets: Pick<Deps["secrets"], "open">, serverBlocksPrivate: boolean): EndpointDelivery {
  const current = secrets.open(row.current);
  const previous = row.previousSecret && row.previousUntil ? { secret: secrets.open(row.previousSecret), until: Date.parse(row.previousUntil) } : null;
  return {
    applicationId: row.applicationId,
    expiresAt: row.expiresAt,
    applicationRateLimit: row.rateLimit,
    blockPrivate: portalHeldBlocksPrivate(row.portalHeld ?? 0, row.allowPrivateEndpoints ?? 0, serverBlocksPrivate),
    signingSecrets: (now) => (previous && now.getTime() < previous.until && previous.secret !== current ? [current, previous.secret] : [current]),
  };
}

// ---------------------------------------------------------------- bookkeeping, inside the recording transaction

/** What endpoint health needs of one recorded outcome (the queue's outcomes are passed as they are). */
export interface EndpointOutcome {
  attempt: { id: string; eventId: string; orgId: string; envId: string; destinationId: string; connectionId: string | null };
  status: "success" | "failed";
  error: string | null;
}

/** Failures that say something about the receiver (not: its endpoint was disabled or deleted meanwhile). */
const RECEIVER_FAILURE = /^(http_\d{3}|timeout|connection_error|ssrf_blocked)$/;

const ph = (name: string) => sql`${sql.placeholder(name)}`;

const healthStatements = preparedFor((db: Db) => ({
  healthy: db
    .update(applicationEndpoints)
    .set({ failingSince: null })
    .where(and(eq(applicationEndpoints.destinationId, ph("destinationId")), isNotNull(applicationEndpoints.failingSince)))
    .prepare(),
  /** Starts the failure clock (or keeps it); answers when it started, for endpoints only. */
  failing: db
    .update(applicationEndpoints)
    .set({ failingSince: sql`coalesce(${applicationEndpoints.failingSince}, ${ph("now")})` })
    .where(eq(applicationEndpoints.destinationId, ph("destinationId")))
    .returning({ id: applicationEndpoints.id, failingSince: applicationEndpoints.failingSince })
    .prepare(),
  disable: db
    .update(destinations)
    .set({ status: "disabled", updatedAt: ph("now") })
    .where(and(eq(destinations.id, ph("destinationId")), eq(destinations.status, "active")))
    .returning({ id: destinations.id })
    .prepare(),
  touch: db.update(applicationEndpoints).set({ updatedAt: ph("now") }).where(eq(applicationEndpoints.id, ph("id"))).prepare(),
  openIssue: db
    .insert(issues)
    .values({
      id: ph("id"),
      orgId: ph("orgId"),
      envId: ph("envId"),
      destinationId: ph("destinationId"),
      fingerprint: ph("fingerprint"),
      title: "Endpoint disabled",
      status: "open",
      occurrenceCount: 1,
      firstSeenAt: ph("now"),
      lastSeenAt: ph("now"),
      lastAttemptId: ph("attemptId"),
      lastEventId: ph("eventId"),
      lastError: ph("error"),
      lastStatusCode: null,
      createdAt: ph("now"),
      updatedAt: ph("now"),
    })
    .onConflictDoUpdate({
      target: issues.fingerprint,
      set: {
        status: "open",
        resolvedAt: null,
        occurrenceCount: sql`${issues.occurrenceCount} + 1`,
        lastSeenAt: sql`excluded.last_seen_at`,
        lastAttemptId: sql`excluded.last_attempt_id`,
        lastEventId: sql`excluded.last_event_id`,
        lastError: sql`excluded.last_error`,
        updatedAt: sql`excluded.updated_at`,
      },
    })
    .returning({ id: issues.id })
    .prepare(),
}));

/**
 * Keeps each endpoint's failure clock for a batch of recorded outcomes: a
 * success stops it, a failure starts it (if it is not running). An endpoint
 * whose clock has run `disableAfterMs` is disabled, and an issue
 * `<dst id>:endpoint_disabled` opens (or reopens) for it, which fires
 * issue_opened alert rules like any other issue. Only message deliveries
 * (no connection) concern endpoints; the rest are skipped without a query.
 * Inside the caller's write transaction.
 */
export async function recordEndpointHealth(db: Db, outcomes: readonly EndpointOutcome[], now: Date, disableAfterMs: number | undefined): Promise<{ opened: OpenedIssue[]; disabled: string[] }> {
  const last = new Map<string, EndpointOutcome & { anySuccess: boolean }>();
  for (const o of outcomes) {
    if (o.attempt.connectionId !== null) continue;
    if (o.status === "failed" && !(o.error && RECEIVER_FAILURE.test(o.error))) continue;
    const seen = last.get(o.attempt.destinationId);
    last.set(o.attempt.destinationId, { ...o, anySuccess: (seen?.anySuccess ?? false) || o.status === "success" });
  }
  const opened: OpenedIssue[] = [];
  const disabled: string[] = [];
  if (last.size === 0) return { opened, disabled };
  const s = healthStatements(db);
  const at = iso(now);
  for (const [destinationId, o] of last) {
    if (o.anySuccess) await s.healthy.execute({ destinationId });
    if (o.status === "success") continue;
    const [clock] = await s.failing.execute({ destinationId, now: at });
    if (!clock?.failingSince || disableAfterMs === undefined) continue;
    if (now.getTime() - Date.parse(clock.failingSince) < disableAfterMs) continue;
    if ((await s.disable.execute({ destinationId, now: at })).length === 0) continue;
    disabled.push(destinationId);
    await s.touch.execute({ id: clock.id, now: at });
    const days = Math.round((disableAfterMs / 86_400_000) * 10) / 10;
    const [issue] = await s.openIssue.execute({
      id: hex32(),
      orgId: o.attempt.orgId,
      envId: o.attempt.envId,
      destinationId,
      fingerprint: `${destinationId}:endpoint_disabled`,
      now: at,
      attemptId: o.attempt.id,
      eventId: o.attempt.eventId,
      error: `disabled after failing without a success since ${clock.failingSince} (${days} days or more); enable it again with PATCH status active`,
    });
    if (issue) opened.push({ id: issue.id, orgId: o.attempt.orgId, envId: o.attempt.envId });
  }
  return { opened, disabled };
}
