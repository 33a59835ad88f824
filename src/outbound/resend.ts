import { and, eq, inArray, sql } from "drizzle-orm";
import { AppError, notFound, parseOrThrow } from "../contracts/errors";
import { resendInput, type ResendInput } from "../contracts/messages";
import { applicationEndpoints, applications, connections, deliveryAttempts, destinations, events } from "../db/schema";
import { inWriteTurn } from "../db/writeTurn";
// Pure leaf shared with fan-out: whether an endpoint still takes deliveries.
import { isExpired } from "../rules/fanout";
import { iso } from "../core/clock";
import { insertQueuedAttempt, newQueuedAttempt } from "../domain/deliveries";
import { attemptSerializerFor } from "../domain/deliveryAttempts";
import { recordAudit } from "../domain/audit";
import { restartMessageChain } from "../domain/messageSettlement";
import type { Deps, Scope } from "../domain/deps";
import { findApplication } from "./applications";
import { attemptColumns, findMessage } from "./messages";

/** Resending a message to one endpoint (docs/outbound.md), and the budget portal links resend within. */

/** Resends a portal link may ask for per application and minute unless HOOKRELAY_PORTAL_RESENDS_PER_MINUTE says otherwise. */
export const DEFAULT_PORTAL_RESENDS_PER_MINUTE = 10;
const RESEND_WINDOW_MS = 60_000;

/**
 * Counts one portal resend against the application's window, or refuses it
 * (429, details.retry_after_seconds). One conditional UPDATE on the
 * application's row, so nodes sharing the database share the count and two
 * resends at once cannot both take the last place. Without it a portal user
 * could make the relay send as fast as they can click.
 */
async function takePortalResend(deps: Deps, applicationId: string, now: Date) {
  const limit = deps.settings.portalResendsPerMinute ?? DEFAULT_PORTAL_RESENDS_PER_MINUTE;
  const a = applications;
  const opened = iso(new Date(now.getTime() - RESEND_WINDOW_MS));
  const current = sql`(${a.portalResendWindow} IS NOT NULL AND ${a.portalResendWindow} > ${opened})`;
  const taken = await deps.db
    .update(a)
    .set({
      portalResendCount: sql`CASE WHEN ${current} THEN ${a.portalResendCount} + 1 ELSE 1 END`,
      portalResendWindow: sql`CASE WHEN ${current} THEN ${a.portalResendWindow} ELSE ${iso(now)} END`,
    })
    .where(and(eq(a.id, applicationId), sql`NOT (${current} AND ${a.portalResendCount} >= ${limit})`))
    .returning({ id: a.id });
  if (taken.length > 0) return;
  const [row] = await deps.db.select({ window: a.portalResendWindow }).from(a).where(eq(a.id, applicationId)).limit(1);
  const wait = row?.window ? Math.max(1, Math.ceil((Date.parse(row.window) + RESEND_WINDOW_MS - now.getTime()) / 1000)) : 1;
  throw new AppError("rate_limited", `Too many resends through portal links of this application: at most ${limit} a minute; try again in ${wait} s`, { retry_after_seconds: wait });
}

/**
 * Sends the message to one of the application's endpoints again (202): a
 * new delivery chain (trigger `manual`, a fresh retry budget) that takes the
 * earlier one out of the DLQ, whether or not the endpoint's filter_types
 * admit the message (resending is an explicit choice). A delivery to that
 * endpoint still outstanding is not doubled: it is made due now and answered.
 * A disabled or expired endpoint → 409.
 */
export async function resendMessage(deps: Deps, scope: Scope, appId: string, idOrKey: string, raw: ResendInput) {
  const input = parseOrThrow(resendInput, raw, "Invalid resend request");
  const app = await findApplication(deps, scope, appId);
  const { row } = await findMessage(deps, app.id, idOrKey);
  const endpointId = input.endpoint_id;
  const [target] = /^[0-9a-f]{32}$/.test(endpointId)
    ? await deps.db
        .select({ destination: destinations, expiresAt: applicationEndpoints.expiresAt })
        .from(applicationEndpoints)
        .innerJoin(destinations, eq(destinations.id, applicationEndpoints.destinationId))
        .where(and(eq(applicationEndpoints.id, endpointId), eq(applicationEndpoints.applicationId, app.id)))
        .limit(1)
    : [];
  if (!target) throw notFound("Endpoint");
  const now = deps.clock.now();
  if (target.destination.status !== "active") throw new AppError("conflict", `Endpoint ${endpointId} is ${target.destination.status}; enable it to resend`, { endpoint_id: endpointId, status: target.destination.status });
  if (isExpired(target, now)) throw new AppError("conflict", `Endpoint ${endpointId} expired at ${target.expiresAt}`, { endpoint_id: endpointId, expires_at: target.expiresAt });

  if (scope.portal) await takePortalResend(deps, app.id, now);

  const { db } = deps;
  const at = iso(now);
  const chain = and(eq(deliveryAttempts.eventId, row.eventId), eq(deliveryAttempts.destinationId, target.destination.id));
  const result = await inWriteTurn(db, async () => {
    await recordAudit(deps, scope, { action: "resend", resourceType: "message", resourceId: row.id, after: { application_id: app.id, endpoint_id: endpointId }, envId: row.envId });
    const [outstanding] = await db
      .select({ id: deliveryAttempts.id, status: deliveryAttempts.status, scheduledAt: deliveryAttempts.scheduledAt })
      .from(deliveryAttempts)
      .where(and(chain, inArray(deliveryAttempts.status, ["queued", "delivering"])))
      .limit(1);
    if (outstanding) {
      if (outstanding.status === "queued" && outstanding.scheduledAt > at) await db.update(deliveryAttempts).set({ scheduledAt: at }).where(eq(deliveryAttempts.id, outstanding.id));
      return { attemptId: outstanding.id, changed: null };
    }
    const leftDlq = (
      await db
        .update(deliveryAttempts)
        .set({ isDlq: 0 })
        .where(and(chain, eq(deliveryAttempts.isDlq, 1)))
        .returning({ id: deliveryAttempts.id })
    ).length;
    const attempt = newQueuedAttempt({
      orgId: row.orgId,
      envId: row.envId,
      eventId: row.eventId,
      connectionId: null,
      destinationId: target.destination.id,
      requestUrl: target.destination.url,
      requestMethod: target.destination.httpMethod,
      triggerType: "manual",
      now,
    });
    await insertQueuedAttempt(db, attempt);
    await restartMessageChain(db, { messageId: row.id }, leftDlq, now);
    const [changed] = await db.update(events).set({ status: "pending" }).where(eq(events.id, row.eventId)).returning({ sourceId: events.sourceId });
    return { attemptId: attempt.id!, changed: changed ?? null };
  });
  deps.bus.publish({ type: "delivery.queued" });
  if (result.changed) deps.bus.publish({ type: "event.updated", orgId: row.orgId, envId: row.envId, eventId: row.eventId, sourceId: result.changed.sourceId });
  const [attempt] = await db
    .select(attemptColumns)
    .from(deliveryAttempts)
    .leftJoin(connections, eq(connections.id, deliveryAttempts.connectionId))
    .leftJoin(destinations, eq(destinations.id, deliveryAttempts.destinationId))
    .where(eq(deliveryAttempts.id, result.attemptId))
    .limit(1);
  if (!attempt) throw notFound("Attempt");
  return { attempt: attemptSerializerFor(scope)(attempt) };
}
