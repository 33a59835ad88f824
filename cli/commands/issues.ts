import { InvalidArgumentError, Option, type Command } from "commander";
import { ISSUE_STATUSES, listIssuesQuery, updateIssueInput } from "../../src/contracts/issues";
import { parseInput, path, type Context } from "../context";
import { usageError } from "../errors";
import { record, type ColumnSpec } from "../output/table";
import { Resource } from "../resource";

const ID = "0123456789abcdef0123456789abcdef";

const UNITS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** `--snooze 24h`: a span from now (m, h, d, w). */
export function parseSpan(raw: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([mhdw])\s*$/i.exec(raw);
  if (!m || Number(m[1]) <= 0) throw new InvalidArgumentError("--snooze must be a span like 30m, 24h, 7d or 2w.");
  return Number(m[1]) * UNITS[m[2]!.toLowerCase()]!;
}

const ISSUE_FIELDS: ColumnSpec[] = [
  "id",
  "title",
  "status",
  "snoozed_until",
  "destination_name",
  "destination_id",
  "occurrence_count",
  "last_error",
  "last_status_code",
  "first_seen_at",
  "last_seen_at",
  "resolved_at",
  "last_event_id",
  "last_attempt_id",
  "fingerprint",
];
const ATTEMPT_FIELDS: ColumnSpec[] = ["id", "created_at", "sent_at", "request_method", "request_url", "response_status", "duration_ms", "error", "error_detail", "response_body"];

/** The issue, then its last failed attempt (its request and response), on a terminal. */
function issueView(ctx: Context) {
  return {
    text: (res: { issue: Record<string, unknown>; last_attempt: Record<string, unknown> | null }) => {
      const c = ctx.out.tty ? ctx.out.c : null;
      const head = record(res.issue, ISSUE_FIELDS, c);
      if (!c) return head;
      const attempt = res.last_attempt ? record(res.last_attempt, ATTEMPT_FIELDS, c) : c.dim("no longer stored (retention removed it)\n");
      return `${head}\n${c.bold("Last failed attempt")}\n${attempt}`;
    },
  };
}

/** `hookrelay issues list|get|update`. */
export function registerIssues(program: Command) {
  const r = new Resource(
    program,
    {
      noun: "issues",
      singular: "issue",
      description: "Repeated delivery failures, one per destination and kind of failure: list, inspect, acknowledge, resolve, ignore, snooze",
      path: "/issues",
      listKey: "issues",
      itemKey: "issue",
      columns: ["id", "title", "destination_name", "status", "occurrence_count", "last_seen_at", "snoozed_until"],
      exampleId: ID,
      domain: () => import("../../src/domain/issues"),
    },
    ["hookrelay issues list", `hookrelay issues get ${ID}`, `hookrelay issues update ${ID} --status acknowledged --snooze 24h`],
  );
  r.list({
    query: listIssuesQuery,
    paged: true,
    help: { status: "only this status: open, acknowledged, resolved or ignored", destination_id: "only issues of this destination" },
    local: (m, deps, scope, q) => m.listIssues(deps, scope, q),
    description: "List issues, newest first (by when they first opened)",
    examples: ["hookrelay issues list --status open", "hookrelay issues list --destination-id dst_… --json", "hookrelay issues list --status resolved --limit 20"],
  });
  r.get({
    local: (m, deps, scope, id) => m.getIssue(deps, scope, id),
    view: issueView,
    description: "Show an issue with its last failed attempt (request and response)",
    examples: [`hookrelay issues get ${ID}`, `hookrelay issues get ${ID} --json | jq -r .last_attempt.response_body`],
  });
  r.verb(
    "update <id>",
    "Acknowledge, resolve, ignore or reopen an issue, or snooze its alerts",
    [
      `hookrelay issues update ${ID} --status acknowledged`,
      `hookrelay issues update ${ID} --snooze 24h`,
      `hookrelay issues update ${ID} --snooze-until 2026-06-01T09:00:00Z`,
      `hookrelay issues update ${ID} --status resolved --unsnooze --json`,
    ],
    (cmd) =>
      cmd
        .addOption(new Option("--status <status>", "open, acknowledged, resolved (sets resolved_at) or ignored").choices(ISSUE_STATUSES))
        .option("--snooze <span>", "no issue_opened alert for it for this long: 30m, 24h, 7d, 2w", parseSpan)
        .option("--snooze-until <time>", "no issue_opened alert for it until this ISO 8601 date-time")
        .option("--unsnooze", "end a snooze"),
    async (ctx, o, [id], domain) => {
      const snoozes = [o.snooze, o.snoozeUntil, o.unsnooze].filter((v) => v !== undefined);
      if (snoozes.length > 1) throw usageError("give one of --snooze, --snooze-until and --unsnooze");
      const body: Record<string, unknown> = {};
      if (o.status !== undefined) body.status = o.status;
      if (o.snooze !== undefined) body.snoozed_until = new Date(Date.now() + (o.snooze as number)).toISOString();
      if (o.snoozeUntil !== undefined) body.snoozed_until = o.snoozeUntil;
      if (o.unsnooze) body.snoozed_until = null;
      if (Object.keys(body).length === 0) throw usageError("nothing to update: give --status, --snooze, --snooze-until or --unsnooze");
      const res = await ctx.run({
        method: "PATCH",
        path: path`/issues/${id!}`,
        body,
        expect: "issue",
        local: async (deps, scope) => (await domain()).updateIssue(deps, scope, id!, parseInput(updateIssueInput, body)),
      });
      ctx.out.result(res, { item: "issue", columns: ISSUE_FIELDS });
    },
  );
  return r;
}
