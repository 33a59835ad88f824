import type { Command } from "commander";
import type { ChalkInstance } from "chalk";
import { bulkRetryFilters } from "../../src/contracts/eventRetry";
import { listEventsQuery } from "../../src/contracts/events";
import { parseIntArg } from "../command";
import { parseInput, path, type Context } from "../context";
import { CliError, EXIT, usageError } from "../errors";
import { followUntilInterrupted, openFeed } from "../feed";
import { finishStartedJob, finishWaitedJob, waitForJob } from "../jobs";
import { resolveSourceField, resolveSources } from "../sourceRefs";
import { attemptWhenCell } from "../output/attempts";
import { cellText, record, table } from "../output/table";
import { Resource } from "../resource";

const ID = "evt_0123456789abcdef0123456789abcdef";

const FILTERS = ["source_id", "status", "verification_status", "dedup_status", "method", "search", "after", "before"] as const;
const FILTER_HELP: Record<string, string> = {
  source_id: "only this source (its id or slug)",
  status: "comma list of pending, delivered, failed, held, rejected, ignored",
  verification_status: "comma list of verified, failed, skipped",
  dedup_status: "comma list of unique, duplicate, skipped",
  method: "comma list of HTTP methods",
  search: "an event id prefix, or text in the body",
  after: "received at or after this ISO 8601 time",
  before: "received before this ISO 8601 time",
  org_id: "organization (default: yours)",
  env_id: "environment (default: yours)",
};

type RetryResult = { retried: { destination_id: string; connection_id: string; attempt_id: string; status: string }[]; errors: { destination_id: string; code: string; message: string }[] };

/** `hookrelay events list|get|retry|tail`. */
export function registerEvents(program: Command) {
  const r = new Resource(
    program,
    {
      noun: "events",
      singular: "event",
      description: "Received webhooks: list, inspect, retry",
      path: "/events",
      listKey: "events",
      itemKey: "",
      columns: ["id", "received_at", "source_name", "method", "verification_status", "status", "payload_size"],
      exampleId: ID,
      domain: () => import("../../src/domain/events"),
    },
    ["hookrelay events list --status failed", `hookrelay events get ${ID}`],
  );
  r.list({
    query: listEventsQuery,
    paged: true,
    help: FILTER_HELP,
    local: (m, deps, scope, q) => m.listEvents(deps, scope, q),
    examples: ["hookrelay events list", "hookrelay events list --status failed,rejected --limit 20", "hookrelay events list --source-id src_… --after 2026-01-01T00:00:00Z --json"],
  });
  r.get({
    local: (m, deps, scope, id) => m.getEvent(deps, scope, id),
    description: "Show an event: request headers, body and delivery attempts",
    examples: [`hookrelay events get ${ID}`, `hookrelay events get ${ID} --json | jq -r .body`],
    view: (ctx) => ({ text: (e, c) => eventDetailText(ctx, e, c) }),
  });
  r.verb(
    "retry [id]",
    "Retry an event's delivery to every connected destination; without an id, retry every event matching the filters (a background job)",
    [`hookrelay events retry ${ID}`, "hookrelay events retry --status failed --after 2026-01-01T00:00:00Z --wait", "hookrelay events retry --all --json"],
    (cmd) => {
      for (const f of FILTERS) cmd.option(`--${f.replace(/_/g, "-")} <value>`, `bulk: ${FILTER_HELP[f]}`);
      cmd
        .option("--force", "one event: deliver it even though it was rejected (failed signature or schema); check its payload first")
        .option("--all", "bulk: retry every event (when no filter is given)")
        .option("--wait", "bulk: follow the job to the end (progress bar on a terminal), then print its final progress; exit 1 if any of it failed or it did nothing")
        .option("--timeout <seconds>", "with --wait: give up after this long", parseIntArg("--timeout", 1));
    },
    async (ctx, o, [id]) => {
      const filters: Record<string, string> = {};
      for (const f of FILTERS) {
        const v = o[f.replace(/_([a-z])/g, (_m: string, ch: string) => ch.toUpperCase())];
        if (v !== undefined) filters[f] = v;
      }
      if (id) {
        if (Object.keys(filters).length > 0 || o.all || o.wait) throw usageError("give an event id, or filters for a bulk retry, not both");
        return retryOne(ctx, id, o.force === true);
      }
      if (o.force) throw usageError("--force retries one event: give its id");
      if (Object.keys(filters).length === 0 && !o.all) throw usageError("give an event id, filters (e.g. --status failed), or --all to retry every event");
      await resolveSourceField(ctx, filters);
      const started = await ctx.run<{ job_id: string | null; total: number; skipped?: number }>({
        method: "POST",
        path: "/events/retry",
        body: filters,
        expect: "job_id",
        local: async (deps, scope) => (await import("../../src/domain/bulkRetry")).startBulkRetry(deps, scope, parseInput(bulkRetryFilters, filters)),
      });
      // Nothing matched: the server made no job (job_id null), so there is nothing to wait for either.
      if (!o.wait || started.job_id === null) {
        return finishStartedJob(
          ctx,
          started,
          (s, c, mark) =>
            s.job_id === null
              ? `${mark} Nothing to retry: no event matched the filters${s.skipped ? ` (${s.skipped} rejected, skipped)` : ""}`
              : `${mark} Bulk retry started: job ${c.cyan(s.job_id)}, ${s.total} events${s.skipped ? `, ${s.skipped} skipped` : ""} (follow it: hookrelay jobs get ${s.job_id} --wait)`,
          "no event to retry matched the filters",
          "nothing to retry",
        );
      }
      finishWaitedJob(ctx, await waitForJob(ctx, started.job_id, { label: "retry", timeoutMs: o.timeout && o.timeout * 1000 }));
    },
  );
  r.verb(
    "tail",
    "Watch events arrive live: a terminal UI (↑/↓, enter for details, r to retry, q to quit); JSON lines when piped",
    ["hookrelay events tail", "hookrelay events tail --source github --status failed,rejected", "hookrelay events tail --json | jq -r .id"],
    (cmd) =>
      cmd
        .option("--source <source...>", "only these sources (id, slug or name)")
        .option("--status <list>", "only events with these statuses (comma list: pending, delivered, failed, held, rejected, ignored)"),
    async (ctx, o) => {
      const sources = await resolveSources(ctx, o.source ?? []);
      const sourceIds = sources.map((s) => s.id);
      const statuses = o.status ? String(o.status).split(",").map((s: string) => s.trim()).filter(Boolean) : [];
      if (!ctx.json && process.stdout.isTTY && process.stdin.isTTY) {
        const { runTail } = await import("../tui/tail");
        return runTail({ ctx, sourceIds, statuses, where: ctx.where + (sources.length ? ` · ${sources.map((s) => s.name).join(", ")}` : "") });
      }
      // Piped or --json: one list-item JSON object per arriving event, until interrupted.
      const feed = openFeed(ctx, { sourceIds }, {
        onEvent: (e) => {
          if (statuses.length === 0 || statuses.includes(e.status)) process.stdout.write(JSON.stringify(e) + "\n");
        },
        onState: (s) => {
          if (s.state === "reconnecting" && s.detail) process.stderr.write(`reconnecting: ${s.detail}\n`);
        },
      });
      await followUntilInterrupted(feed);
    },
  );
  return r;
}

/**
 * POST /events/{id}/retry (with `{force: true}` for --force), then fails the
 * command when nothing was queued. A rejected event answers 409: the server
 * says why, and the CLI how to override it.
 */
async function retryOne(ctx: Context, id: string, force: boolean) {
  let res: RetryResult;
  try {
    res = await ctx.run<RetryResult>({
      method: "POST",
      path: path`/events/${id}/retry`,
      body: force ? { force: true } : undefined,
      expect: "retried",
      local: async (deps, scope) => {
        const { retryEvent } = await import("../../src/domain/retries");
        return retryEvent(deps, scope, id, { force });
      },
    });
  } catch (err) {
    if (err instanceof CliError && err.code === "conflict" && !force && !/--force/.test(err.message)) {
      throw new CliError(`${err.message} (once you have checked its payload, \`hookrelay events retry ${id} --force\` delivers it anyway)`, err.exitCode, err.code, err.body);
    }
    throw err;
  }
  ctx.out.result(res, {
    text: (r, c) =>
      [
        `${r.retried.length ? c.green("✓") : c.yellow("!")} Queued ${r.retried.length} ${r.retried.length === 1 ? "delivery" : "deliveries"} for ${c.cyan(id)}`,
        ...r.retried.map((x) => `  ${c.cyan(x.destination_id)}  ${x.status}  (attempt ${x.attempt_id})`),
        ...r.errors.map((e) => `  ${c.cyan(e.destination_id)}  ${c.red(e.code)}  ${e.message}`),
      ].join("\n"),
  });
  if (res.retried.length === 0) {
    const why = res.errors.length ? `${res.errors.length} not retried (${[...new Set(res.errors.map((e) => e.code))].join(", ")})` : "its source has no connection to deliver through";
    const message = `nothing queued for ${id}: ${why}`;
    throw new CliError(message, EXIT.error, "nothing_done", { error: { code: "nothing_done", message, details: res.errors } });
  }
}

const SUMMARY = ["id", "source_name", "method", "path", "status", "verification_status", "dedup_status", "event_type", "received_at", "payload_size", "content_type", "source_ip"];

/** The detail as sections on a terminal; in a pipe, `key\tvalue` lines then the body. */
export function eventDetailText(ctx: Context, e: Record<string, any>, c: ChalkInstance) {
  const tty = ctx.out.tty;
  const parts = [record(e, SUMMARY, tty ? c : null).trimEnd()];
  if (e.verification_error) parts.push(`${tty ? c.red("verification error") : "verification_error"}  ${e.verification_error}`);
  const heading = (t: string) => (tty ? "\n" + c.bold.underline(t) : "");
  parts.push(heading("Headers") + "\n" + record(e.headers ?? {}, undefined, tty ? c : null).trimEnd());
  let body = String(e.body ?? "");
  if (e.body_encoding === "utf8") {
    try {
      body = JSON.stringify(JSON.parse(body), null, 2);
    } catch {}
  } else body = `(base64) ${body}`;
  parts.push(heading("Body") + "\n" + body);
  const attempts = (e.delivery_attempts ?? []) as Record<string, unknown>[];
  const when = { key: "attempted_at", header: "sent", get: (a: Record<string, unknown>) => attemptWhenCell(a) };
  if (tty) parts.push(heading(`Delivery attempts (${attempts.length})`) + "\n" + (attempts.length ? table(attempts, ["id", "destination_id", "status", "status_code", "latency_ms", "attempt_number", "trigger_type", when, "error"], c).trimEnd() : c.dim("none")));
  else for (const a of attempts) parts.push(["attempt", a.id, a.destination_id, a.status, a.status_code, a.attempted_at, a.scheduled_at].map(cellText).join("\t"));
  return parts.join("\n");
}
