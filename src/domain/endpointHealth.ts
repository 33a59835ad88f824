import { and, eq, isNotNull, sql } from "drizzle-orm";
import { hex32 } from "../contracts/ids";
import type { Db } from "../db/db";
import { ph, preparedFor } from "../db/prepared";
import { applicationEndpoints, destinations } from "../db/schema";
import { iso } from "../core/clock";
import { upsertIssue, type OpenedIssue } from "./issues";

/**
 * The failure clock of application endpoints (src/outbound/endpoints.ts,
 * HOOKRELAY_ENDPOINT_DISABLE_AFTER), kept by the delivery queue
 * (src/delivery/queue.ts) inside its recording transaction.
 */

/** What endpoint health needs of one recorded outcome (the queue's outcomes are passed as they are). */
export interface EndpointOutcome {
  attempt: { id: string; eventId: string; orgId: string; envId: string; destinationId: string; connectionId: string | null };
  status: "success" | "failed";
  error: string | null;
}

/** Failures that say something about the receiver (not: its endpoint was disabled or deleted meanwhile). */
/** The error a 410 answer is recorded with (src/outgoing/sender.ts: http_<status>). */
const GONE = "http_410";

const RECEIVER_FAILURE = /^(http_\d{3}|timeout|connection_error|ssrf_blocked)$/;

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
}));

/**
 * Keeps each endpoint's failure clock for a batch of recorded outcomes: a
 * success stops it, a failure starts it (if it is not running). An endpoint
 * whose clock has run `disableAfterMs` is disabled, and an issue
 * `<dst id>:endpoint_disabled` opens (or reopens) for it, which fires
 * issue_opened alert rules like any other issue. An answer 410 Gone
 * disables at once (https://www.standardwebhooks.com: the receiver asks to
 * receive no more). Only message deliveries
 * (no connection) concern endpoints; the rest are skipped without a query.
 * Inside the caller's write transaction.
 */
export async function recordEndpointHealth(db: Db, outcomes: readonly EndpointOutcome[], now: Date, disableAfterMs: number | undefined): Promise<{ opened: OpenedIssue[]; disabled: string[] }> {
  const last = new Map<string, EndpointOutcome & { anySuccess: boolean; gone: EndpointOutcome | null }>();
  for (const o of outcomes) {
    if (o.attempt.connectionId !== null) continue;
    if (o.status === "failed" && !(o.error && RECEIVER_FAILURE.test(o.error))) continue;
    const seen = last.get(o.attempt.destinationId);
    const gone = o.status === "failed" && o.error === GONE ? o : (seen?.gone ?? null);
    last.set(o.attempt.destinationId, { ...o, anySuccess: (seen?.anySuccess ?? false) || o.status === "success", gone });
  }
  const opened: OpenedIssue[] = [];
  const disabled: string[] = [];
  if (last.size === 0) return { opened, disabled };
  const s = healthStatements(db);
  const at = iso(now);
  for (const [destinationId, o] of last) {
    if (o.anySuccess) await s.healthy.execute({ destinationId });
    // A 410 Gone disables at once, whatever came after it in the batch (Standard Webhooks: the receiver removed it).
    if (o.gone) {
      if ((await s.disable.execute({ destinationId, now: at })).length === 0) continue;
      const [clock] = await s.failing.execute({ destinationId, now: at });
      if (clock) await s.touch.execute({ id: clock.id, now: at });
      await disabledIssue(db, o.gone, destinationId, at, "answered 410 Gone: disabled at once; enable it again with PATCH status active", 410, opened);
      disabled.push(destinationId);
      continue;
    }
    if (o.status === "success") continue;
    const [clock] = await s.failing.execute({ destinationId, now: at });
    if (!clock?.failingSince || disableAfterMs === undefined) continue;
    if (now.getTime() - Date.parse(clock.failingSince) < disableAfterMs) continue;
    if ((await s.disable.execute({ destinationId, now: at })).length === 0) continue;
    disabled.push(destinationId);
    await s.touch.execute({ id: clock.id, now: at });
    const days = Math.round((disableAfterMs / 86_400_000) * 10) / 10;
    const why = `disabled after failing without a success since ${clock.failingSince} (${days} days or more); enable it again with PATCH status active`;
    await disabledIssue(db, o, destinationId, at, why, null, opened);
  }
  return { opened, disabled };
}

/** Opens (or reopens) the issue `<dst id>:endpoint_disabled`, which fires issue_opened alert rules like any other issue. */
async function disabledIssue(db: Db, o: EndpointOutcome, destinationId: string, at: string, error: string, statusCode: number | null, opened: OpenedIssue[]) {
  const issueId = await upsertIssue(
    db,
    {
      id: hex32(),
      orgId: o.attempt.orgId,
      envId: o.attempt.envId,
      destinationId,
      fingerprint: `${destinationId}:endpoint_disabled`,
      now: at,
      attemptId: o.attempt.id,
      eventId: o.attempt.eventId,
      title: "Endpoint disabled",
      count: 1,
      error,
      statusCode,
    },
    { reopen: true },
  );
  if (issueId) opened.push({ id: issueId, orgId: o.attempt.orgId, envId: o.attempt.envId });
}
