import { eq, sql } from "drizzle-orm";
import { EVENT_STATUSES, type ListEventsQuery } from "../contracts/events";
import { jobs } from "../db/schema";
import { transaction } from "../db/transaction";
import { eventView } from "../rules/eventView";
import { iso } from "../core/clock";
import { connectionsBySource, FilterRuleCache, filterVerdicts } from "./deliveries";
import { recordAudit } from "./audit";
import type { Deps, Scope } from "./deps";
import { listEvents } from "./events";
import { createJob, newJobRow, type JobRow } from "./jobs";
import { loadRetryEvents, queueEventRetries } from "./retries";

/**
 * Bulk retry (POST /v1/events/retry): the events GET /v1/events would list
 * with the same filters, each retried as POST /events/{id}/retry does, in
 * the background. The set is fixed when the job starts (events received
 * later are not included). Walking it reuses the events list itself, so
 * both always agree on what the filters mean.
 *
 * Progress counts events: `succeeded` got at least one delivery queued,
 * `failed` got none (every connection was disabled or filtered it out).
 * Rejected events (failed signature, schema reject) are left out of the
 * walk: they may be forged, and only a single retry with `force` delivers
 * one. The job counts them as `skipped`.
 */
export const BULK_BATCH = 100;

export type EventFilters = Omit<ListEventsQuery, "limit" | "offset" | "cursor" | "direction">;

interface BulkParams {
  filters: EventFilters;
}

const jobScope = (job: Pick<JobRow, "orgId" | "envId">): Scope => ({ orgId: job.orgId, envId: job.envId, userId: null, via: "local", scopes: "*", role: "owner" });

export async function startBulkRetry(deps: Deps, scope: Scope, filters: EventFilters): Promise<{ job_id: string | null; total: number; skipped: number }> {
  const now = deps.clock.now();
  // `before` is exclusive: one millisecond on takes in an event received this very instant.
  const until = iso(new Date(now.getTime() + 1));
  const before = filters.before && new Date(filters.before).toISOString() < until ? new Date(filters.before).toISOString() : until;
  const asked = filters.status ?? EVENT_STATUSES;
  const bounded: EventFilters = { ...filters, before, status: asked.filter((s) => s !== "rejected") };
  const total = bounded.status!.length === 0 ? 0 : (await listEvents(deps, scope, { ...bounded, limit: 1, offset: 0 })).pagination.total;
  const skipped = asked.includes("rejected") ? (await listEvents(deps, scope, { ...bounded, status: ["rejected"], limit: 1, offset: 0 })).pagination.total : 0;
  // Nothing to retry: no job, so the jobs list holds only work that was done (docs/delivery.md).
  if (total === 0) return { job_id: null, total, skipped };
  const job = newJobRow({ orgId: scope.orgId, envId: scope.envId, kind: "bulk_retry", params: { filters: bounded } satisfies BulkParams, total, skipped, now });
  await transaction(deps.db, async () => {
    await createJob(deps, job);
    await recordAudit(deps, scope, { action: "retry", resourceType: "event", resourceId: null, after: { job_id: job.id, filters: bounded, total, skipped } });
  });
  return { job_id: job.id, total: job.total, skipped };
}

/** Retries the next page of events; returns true when the walk is over. */
export async function bulkRetryStep(deps: Deps, job: JobRow): Promise<boolean> {
  const { filters } = JSON.parse(job.params) as BulkParams;
  // Nothing to walk (only rejected events were asked for).
  if (filters.status?.length === 0) return true;
  const scope = jobScope(job);
  const page = await listEvents(deps, scope, { ...filters, limit: BULK_BATCH, offset: 0, cursor: job.cursor ?? undefined });
  // The filter leaves rejected events out; a job started before it did must not deliver them either.
  const rows = (await loadRetryEvents(deps, scope, page.events.map((e) => e.id))).filter((e) => e.status !== "rejected");
  const bySource = await connectionsBySource(deps.db, [...new Set(rows.map((r) => r.sourceId))]);
  const passes = await filterVerdicts(
    rows.map((event) => ({ event, connections: bySource.get(event.sourceId) ?? [], view: () => eventView(event) })),
    new FilterRuleCache(),
  );
  const now = deps.clock.now();
  let succeeded = 0;
  let queued = 0;
  await transaction(deps.db, async (tx) => {
    for (const event of rows) {
      const r = await queueEventRetries(tx, { event, connections: bySource.get(event.sourceId) ?? [], trigger: "bulk_retry", now, jobId: job.id, passes });
      if (r.retried.length > 0) succeeded++;
      queued += r.retried.length;
    }
    // Progress and cursor move with the retries they describe: a restart neither repeats nor skips a page.
    await tx
      .update(jobs)
      .set({
        processed: sql`${jobs.processed} + ${page.events.length}`,
        succeeded: sql`${jobs.succeeded} + ${succeeded}`,
        failed: sql`${jobs.failed} + ${page.events.length - succeeded}`,
        cursor: page.pagination.next_cursor,
      })
      .where(eq(jobs.id, job.id));
  });
  if (queued > 0) deps.bus.publish({ type: "delivery.queued" });
  job.cursor = page.pagination.next_cursor;
  return page.pagination.next_cursor === null;
}
