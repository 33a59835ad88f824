import type { JobProgress } from "../src/contracts/jobs";
import { path, type Context } from "./context";
import { Progress } from "./output/progress";

/** GET /jobs/{id} (GET /replay/{id} for replays): the same progress shape either way. */
export function jobOperation(id: string, kind?: "replay") {
  return {
    method: "GET" as const,
    path: kind === "replay" ? path`/replay/${id}` : path`/jobs/${id}`,
    local: async (deps: import("../src/domain/deps").Deps, scope: import("../src/domain/deps").Scope) => (await import("../src/domain/jobs")).getJob(deps, scope, id, kind),
  };
}

/**
 * Polls a background job until it completes, drawing a progress bar on a
 * terminal. Returns the final progress (what `--json` prints).
 */
export async function waitForJob(ctx: Context, id: string, opts: { kind?: "replay"; label: string; intervalMs?: number; timeoutMs?: number }): Promise<JobProgress> {
  const bar = new Progress(opts.label, process.stderr, !ctx.json);
  const deadline = opts.timeoutMs ? Date.now() + opts.timeoutMs : Infinity;
  try {
    while (true) {
      const job = await ctx.run<JobProgress>(jobOperation(id, opts.kind));
      bar.update(job.processed, job.total, `${job.succeeded} ok, ${job.failed} failed`);
      if (job.status === "completed") return job;
      if (Date.now() > deadline) {
        const { CliError, EXIT } = await import("./errors");
        throw new CliError(`job ${id} still running after the --timeout; check it with \`hookrelay jobs get ${id}\``, EXIT.error, "timeout");
      }
      await Bun.sleep(opts.intervalMs ?? 500);
    }
  } finally {
    bar.done();
  }
}

/** Columns of a job's record. */
export const JOB_FIELDS = ["job_id", "kind", "status", "total", "processed", "succeeded", "failed", "started_at", "completed_at"];
