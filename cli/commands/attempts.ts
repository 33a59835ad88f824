import type { Command } from "commander";
import { listAttemptsQuery, redriveInput } from "../../src/contracts/deliveryAttempts";
import { bodyFrom, parseIntArg } from "../command";
import { parseInput } from "../context";
import { finishStartedJob, finishWaitedJob, waitForJob } from "../jobs";
import { attemptWhenCell } from "../output/attempts";
import { Resource } from "../resource";

/** `hookrelay attempts list [--dlq]` and `attempts redrive`. */
export function registerAttempts(program: Command) {
  const r = new Resource(
    program,
    {
      noun: "attempts",
      singular: "delivery attempt",
      description: "Delivery attempts and the dead-letter queue (DLQ)",
      path: "/delivery-attempts",
      listKey: "delivery_attempts",
      itemKey: "delivery_attempt",
      columns: ["id", { key: "sent_at", header: "sent", get: (a) => attemptWhenCell(a) }, "event_id", "destination_name", "status", "response_status", "duration_ms", "attempt_number", "trigger_type", "error"],
      exampleId: "da_0123456789abcdef0123456789abcdef",
      domain: () => import("../../src/domain/deliveryAttempts"),
    },
    ["hookrelay attempts list --dlq", "hookrelay attempts redrive --destination-id dst_… --wait"],
  );
  r.list({
    query: listAttemptsQuery,
    paged: true,
    skip: ["is_dlq"],
    help: { event_id: "only this event's attempts", connection_id: "only this connection", destination_id: "only this destination", status: "only this status", trigger_type: "only attempts started this way" },
    extraFlags: (cmd) => cmd.option("--dlq", "only attempts in the dead-letter queue").option("--no-dlq", "only attempts not in the DLQ"),
    mapQuery: (o, q) => {
      if (o.dlq !== undefined) q.is_dlq = o.dlq ? "1" : "0";
    },
    local: (m, deps, scope, q) => m.listAttempts(deps, scope, q),
    description: "List delivery attempts, newest first (--dlq: the dead-letter queue)",
    examples: ["hookrelay attempts list --dlq", "hookrelay attempts list --event-id evt_… --json", "hookrelay attempts list --destination-id dst_… --status failed --limit 20"],
  });
  r.verb(
    "redrive",
    "Re-queue every DLQ delivery of a destination and/or connection (a background job)",
    ["hookrelay attempts redrive --destination-id dst_…", "hookrelay attempts redrive --connection-id 0123… --wait --json"],
    (cmd) =>
      cmd
        .option("--destination-id <id>", "DLQ deliveries to this destination")
        .option("--connection-id <id>", "DLQ deliveries through this connection")
        .option("--wait", "follow the job to the end (progress bar on a terminal), then print its final progress; exit 1 if any of it failed or it did nothing")
        .option("--timeout <seconds>", "with --wait: give up after this long", parseIntArg("--timeout", 1)),
    async (ctx, o) => {
      const body = bodyFrom(undefined, { destination_id: o.destinationId, connection_id: o.connectionId });
      if (Object.keys(body).length === 0) throw (await import("../errors")).usageError("give --destination-id, --connection-id or both");
      const started = await ctx.run<{ job_id: string; total: number }>({
        method: "POST",
        path: "/delivery-attempts/redrive",
        body,
        expect: "job_id",
        local: async (deps, scope) => (await import("../../src/domain/redrive")).startRedrive(deps, scope, parseInput(redriveInput, body)),
      });
      if (!o.wait) {
        return finishStartedJob(ctx, started, (s, c, mark) => `${mark} Redrive started: job ${c.cyan(s.job_id)}, ${s.total} deliveries (follow it: hookrelay jobs get ${s.job_id} --wait)`, "the DLQ holds no delivery for it");
      }
      finishWaitedJob(ctx, await waitForJob(ctx, started.job_id, { label: "redrive", timeoutMs: o.timeout && o.timeout * 1000 }));
    },
  );
  return r;
}
