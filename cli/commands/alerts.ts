import { InvalidArgumentError, type Command } from "commander";
import { alertHistoryQuery, createAlertRuleInput, listAlertRulesQuery, updateAlertRuleInput, type AlertRule, type ChannelNotified } from "../../src/contracts/alertRules";
import { parseIntArg, type Opts } from "../command";
import { parseInput, path, type Context, type QueryValue } from "../context";
import { usageError } from "../errors";
import { record, table, tsv, type ColumnSpec } from "../output/table";
import { Resource } from "../resource";

const ID = "0123456789abcdef0123456789abcdef";

/** rule_config's fields as flags of their own, for the simple cases; --config takes the whole object. */
const CONFIG_FLAGS: { flag: string; field: string; help: string }[] = [
  { flag: "--threshold-percent", field: "threshold_percent", help: "failure_rate: fire when at least this % of the deliveries in the window failed" },
  { flag: "--min-attempts", field: "min_attempts", help: "failure_rate: judge only over at least this many finished deliveries (default 10)" },
  { flag: "--threshold-ms", field: "threshold_ms", help: "latency: fire when the percentile delivery time reaches this many ms" },
  { flag: "--percentile", field: "percentile", help: "latency: which percentile of delivery times (default 95)" },
  { flag: "--threshold", field: "threshold", help: "dlq: fire when at least this many deliveries landed in the DLQ in the window (default 1)" },
  { flag: "--min-events", field: "min_events", help: "volume_drop: fire when fewer events than this arrived in the window" },
  { flag: "--window-minutes", field: "window_minutes", help: "every type but issue_opened: how far back each check looks" },
];

const attr = (flag: string) => flag.slice(2).replace(/-([a-z])/g, (_, ch: string) => ch.toUpperCase());

function numberArg(flag: string) {
  return (raw: string) => {
    const n = Number(raw);
    if (raw.trim() === "" || !Number.isFinite(n)) throw new InvalidArgumentError(`${flag} must be a number.`);
    return n;
  };
}

function configFlags(cmd: Command) {
  for (const f of CONFIG_FLAGS) cmd.option(`${f.flag} <n>`, f.help, numberArg(f.flag));
}

/** The per-field flags that were given, as rule_config fields. */
function givenConfig(opts: Opts): Record<string, number> {
  const out: Record<string, number> = {};
  for (const f of CONFIG_FLAGS) if (opts[attr(f.flag)] !== undefined) out[f.field] = opts[attr(f.flag)] as number;
  return out;
}

/** rule_config as given (--config, or --data as an object or its JSON text), or null. */
function configObject(v: unknown): Record<string, unknown> | null {
  if (typeof v === "string") {
    try {
      v = JSON.parse(v);
    } catch {
      return null;
    }
  }
  return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
}

async function getRule(ctx: Context, id: string) {
  return ctx.run<{ alert_rule: AlertRule }>({
    method: "GET",
    path: path`/alert-rules/${id}`,
    expect: "alert_rule",
    local: async (deps, scope) => (await import("../../src/domain/alertRules")).getAlertRule(deps, scope, id),
  });
}

/** What each channel made of a trigger, in a table cell: `Ops hook ok, Pager failed`. */
export function channelOutcomes(entry: { channels_notified: string }): string {
  let list: ChannelNotified[];
  try {
    list = JSON.parse(entry.channels_notified) as ChannelNotified[];
  } catch {
    return entry.channels_notified;
  }
  if (list.length === 0) return "(no channel)";
  return list.map((o) => `${o.channel_name ?? o.channel_id} ${o.success ? "ok" : `failed: ${o.error}`}`).join("; ");
}

const HISTORY_COLUMNS: ColumnSpec[] = ["created_at", "trigger_reason", { key: "channels", get: (e) => channelOutcomes(e as { channels_notified: string }) }];

function historyText(ctx: Context, rows: Record<string, unknown>[]) {
  if (!ctx.out.tty) return tsv(rows, HISTORY_COLUMNS);
  if (rows.length === 0) return ctx.out.c.dim("not fired yet\n");
  return table(rows, HISTORY_COLUMNS, ctx.out.c, process.stdout.columns || undefined);
}

/** `hookrelay alerts list|get|create|update|delete|history`: alert rules and what they fired. */
export function registerAlerts(program: Command) {
  const r = new Resource(
    program,
    {
      noun: "alerts",
      singular: "alert rule",
      description: "Alert rules: watch failure rate, latency, the DLQ, volume drops and new issues, and notify channels",
      path: "/alert-rules",
      listKey: "alert_rules",
      itemKey: "alert_rule",
      columns: ["id", "name", "rule_type", "enabled", "trigger_count", "last_triggered_at", "cooldown_minutes", "channel_ids"],
      exampleId: ID,
      domain: () => import("../../src/domain/alertRules"),
    },
    [
      "hookrelay alerts create --name 'Orders failing' --type failure_rate --threshold-percent 20 --destination-id dst_… --channel-ids nc_…",
      "hookrelay alerts create --name 'New issues' --type issue_opened --channel-ids nc_… --cooldown-minutes 0",
      `hookrelay alerts history ${ID}`,
    ],
  );
  const fields = {
    help: {
      rule_type: "what the rule watches: failure_rate, latency, dlq, volume_drop or issue_opened",
      rule_config: 'the type\'s settings as JSON or @file.json, e.g. {"threshold_percent": 20, "window_minutes": 5, "min_attempts": 10}',
      source_id: "only this source's events (its id or slug)",
      destination_id: "only deliveries to (issues of) this destination",
      channel_ids: "notification channels to notify: comma-separated nc_ ids, or a JSON array",
      cooldown_minutes: "stay quiet this long after firing (default 15; 0: every time)",
      enabled: "check the rule (default on)",
    },
    aliases: { "--type": "rule_type", "--config": "rule_config" },
  };
  r.list({
    query: listAlertRulesQuery,
    description: "List alert rules, newest first",
    help: { rule_type: "only rules of this type", enabled: "1: only enabled rules, 0: only disabled ones" },
    local: (m, deps, scope, q) => m.listAlertRules(deps, scope, q),
    examples: ["hookrelay alerts list", "hookrelay alerts list --rule-type failure_rate --enabled 1 --json"],
  });
  r.get({
    local: (m, deps, scope, id) => m.getAlertRule(deps, scope, id),
    description: "Show an alert rule with its 20 most recent triggers",
    view: (ctx) => ({
      text: (res: { alert_rule: Record<string, unknown>; history: Record<string, unknown>[] }) => {
        const head = record(res.alert_rule, undefined, ctx.out.tty ? ctx.out.c : null);
        if (!ctx.out.tty) return head;
        return `${head}\n${ctx.out.c.bold("Recent history")}\n${historyText(ctx, res.history)}`;
      },
    }),
    examples: [`hookrelay alerts get ${ID}`, `hookrelay alerts get ${ID} --json | jq .history`],
  });
  r.create({
    input: createAlertRuleInput,
    ...fields,
    description: "Create an alert rule: its settings as per-field flags (--threshold-percent …) or --config '{…}'",
    extraFlags: (cmd) => {
      configFlags(cmd);
      cmd.option("--disabled", "create it switched off (same as --no-enabled)");
    },
    mapBody: (_ctx, opts, body) => {
      const given = givenConfig(opts);
      if (Object.keys(given).length > 0) {
        const base = body.rule_config === undefined ? {} : configObject(body.rule_config);
        if (!base) throw usageError("--config must be a JSON object to add the per-field flags to");
        body.rule_config = { ...base, ...given };
      }
      if (opts.disabled) body.enabled = false;
    },
    local: (m, deps, scope, body) => m.createAlertRule(deps, scope, body),
    examples: [
      "hookrelay alerts create --name 'Orders failing' --type failure_rate --threshold-percent 20 --window-minutes 5 --min-attempts 10 --destination-id dst_… --channel-ids nc_…",
      `hookrelay alerts create --name 'Slow receiver' --type latency --config '{"threshold_ms": 2000, "percentile": 95}'`,
      "hookrelay alerts create --name 'Stripe went quiet' --type volume_drop --min-events 1 --window-minutes 120 --source-id stripe",
      "hookrelay alerts create --data @rule.json --json",
    ],
  });
  r.update({
    input: updateAlertRuleInput,
    ...fields,
    description: "Change fields of an alert rule (only the flags given); a per-field flag changes that field of the stored config",
    extraFlags: (cmd) => {
      configFlags(cmd);
      cmd.option("--disabled", "switch it off (same as --no-enabled); --enabled switches it on");
    },
    mapBody: async (ctx, opts, body, id) => {
      if (opts.disabled) {
        if (body.enabled === true) throw usageError("--enabled and --disabled contradict each other: give one");
        body.enabled = false;
      }
      const given = givenConfig(opts);
      if (Object.keys(given).length === 0) return;
      let base: Record<string, unknown> | null = {};
      if (body.rule_config !== undefined) base = configObject(body.rule_config);
      else {
        // A PATCH replaces rule_config as a whole: one flag changes one field of the stored config, unless the type changes.
        const { alert_rule } = await getRule(ctx, id!);
        if (body.rule_type === undefined || body.rule_type === alert_rule.rule_type) base = configObject(alert_rule.rule_config);
      }
      if (!base) throw usageError("--config must be a JSON object to add the per-field flags to");
      body.rule_config = { ...base, ...given };
    },
    local: (m, deps, scope, id, body) => m.updateAlertRule(deps, scope, id, body),
    examples: [`hookrelay alerts update ${ID} --disabled`, `hookrelay alerts update ${ID} --enabled`, `hookrelay alerts update ${ID} --threshold-percent 30 --cooldown-minutes 60`, `hookrelay alerts update ${ID} --channel-ids nc_…,nc_…`],
  });
  r.delete({ local: (m, deps, scope, id) => m.deleteAlertRule(deps, scope, id), description: "Delete an alert rule and its history", examples: [`hookrelay alerts delete ${ID} --yes`] });
  r.verb(
    "history <id>",
    "Every time the rule fired, newest first: why, the numbers measured, and each channel's outcome",
    [`hookrelay alerts history ${ID}`, `hookrelay alerts history ${ID} --limit 100 --json | jq -r '.history[].trigger_reason'`],
    (cmd) =>
      cmd
        .option("--limit <n>", "page size, 1 to 100 (default 50)", parseIntArg("--limit", 1))
        .option("--offset <n>", "skip this many", parseIntArg("--offset", 0))
        .option("--cursor <cursor>", "continue from a page's next_cursor"),
    async (ctx, opts, [id], domain) => {
      const query: Record<string, QueryValue> = { limit: opts.limit, offset: opts.offset, cursor: opts.cursor };
      const text = Object.fromEntries(Object.entries(query).flatMap(([k, v]) => (v === undefined ? [] : [[k, String(v)]])));
      const res = await ctx.run({
        method: "GET",
        path: path`/alert-rules/${id!}/history`,
        query,
        expect: "history",
        local: async (deps, scope) => (await domain()).listAlertHistory(deps, scope, id!, parseInput(alertHistoryQuery, text, "query")),
      });
      ctx.out.result(res, { list: "history", columns: HISTORY_COLUMNS, empty: "The rule has not fired yet." });
    },
  );
  return r;
}
