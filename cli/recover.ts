import type { Command } from "commander";
import type { RecoverStarted } from "../src/contracts/recover";
import type { Deps, Scope } from "../src/domain/deps";
import { parseIntArg, type Opts } from "./command";
import type { Context } from "./context";
import { finishStartedJob, finishWaitedJob, waitForJob } from "./jobs";

/** `destinations recover` and `endpoints recover`: the window's flags, and starting (and with --wait following) the job (docs/delivery.md, "Recovering an outage"). */

export function recoverFlags(cmd: Command): Command {
  return cmd
    .requiredOption("--since <time>", "start of the window, ISO 8601 (e.g. 2026-01-31T12:00:00Z): failures at or after it are sent again")
    .option("--until <time>", "end of the window, ISO 8601, exclusive (default: now)")
    .option("--wait", "follow the job to the end (progress bar on a terminal), then print its final progress; exit 1 if any of it failed or it did nothing")
    .option("--timeout <seconds>", "with --wait: give up after this long", parseIntArg("--timeout", 1));
}

export async function runRecover(ctx: Context, o: Opts, path: string, local: (deps: Deps, scope: Scope, body: { since: string; until?: string }) => Promise<RecoverStarted>) {
  const body: { since: string; until?: string } = { since: o.since as string, ...(o.until === undefined ? {} : { until: o.until as string }) };
  const started = await ctx.run<RecoverStarted>({ method: "POST", path, body, expect: "job_id", local: (deps, scope) => local(deps, scope, body) });
  if (!o.wait) {
    return finishStartedJob(ctx, started, (s, c, mark) => `${mark} Recovery started: job ${c.cyan(s.job_id)}, ${s.total} to send again (follow it: hookrelay jobs get ${s.job_id} --wait)`, "nothing failed there in that window");
  }
  finishWaitedJob(ctx, await waitForJob(ctx, started.job_id, { label: "recover", timeoutMs: o.timeout ? (o.timeout as number) * 1000 : undefined }));
}
