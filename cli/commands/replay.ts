import type { Command } from "commander";
import { replayInput } from "../../src/contracts/jobs";
import { act, bodyFrom, dataOption, noun, parseIntArg, verb } from "../command";
import { parseInput, path } from "../context";
import { usageError } from "../errors";
import { resolveSourceField } from "../sourceRefs";
import { finishStartedJob, finishWaitedJob, showJob, waitForJob } from "../jobs";

/** `hookrelay replay start [--wait] | status <job_id>`. */
export function registerReplay(program: Command) {
  const replay = noun(program, "replay", "Re-deliver historical events to a destination (a background job)", [
    "hookrelay replay start --destination-id dst_… --from 2026-01-01T00:00:00Z --to 2026-01-02T00:00:00Z --wait",
  ]);
  act(
    verb(replay, "start", "Replay the events received between --from and --to (oldest first) to a destination", [
      "hookrelay replay start --destination-id dst_… --from 2026-01-01 --to 2026-01-02",
      "hookrelay replay start --destination-id dst_… --source-id src_… --from 2026-01-01T08:00:00Z --to 2026-01-01T09:00:00Z --rate-limit 50 --wait",
      "hookrelay replay start --connection-id 0123456789abcdef0123456789abcdef --from 2026-01-01 --to 2026-01-02 --wait",
    ])
      .option("--destination-id <id>", "where to deliver (required unless --connection-id gives it)")
      .option("--connection-id <id>", "replay through this connection: its source only, through its filter and transform (the destination is the connection's)")
      .option("--from <time>", "ISO 8601 start, inclusive (required)")
      .option("--to <time>", "ISO 8601 end, inclusive (required)")
      .option("--source-id <source>", "only events of this source (id or slug)")
      .option("--rate-limit <n>", "events per second, 1 to 100 (default 10)", parseIntArg("--rate-limit", 1))
      .option("--max-events <n>", "at most this many, up to 10000 (default 1000)", parseIntArg("--max-events", 1))
      .addOption(dataOption())
      .option("--wait", "follow the job to the end (progress bar on a terminal), then print its final progress; exit 1 if any of it failed or it did nothing")
      .option("--timeout <seconds>", "with --wait: give up after this long", parseIntArg("--timeout", 1)),
    async (ctx, o) => {
      const body = bodyFrom(o.data, { destination_id: o.destinationId, from: o.from, to: o.to, source_id: o.sourceId, connection_id: o.connectionId, rate_limit: o.rateLimit, max_events: o.maxEvents });
      // A connection names its destination: --destination-id may be left out.
      if (body.connection_id !== undefined && body.destination_id === undefined) {
        const id = String(body.connection_id);
        const { connection } = await ctx.run<{ connection: { destination_id: string } }>({
          method: "GET",
          path: path`/connections/${id}`,
          expect: "connection",
          local: async (deps, scope) => (await import("../../src/domain/connections")).getConnection(deps, scope, id),
        });
        body.destination_id = connection.destination_id;
      }
      const missing = ["destination_id", "from", "to"].filter((f) => body[f] === undefined);
      if (missing.length > 0) throw usageError(`missing ${missing.map((f) => "--" + f.replace(/_/g, "-")).join(", ")}`);
      await resolveSourceField(ctx, body);
      const started = await ctx.run<{ job_id: string; status: string; total: number }>({
        method: "POST",
        path: "/replay",
        body,
        expect: "job_id",
        local: async (deps, scope) => (await import("../../src/domain/replay")).startReplay(deps, scope, parseInput(replayInput, body)),
      });
      const why = `no event to replay was received between ${body.from} and ${body.to}`;
      if (!o.wait) {
        return finishStartedJob(ctx, started, (s, c, mark) => `${mark} Replay started: job ${c.cyan(s.job_id)}, ${s.total} events (follow it: hookrelay replay status ${s.job_id} --wait)`, why);
      }
      finishWaitedJob(ctx, await waitForJob(ctx, started.job_id, { kind: "replay", label: "replay", timeoutMs: o.timeout && o.timeout * 1000 }));
    },
  );
  act(
    verb(replay, "status <job_id>", "Show a replay job's progress (kept 24 hours after it completes)", ["hookrelay replay status 0123456789abcdef0123456789abcdef", "hookrelay replay status 0123456789abcdef0123456789abcdef --wait"])
      .option("--wait", "poll until the job completes; exit 1 if any of it failed or it did nothing")
      .option("--timeout <seconds>", "with --wait: give up after this long", parseIntArg("--timeout", 1)),
    (ctx, o, [id]) => showJob(ctx, id!, o, { kind: "replay", label: "replay" }),
  );
}
