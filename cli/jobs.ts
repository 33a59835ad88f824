import type { ChalkInstance } from "chalk";
import type { JobProgress } from "../src/contracts/jobs";
import { path, type Context } from "./context";
import { CliError, EXIT } from "./errors";
import { Progress } from "./output/progress";

/** A job's progress; `skipped` (events a bulk retry left alone, e.g. rejected ones) where the server reports it. */
export type Job = JobProgress & { skipped?: number };

/** GET /jobs/{id} (GET /replay/{id} for replays): the same progress shape either way. */
export function jobOperation(id: string, kind?: "replay") {
  return {
    method: "GET" as const,
    path: kind === "replay" ? path`/replay/${id}` : path`/jobs/${id}`,
    expect: "job_id",
    local: async (deps: import("../src/domain/deps").Deps, scope: import("../src/domain/deps").Scope) => (await import("../src/domain/jobs")).getJob(deps, scope, id, kind),
  };
}

/**
 * Polls a background job until it completes, drawing a progress bar on a
 * terminal. Returns the final progress (what `--json` prints).
 */
export async function waitForJob(ctx: Context, id: string, opts: { kind?: "replay"; label: string; intervalMs?: number; timeoutMs?: number }): Promise<Job> {
  const bar = new Progress(opts.label, process.stderr, !ctx.json);
  const deadline = opts.timeoutMs ? Date.now() + opts.timeoutMs : Infinity;
  try {
    while (true) {
      const job = await ctx.run<Job>(jobOperation(id, opts.kind));
      bar.update(job.processed, job.total, `${job.succeeded} ok, ${job.failed} failed`);
      if (job.status === "completed") return job;
      if (Date.now() > deadline) throw new CliError(`job ${id} still running after the --timeout; check it with \`hookrelay jobs get ${id}\``, EXIT.error, "timeout");
      await Bun.sleep(opts.intervalMs ?? 500);
    }
  } finally {
    bar.done();
  }
}

/** `jobs get` and `replay status`: the job's progress now, or with --wait its end (finishWaitedJob). */
export async function showJob(ctx: Context, id: string, o: { wait?: boolean; timeout?: number }, which: { kind?: "replay"; label: string }) {
  if (o.wait) return finishWaitedJob(ctx, await waitForJob(ctx, id, { ...which, timeoutMs: o.timeout && o.timeout * 1000 }));
  const job = await ctx.run(jobOperation(id, which.kind));
  ctx.out.result(job, jobView(job));
}

/** A job's record on a terminal (`skipped` where the server counts it). */
export const jobView = (job: Job) => ({ columns: ["job_id", "kind", "status", "total", "processed", "succeeded", "failed", ...("skipped" in job ? ["skipped"] : []), "started_at", "completed_at"] });

const counts = (j: Job) => `total ${j.total}, succeeded ${j.succeeded}, failed ${j.failed}` + (j.skipped !== undefined ? `, skipped ${j.skipped}` : "");

/**
 * Prints a waited-for job's final progress, then fails the command (exit 1,
 * the counts on stderr) when any of its work failed or it did nothing at all,
 * so a script's `&&` never follows a replay that delivered nothing.
 */
export function finishWaitedJob(ctx: Context, job: Job) {
  ctx.out.result(job, jobView(job));
  const details = { job_id: job.job_id, kind: job.kind, total: job.total, succeeded: job.succeeded, failed: job.failed, skipped: job.skipped };
  if (job.failed > 0) throw jobError(`${job.kind} job ${job.job_id} had failures: ${counts(job)}`, "job_failed", details);
  if (job.succeeded === 0) throw jobError(`${job.kind} job ${job.job_id} did nothing: ${counts(job)}`, "nothing_done", details);
}

/**
 * Prints a started job's answer (`text` gets the mark to lead with: ✓, or !
 * when there is nothing to do); a job with nothing to do fails the command
 * (exit 1): `why` says what matched nothing.
 */
export function finishStartedJob<S extends { job_id: string | null; total: number; skipped?: number }>(
  ctx: Context,
  started: S,
  text: (s: S, c: ChalkInstance, mark: string) => string,
  why: string,
  nothingLabel = "nothing to do",
) {
  const skipped = started.skipped ?? 0;
  // Whether a job's total counts the events it skips or not, nothing is left to do when they cover it.
  const nothing = started.total === 0 || skipped >= started.total;
  ctx.out.result(started, { text: (s, c) => text(s, c, nothing ? c.yellow("!") : c.green("✓")) });
  if (nothing) {
    const message = skipped > 0 ? `${nothingLabel}: ${why}; ${skipped} skipped` : `${nothingLabel}: ${why}`;
    throw jobError(message, "nothing_done", { job_id: started.job_id, total: started.total, skipped: started.skipped });
  }
}

function jobError(message: string, code: string, details: Record<string, unknown>) {
  return new CliError(message, EXIT.error, code, { error: { code, message, details } });
}
