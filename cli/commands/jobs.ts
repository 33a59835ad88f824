import type { Command } from "commander";
import { act, noun, parseIntArg, verb } from "../command";
import { showJob } from "../jobs";

/** `hookrelay jobs get <id> [--wait]`: progress of bulk retries, redrives and replays. */
export function registerJobs(program: Command) {
  const jobs = noun(program, "jobs", "Background jobs (bulk retry, DLQ redrive, replay): progress", ["hookrelay jobs get 0123456789abcdef0123456789abcdef --wait"]);
  act(
    verb(jobs, "get <id>", "Show a job's progress; --wait follows it to the end", ["hookrelay jobs get 0123456789abcdef0123456789abcdef", "hookrelay jobs get 0123456789abcdef0123456789abcdef --wait --json"])
      .option("--wait", "poll until the job completes (progress bar on a terminal), then print it; exit 1 if any of it failed or it did nothing")
      .option("--timeout <seconds>", "with --wait: give up after this long (exit 1)", parseIntArg("--timeout", 1)),
    (ctx, o, [id]) => showJob(ctx, id!, o, { label: "job" }),
  );
}
