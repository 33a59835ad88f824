import type { Command } from "commander";
import { createChannelInput, updateChannelInput } from "../../src/contracts/notificationChannels";
import { path } from "../context";
import { CliError, EXIT } from "../errors";
import { confirm } from "../prompt";
import { Resource } from "../resource";

const ID = "nc_0123456789abcdef0123456789abcdef";

/** Where a channel sends, as its config shows it (secrets masked). */
function target(c: Record<string, unknown>): string {
  const cfg = (c.config ?? {}) as Record<string, unknown>;
  const v = c.type === "email" ? cfg.to : c.type === "webhook" ? cfg.url : cfg.webhook_url;
  return Array.isArray(v) ? v.join(", ") : typeof v === "string" ? v : "";
}

/** The 409's details: the alert rules that still notify the channel. */
function rulesInTheWay(err: CliError): { alert_rule_id: string; name: string }[] {
  const details = (err.body as { error?: { details?: unknown } } | undefined)?.error?.details;
  return Array.isArray(details) ? details.filter((d): d is { alert_rule_id: string; name: string } => typeof (d as { alert_rule_id?: unknown } | null)?.alert_rule_id === "string") : [];
}

/** `hookrelay channels list|get|create|update|delete|test`: where alert rules send their alerts. */
export function registerChannels(program: Command) {
  const r = new Resource(
    program,
    {
      noun: "channels",
      singular: "notification channel",
      description: "Notification channels alert rules notify: webhook, Slack, Discord or email",
      path: "/notification-channels",
      listKey: "channels",
      // The spec's channel answers are not wrapped: the item is the answer (its `id` is the key every answer has).
      itemKey: "",
      columns: ["id", "name", "type", { key: "sends_to", get: target }, "created_at"],
      exampleId: ID,
      domain: () => import("../../src/domain/notificationChannels"),
    },
    [
      `hookrelay channels create --name 'Ops Slack' --type slack --config '{"webhook_url": "https://hooks.slack.com/services/T…/B…/…"}'`,
      `hookrelay channels test ${ID}`,
      "hookrelay channels list",
    ],
  );
  const fields = {
    help: {
      channel_type: "webhook, slack, discord or email",
      config:
        'the type\'s settings as JSON or @file.json: webhook {"url", "secret"?}, slack/discord {"webhook_url"}, email {"to", "from"?, "smtp_url"?}; secrets read back as ******** and sent back so they are kept',
    },
    aliases: { "--type": "channel_type" },
  };
  r.list({ local: (m, deps, scope) => m.listChannels(deps, scope), examples: ["hookrelay channels list", "hookrelay channels list --json | jq -r '.channels[] | [.id, .name] | @tsv'"] });
  r.get({ local: (m, deps, scope, id) => m.getChannel(deps, scope, id), description: "Show a channel (secrets masked)" });
  r.create({
    input: createChannelInput,
    ...fields,
    local: (m, deps, scope, body) => m.createChannel(deps, scope, body),
    examples: [
      `hookrelay channels create --name 'Pager hook' --type webhook --config '{"url": "https://ops.example.com/alerts", "secret": "s3cret"}'`,
      `hookrelay channels create --name Ops --type email --config '{"to": "ops@example.com", "smtp_url": "smtp://alerts:pass@mail.example.com:587"}'`,
      "hookrelay channels create --name 'Ops Discord' --type discord --config @discord.json --json",
    ],
  });
  r.update({
    input: updateChannelInput,
    help: fields.help,
    description: "Rename a channel or change its config (the fields given are laid over the stored ones; null removes one)",
    local: (m, deps, scope, id, body) => m.updateChannel(deps, scope, id, body),
    examples: [`hookrelay channels update ${ID} --name 'Ops Slack #alerts'`, `hookrelay channels update ${ID} --config '{"secret": null}'`],
  });
  r.verb(
    "delete <id>",
    "Delete a channel (refused while an alert rule notifies it)",
    [`hookrelay channels delete ${ID} --yes`],
    (cmd) => cmd.option("-y, --yes", "do not ask for confirmation"),
    async (ctx, opts, [id], domain) => {
      await confirm(opts, `Delete notification channel ${id}?`);
      let res;
      try {
        res = await ctx.run({ method: "DELETE", path: path`/notification-channels/${id!}`, expect: "deleted", local: async (deps, scope) => (await domain()).deleteChannel(deps, scope, id!) });
      } catch (err) {
        if (!(err instanceof CliError) || err.code !== "conflict") throw err;
        const rules = rulesInTheWay(err);
        if (rules.length === 0) throw err;
        const names = rules.map((x) => `"${x.name}" (${x.alert_rule_id})`).join(", ");
        throw new CliError(`the channel is still notified by ${rules.length === 1 ? "the alert rule" : "the alert rules"} ${names}: remove it there first (hookrelay alerts update <id> --channel-ids …)`, EXIT.error, "conflict", err.body);
      }
      ctx.out.result(res, { text: (_r, c) => `${c.green("✓")} Deleted notification channel ${c.cyan(id!)}` });
    },
  );
  r.verb(
    "test <id>",
    "Send a test notification now; exit 1 with the error when it fails",
    [`hookrelay channels test ${ID}`, `hookrelay channels test ${ID} --json`],
    () => {},
    async (ctx, _opts, [id], domain) => {
      const res = await ctx.run<{ success: boolean; error: string | null }>({
        method: "POST",
        path: path`/notification-channels/${id!}/test`,
        expect: "success",
        local: async (deps, scope) => (await domain()).testChannel(deps, scope, id!),
      });
      if (res.success) return ctx.out.result(res, { text: (_r, c) => `${c.green("✓")} Test notification sent to ${c.cyan(id!)}` });
      // The answer on stdout as for any command; the failure on stderr and in the exit code.
      if (ctx.json) ctx.out.printJson(res);
      const message = `the test notification failed: ${res.error}`;
      throw new CliError(message, EXIT.error, "test_failed", { error: { code: "test_failed", message } });
    },
  );
  return r;
}
