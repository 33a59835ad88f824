import { slackChannelConfig, type SlackChannelConfig } from "../../contracts/notificationChannels";
import { dataFields, headline, truncate } from "./format";
import { postJson } from "./http";
import { maskUrlToken } from "./mask";
import type { AlertNotification, ChannelKind } from "./types";

/** Slack's mrkdwn treats these three as control characters. */
const esc = (s: string) => s.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");

/**
 * An incoming-webhook message: `text` for notifications and for
 * Slack-compatible receivers without blocks (Mattermost, Rocket.Chat), and
 * blocks for Slack itself.
 */
export function slackMessage(n: AlertNotification) {
  const title = n.type === "alert.test" ? "Test notification from hookrelay" : n.type === "alert.resolved" ? `Resolved: ${n.ruleName}` : `Alert: ${n.ruleName}`;
  const fields = dataFields(n.data).slice(0, 10);
  const details = fields.map(([k, v]) => `*${esc(k)}:* ${esc(v)}`).join("\n");
  return {
    text: `${n.type === "alert.resolved" ? ":white_check_mark:" : ":rotating_light:"} ${esc(headline(n))}\n<${n.link}|Open in hookrelay>`,
    blocks: [
      { type: "header", text: { type: "plain_text", text: truncate(title, 150) } },
      { type: "section", text: { type: "mrkdwn", text: truncate(`${esc(n.reason)}${n.type !== "alert.test" ? `\nRule type: \`${esc(n.ruleType)}\`` : ""}`, 3000) } },
      ...(details ? [{ type: "section", text: { type: "mrkdwn", text: truncate(details, 3000) } }] : []),
      { type: "context", elements: [{ type: "mrkdwn", text: `<${n.link}|Open in hookrelay> · ${esc(n.triggeredAt)}` }] },
    ],
  };
}

export const slack: ChannelKind<SlackChannelConfig> = {
  type: "slack",
  config: slackChannelConfig,
  secretFields: ["webhook_url"],
  masked: (c) => ({ webhook_url: maskUrlToken(c.webhook_url) }),
  async send(config, n, ctx) {
    await postJson(config.webhook_url, JSON.stringify(slackMessage(n)), {}, ctx, "Slack");
  },
};
