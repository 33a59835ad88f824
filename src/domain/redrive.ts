import { inScope } from "./scope";
import { and, asc, count, eq, exists, gt, inArray, isNull, lte, notExists, or, sql, type SQL } from "drizzle-orm";
import type { RedriveInput } from "../contracts/deliveryAttempts";
import { notFound } from "../contracts/errors";
import { normalizeId } from "../contracts/ids";
import { connections, deliveryAttempts, destinations, events, jobs } from "../db/schema";
import type { Db } from "../db/db";
import { transaction } from "../db/transaction";
import { iso } from "../core/clock";
import { clearedDlqColumns, resumeLine } from "./ordering";
import { newQueuedAttempt, type AttemptInsert } from "./deliveries";
import { recordAudit } from "./audit";
import type { Deps, Scope } from "./deps";
import { findDestinationRow } from "./destinations";
import { createJob, newJobRow, type JobRow } from "./jobs";

/**
 * DLQ redrive (POST /v1/delivery-attempts/redrive): every delivery in the
 * DLQ for a destination and/or connection starts again (trigger `redrive`,
 * fresh retry budget), in the background. A redriven row leaves the DLQ
 * (is_dlq 0; dlq_at stays as history), so redriving twice never doubles a
 * delivery. The set is fixed when the job starts.
 *
 * Progress counts DLQ rows: `succeeded` were queued again, `failed` could
 * not be (their destination was deleted or is disabled) and stay in the DLQ.
 * DLQ rows of rejected events (a forced delivery that failed) are not
 * redriven: the job counts them as `skipped` and they stay in the DLQ.
 */
export const REDRIVE_BATCH = 100;

interface RedriveParams {
  destination_id: string | null;
  connection_id: string | null;
  /** DLQ rows that entered it after the job started are not part of it. */
  until: string;
}

/** The DLQ rows the job redrives (`rejected: false`) or skips (`rejected: true`). */
function dlqFilter(db: Db, job: Pick<JobRow, "orgId" | "envId">, p: RedriveParams, opts: { rejected: boolean }): SQL {
  const rejectedEvent = db
    .select({ id: events.id })
    .from(events)
    .where(and(eq(events.id, deliveryAttempts.eventId), eq(events.status, "rejected")));
  return and(
    eq(deliveryAttempts.orgId, job.orgId),
    eq(deliveryAttempts.envId, job.envId),
    eq(deliveryAttempts.isDlq, 1),
    lte(deliveryAttempts.dlqAt, p.until),
    p.destination_id ? eq(deliveryAttempts.destinationId, p.destination_id) : undefined,
    p.connection_id ? eq(deliveryAttempts.connectionId, p.connection_id) : undefined,
    opts.rejected ? exists(rejectedEvent) : notExists(rejectedEvent),
  )!;
}

export async function startRedrive(deps: Deps, scope: Scope, input: RedriveInput): Promise<{ job_id: string; total: number; skipped: number }> {
  const destinationId = input.destination_id ? (await findDestinationRow(deps, scope, input.destination_id)).id : null;
  let connectionId: string | null = null;
  if (input.connection_id) {
    const id = normalizeId(input.connection_id, undefined, "Connection");
    const [conn] = await deps.db
      .select({ id: connections.id })
      .from(connections)
      .where(and(eq(connections.id, id), inScope(connections, scope)))
      .limit(1);
    if (!conn) throw notFound("Connection");
    connectionId = conn.id;
  }
  const now = deps.clock.now();
  const params: RedriveParams = { destination_id: destinationId, connection_id: connectionId, until: iso(now) };
  const [row] = await deps.db.select({ n: count() }).from(deliveryAttempts).where(dlqFilter(deps.db, scope, params, { rejected: false }));
  const [rejected] = await deps.db.select({ n: count() }).from(deliveryAttempts).where(dlqFilter(deps.db, scope, params, { rejected: true }));
  const job = newJobRow({ orgId: scope.orgId, envId: scope.envId, kind: "redrive", params, total: row?.n ?? 0, skipped: rejected?.n ?? 0, now });
  await transaction(deps.db, async () => {
    await createJob(deps, job);
    await recordAudit(deps, scope, { action: "redrive", resourceType: "delivery_attempt", resourceId: null, after: { job_id: job.id, ...params, total: job.total, skipped: job.skipped } });
  });
  return { job_id: job.id, total: job.total, skipped: job.skipped };
}

/** Redrives the next batch of DLQ rows; returns true when none are left. */
export async function redriveStep(deps: Deps, job: JobRow): Promise<boolean> {
  const params = JSON.parse(job.params) as RedriveParams;
  const after = job.cursor ? (JSON.parse(job.cursor) as { t: string; id: string }) : null;
  const batch = await deps.db
    .select()
    .from(deliveryAttempts)
    .where(
      and(
        dlqFilter(deps.db, job, params, { rejected: false }),
        after ? or(gt(deliveryAttempts.createdAt, after.t), and(eq(deliveryAttempts.createdAt, after.t), gt(deliveryAttempts.id, after.id))) : undefined,
      ),
    )
    .orderBy(asc(deliveryAttempts.createdAt), asc(deliveryAttempts.id))
    .limit(REDRIVE_BATCH);
  if (batch.length === 0) return true;

  const targets = new Map(
    (
      await deps.db
        .select({ id: destinations.id, url: destinations.url, method: destinations.httpMethod, status: destinations.status })
        .from(destinations)
        .where(inArray(destinations.id, [...new Set(batch.map((r) => r.destinationId))]))
    ).map((d) => [d.id, d]),
  );
  const now = deps.clock.now();
  const last = batch[batch.length - 1]!;
  let queued = 0;
  await transaction(deps.db, async (tx) => {
    for (const row of batch) {
      const target = targets.get(row.destinationId);
      if (!target || target.status === "disabled") continue;
      const chain = and(
        eq(deliveryAttempts.eventId, row.eventId),
        eq(deliveryAttempts.destinationId, row.destinationId),
        row.connectionId ? eq(deliveryAttempts.connectionId, row.connectionId) : isNull(deliveryAttempts.connectionId),
      );
      const cleared = await tx.update(deliveryAttempts).set({ isDlq: 0 }).where(and(chain, eq(deliveryAttempts.isDlq, 1))).returning(clearedDlqColumns);
      const [outstanding] = await tx
        .select({ id: deliveryAttempts.id })
        .from(deliveryAttempts)
        .where(and(chain, inArray(deliveryAttempts.status, ["queued", "delivering"])))
        .limit(1);
      if (!outstanding) {
        const next: AttemptInsert = newQueuedAttempt({
          orgId: row.orgId,
          envId: row.envId,
          eventId: row.eventId,
          connectionId: row.connectionId,
          destinationId: row.destinationId,
          requestUrl: target.url,
          requestMethod: target.method,
          triggerType: "redrive",
          now,
          jobId: job.id,
        });
        await resumeLine(tx, cleared, next, iso(now));
        await tx.insert(deliveryAttempts).values(next);
      } else await resumeLine(tx, cleared, null, iso(now));
      queued++;
    }
    await tx
      .update(jobs)
      .set({
        processed: sql`${jobs.processed} + ${batch.length}`,
        succeeded: sql`${jobs.succeeded} + ${queued}`,
        failed: sql`${jobs.failed} + ${batch.length - queued}`,
        cursor: JSON.stringify({ t: last.createdAt, id: last.id }),
      })
      .where(eq(jobs.id, job.id));
  });
  if (queued > 0) deps.bus.publish({ type: "delivery.queued" });
  job.cursor = JSON.stringify({ t: last.createdAt, id: last.id });
  return batch.length < REDRIVE_BATCH;
}
