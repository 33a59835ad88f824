import { inScope } from "./scope";
import { and, eq, lt, sql } from "drizzle-orm";
import { notFound } from "../contracts/errors";
import { hex32 } from "../contracts/ids";
import type { JobKind, JobProgress } from "../contracts/jobs";
import { jobs } from "../db/schema";
import { iso } from "../core/clock";
import type { Deps, Scope } from "./deps";

/**
 * Jobs are rows: replay, bulk retry and DLQ redrive run in the background
 * (src/delivery/jobRunner.ts) and keep their progress and their cursor here,
 * so a restart resumes them. Progress is readable for 24 hours after the job
 * completes (the spec's replay progress retention), then pruned.
 */
export const JOB_RETENTION_MS = 24 * 3600 * 1000;

export type JobRow = typeof jobs.$inferSelect;

export function serializeJob(row: JobRow): JobProgress {
  return {
    job_id: row.id,
    kind: row.kind as JobKind,
    status: row.status as JobProgress["status"],
    total: row.total,
    processed: row.processed,
    succeeded: row.succeeded,
    failed: row.failed,
    skipped: row.skipped,
    started_at: row.startedAt,
    completed_at: row.completedAt,
  };
}

export function newJobRow(fields: { orgId: string; envId: string; kind: JobKind; params: unknown; total: number; skipped?: number; now: Date }): JobRow {
  return {
    id: hex32(),
    orgId: fields.orgId,
    envId: fields.envId,
    kind: fields.kind,
    params: JSON.stringify(fields.params),
    // Even an empty job starts `running` (the spec's POST /replay answer); the runner completes it at once.
    status: "running",
    total: fields.total,
    processed: 0,
    succeeded: 0,
    failed: 0,
    skipped: fields.skipped ?? 0,
    cursor: null,
    startedAt: iso(fields.now),
    completedAt: null,
    expiresAt: iso(new Date(fields.now.getTime() + JOB_RETENTION_MS)),
  };
}

/** Inserts a job and tells the runner (a CLI in local mode has no runner to tell: the runner's poll finds it). */
export async function createJob(deps: Deps, row: JobRow): Promise<JobRow> {
  await deps.db.insert(jobs).values(row);
  deps.bus.publish({ type: "job.created", jobId: row.id });
  return row;
}

/** A job of the caller's scope that has not expired; 404 otherwise. */
export async function getJob(deps: Deps, scope: Scope, rawId: string, kind?: JobKind): Promise<JobProgress> {
  const id = rawId.toLowerCase();
  const [row] = await deps.db
    .select()
    .from(jobs)
    .where(and(eq(jobs.id, id), inScope(jobs, scope), kind ? eq(jobs.kind, kind) : undefined))
    .limit(1);
  if (!row || (row.status === "completed" && row.expiresAt < iso(deps.clock.now()))) throw notFound(kind === "replay" ? "Replay job" : "Job");
  return serializeJob(row);
}

export async function completeJob(deps: Deps, id: string): Promise<void> {
  const now = deps.clock.now();
  await deps.db
    .update(jobs)
    .set({ status: "completed", completedAt: iso(now), expiresAt: iso(new Date(now.getTime() + JOB_RETENTION_MS)) })
    .where(and(eq(jobs.id, id), eq(jobs.status, "running")));
}

/** Deletes completed jobs whose progress has expired. */
export async function pruneExpiredJobs(deps: Deps): Promise<number> {
  const gone = await deps.db
    .delete(jobs)
    .where(and(eq(jobs.status, "completed"), lt(jobs.expiresAt, iso(deps.clock.now()))))
    .returning({ id: jobs.id });
  return gone.length;
}

export async function runningJobs(deps: Deps): Promise<JobRow[]> {
  return deps.db.select().from(jobs).where(eq(jobs.status, "running"));
}

export async function loadJob(deps: Deps, id: string): Promise<JobRow | null> {
  const [row] = await deps.db.select().from(jobs).where(eq(jobs.id, id)).limit(1);
  return row ?? null;
}

/** Shrinks a job's total to what it processed (events pruned meanwhile, say), so it can complete. */
export async function settleJobTotal(deps: Deps, id: string): Promise<void> {
  await deps.db.update(jobs).set({ total: sql`${jobs.processed}` }).where(eq(jobs.id, id));
}
