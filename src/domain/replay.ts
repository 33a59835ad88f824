import { inScope } from "./scope";
import { and, asc, count, eq, gt, inArray, lt, or, sql } from "drizzle-orm";
import { AppError, notFound } from "../contracts/errors";
import type { JobProgress, ReplayInput } from "../contracts/jobs";
import { normalizeId } from "../contracts/ids";
import { readHorizonMs } from "../db/horizon";
import { connections, deliveryAttempts, destinations, events, jobs, sources } from "../db/schema";
import { transaction } from "../db/transaction";
import { eventView } from "../rules/eventView";
import { FilterRuleCache, newQueuedAttempt } from "./deliveries";
import { recordAudit } from "./audit";
import type { Deps, Scope } from "./deps";
import { findDestinationRow } from "./destinations";
import { createJob, getJob, newJobRow, type JobRow } from "./jobs";
import { countLateCommits, inWindow, replayable, unsettledWindow, type ReplayParams } from "./replayWindow";

/**
 * Replay (spec: Replay): events received between `from` and `to` (both
 * inclusive), optionally of one source, walked in ascending received_at
 * order and delivered again to one destination, `rate_limit` events at a
 * time with a one-second pause between batches (the pacing lives in
 * src/delivery/jobRunner.ts). At most `max_events` events. They reach the
 * destination in that order: the runner queues one event at a time and the
 * next only once the one before it settled.
 *
 * - Rejected events (failed signature, schema reject) and duplicates are
 *   not replayed: they were never meant to be delivered.
 * - A replayed event goes through the connection from its source to the
 *   destination when there is one (its transform applies; its filter does
 *   not: the replay is an explicit choice), else its body is sent as received.
 * - With `connection_id` (a connection to the destination) only that
 *   connection's source is replayed, and its filter applies as well as its
 *   transform: events the filter turns away are passed over and counted in
 *   `skipped` (and taken out of `total`).
 * - Replayed deliveries are recorded (trigger_type `replay`) and never
 *   retried; they count in the job's succeeded/failed, never enter the DLQ
 *   and never change the event's status.
 */

/** Where the walk is: the last event queued, in (received_at, id) order. */
interface Cursor {
  t: string;
  id: string;
}

export async function startReplay(deps: Deps, scope: Scope, input: ReplayInput): Promise<{ job_id: string; status: "running"; total: number }> {
  const destination = await findDestinationRow(deps, scope, input.destination_id);
  let sourceId: string | null = null;
  if (input.source_id) {
    const id = normalizeId(input.source_id, "source", "Source");
    const [source] = await deps.db
      .select({ id: sources.id })
      .from(sources)
      .where(and(eq(sources.id, id), inScope(sources, scope)))
      .limit(1);
    if (!source) throw notFound("Source");
    sourceId = source.id;
  }
  let connectionId: string | null = null;
  if (input.connection_id) {
    const id = normalizeId(input.connection_id, undefined, "Connection");
    const [connection] = await deps.db
      .select({ id: connections.id, sourceId: connections.sourceId, destinationId: connections.destinationId })
      .from(connections)
      .where(and(eq(connections.id, id), inScope(connections, scope)))
      .limit(1);
    if (!connection) throw notFound("Connection");
    if (connection.destinationId !== destination.id) {
      throw new AppError("validation_error", "connection_id must be a connection to destination_id", [{ field: "body.connection_id", message: "this connection delivers to another destination" }]);
    }
    if (sourceId !== null && sourceId !== connection.sourceId) {
      throw new AppError("validation_error", "source_id must be the connection's source", [{ field: "body.source_id", message: "the connection reads another source" }]);
    }
    connectionId = connection.id;
    sourceId = connection.sourceId;
  }
  const params: ReplayParams = {
    destination_id: destination.id,
    source_id: sourceId,
    connection_id: connectionId,
    from: new Date(input.from).toISOString(),
    to: new Date(input.to).toISOString(),
    rate_limit: input.rate_limit,
    max_events: input.max_events,
  };
  const [matching] = await deps.db.select({ n: count() }).from(events).where(replayable(scope, params));
  const total = Math.min(matching?.n ?? 0, params.max_events);
  const [rejected] = await deps.db
    .select({ n: count() })
    .from(events)
    .where(and(inWindow(scope, params), eq(events.status, "rejected")));
  const job = newJobRow({ orgId: scope.orgId, envId: scope.envId, kind: "replay", params, total, skipped: rejected?.n ?? 0, now: deps.clock.now() });
  await transaction(deps.db, async () => {
    await createJob(deps, job);
    await recordAudit(deps, scope, { action: "replay", resourceType: "destination", resourceId: destination.id, after: { job_id: job.id, ...params, total } });
  });
  return { job_id: job.id, status: "running", total };
}

export function getReplay(deps: Deps, scope: Scope, rawId: string): Promise<JobProgress> {
  return getJob(deps, scope, rawId, "replay");
}

/** A replay job's rate_limit: events per batch, a batch being followed by a one-second pause. */
export function replayBatchSize(job: Pick<JobRow, "params">): number {
  return (JSON.parse(job.params) as ReplayParams).rate_limit;
}

/**
 * Queues the next `limit` events (at most rate_limit) of a replay job. The
 * attempts, the cursor and `processed` move in one transaction, so a
 * restart resumes exactly after the last queued event.
 */
export async function replayStep(deps: Deps, job: JobRow, limit?: number): Promise<{ queued: number; passedOver: number; done: boolean }> {
  const p = JSON.parse(job.params) as ReplayParams;
  const unsettled = unsettledWindow(deps, job, p);
  if (job.total - job.processed <= 0) {
    if (unsettled) return { queued: 0, passedOver: 0, done: false };
    if (!(await countLateCommits(deps, job, p))) return { queued: 0, passedOver: 0, done: true };
  }
  const remaining = job.total - job.processed;
  const after = job.cursor ? (JSON.parse(job.cursor) as Cursor) : null;
  const batch = await deps.db
    .select({ id: events.id, sourceId: events.sourceId, orgId: events.orgId, envId: events.envId, receivedAt: events.receivedAt })
    .from(events)
    .where(
      and(
        replayable(job, p),
        after ? or(gt(events.receivedAt, after.t), and(eq(events.receivedAt, after.t), gt(events.id, after.id))) : undefined,
        unsettled ? lt(events.receivedAt, unsettled.horizon) : undefined,
      ),
    )
    .orderBy(asc(events.receivedAt), asc(events.id))
    .limit(Math.min(limit ?? p.rate_limit, p.rate_limit, remaining));
  // The rest of the window is within the read horizon: wait for it to settle rather than pass an event another node still commits.
  if (batch.length === 0 && unsettled) return { queued: 0, passedOver: 0, done: false };
  if (batch.length === 0) {
    // Fewer events than counted at the start (pruned meanwhile): the job is done with what it did.
    await deps.db.update(jobs).set({ total: sql`${jobs.processed}` }).where(eq(jobs.id, job.id));
    job.total = job.processed;
    return { queued: 0, passedOver: 0, done: true };
  }

  const [destination] = await deps.db
    .select({ url: destinations.url, method: destinations.httpMethod })
    .from(destinations)
    .where(eq(destinations.id, p.destination_id))
    .limit(1);
  if (!destination) {
    // Deleted while replaying: nothing more can be delivered; what is left is not attempted.
    await deps.db.update(jobs).set({ total: sql`${jobs.processed}` }).where(eq(jobs.id, job.id));
    job.total = job.processed;
    return { queued: 0, passedOver: 0, done: true };
  }
  // Through a chosen connection: its filter decides which events go (its transform applies in the worker).
  let passing = batch;
  let viaConnection: Map<string, string>;
  if (p.connection_id) {
    const [connection] = await deps.db
      .select({ id: connections.id, sourceId: connections.sourceId, filterRules: connections.filterRules, updatedAt: connections.updatedAt })
      .from(connections)
      .where(eq(connections.id, p.connection_id))
      .limit(1);
    if (!connection) {
      // Deleted while replaying: what is left is not attempted, as when the destination goes.
      await deps.db.update(jobs).set({ total: sql`${jobs.processed}` }).where(eq(jobs.id, job.id));
      job.total = job.processed;
      return { queued: 0, passedOver: 0, done: true };
    }
    const rules = new FilterRuleCache();
    if (rules.readsRequest(connection)) {
      const requests = new Map(
        (
          await deps.db
            .select({ id: events.id, body: events.body, headers: events.headers, query: events.query, method: events.method, path: events.path, contentType: events.contentType })
            .from(events)
            .where(inArray(events.id, batch.map((e) => e.id)))
        ).map((r) => [r.id, r]),
      );
      // Regex rules run in the sandbox (docs/delivery.md, "Limits of transforms and filters").
      const verdicts = await Promise.all(
        batch.map(async (e) => {
          const request = requests.get(e.id);
          return request !== undefined && (await rules.matches(connection, () => eventView(request)));
        }),
      );
      passing = batch.filter((_, i) => verdicts[i]);
    }
    viaConnection = new Map([[connection.sourceId, connection.id]]);
  } else {
    viaConnection = await oldestConnections(deps, p.destination_id, batch);
  }
  const passedOver = batch.length - passing.length;

  const now = deps.clock.now();
  const last = batch[batch.length - 1]!;
  const cursor = JSON.stringify({ t: last.receivedAt, id: last.id } satisfies Cursor);
  await transaction(deps.db, async (tx) => {
    const rows = passing.map((e) =>
      newQueuedAttempt({
        orgId: e.orgId,
        envId: e.envId,
        eventId: e.id,
        connectionId: viaConnection.get(e.sourceId) ?? null,
        destinationId: p.destination_id,
        requestUrl: destination.url,
        requestMethod: destination.method,
        triggerType: "replay",
        now,
        jobId: job.id,
      }),
    );
    if (rows.length > 0) await tx.insert(deliveryAttempts).values(rows);
    await tx
      .update(jobs)
      .set({
        processed: sql`${jobs.processed} + ${passing.length}`,
        // Events the connection's filter turned away are skipped, not processed: out of the total.
        total: sql`${jobs.total} - ${passedOver}`,
        skipped: sql`${jobs.skipped} + ${passedOver}`,
        cursor,
      })
      .where(eq(jobs.id, job.id));
  });
  job.processed += passing.length;
  job.total -= passedOver;
  job.skipped += passedOver;
  job.cursor = cursor;
  if (passing.length > 0) deps.bus.publish({ type: "delivery.queued" });
  // PostgreSQL: the next step first sees whether late commits joined the window (countLateCommits).
  return { queued: passing.length, passedOver, done: job.processed >= job.total && readHorizonMs(deps.db) === 0 };
}

/** The connection from each event's source to the destination, the oldest where a source has several. */
async function oldestConnections(deps: Deps, destinationId: string, batch: { sourceId: string }[]): Promise<Map<string, string>> {
  return new Map(
    (
      await deps.db
        .select({ id: connections.id, sourceId: connections.sourceId })
        .from(connections)
        .where(and(eq(connections.destinationId, destinationId), inArray(connections.sourceId, [...new Set(batch.map((e) => e.sourceId))])))
        .orderBy(asc(connections.createdAt))
    )
      .reverse() // the oldest connection of a source wins
      .map((c) => [c.sourceId, c.id]),
  );
}

/** Replay deliveries of a job not yet settled. */
export async function outstandingJobDeliveries(deps: Deps, jobId: string): Promise<number> {
  const [row] = await deps.db
    .select({ n: count() })
    .from(deliveryAttempts)
    .where(and(eq(deliveryAttempts.jobId, jobId), inArray(deliveryAttempts.status, ["queued", "delivering"])));
  return row?.n ?? 0;
}
