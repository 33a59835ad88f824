import { discordChannelConfig, type DiscordChannelConfig } from "../../contracts/notificationChannels";
import { dataFields, headline, truncate } from "./format";
import { postJson } from "./http";
import { maskUrlToken } from "./mask";
import type { AlertNotification, ChannelKind } from "./types";

const RED = 0xe5484d;
const BLUE = 0x3e63dd;
const GREEN = 0x30a46c;

/**
 * An execute-webhook payload: `content` for the notification line, one
 * embed with the rule, the reason, the numbers and a link. Mentions are
 * switched off: a rule named "@everyone" pings nobody. Discord's limits
 * (content 2000, title 256, description 4096, 25 fields of 1024) are kept.
 */
export function discordMessage(n: AlertNotification) {
  return {
    username: "hookrelay",
    content: truncate(`${n.type === "alert.resolved" ? "✅" : "🚨"} ${headline(n)}`, 2000),
    allowed_mentions: { parse: [] as string[] },
    embeds: [
      {
        title: truncate(n.type === "alert.test" ? "Test notification" : n.type === "alert.resolved" ? `Resolved: ${n.ruleName}` : n.ruleName, 256),
        url: n.link,
        description: truncate(`${n.reason}\n\n[Open in hookrelay](${n.link})`, 4096),
        color: n.type === "alert.test" ? BLUE : n.type === "alert.resolved" ? GREEN : RED,
        fields: dataFields(n.data)
          .slice(0, 24)
          .map(([name, value]) => ({ name: truncate(name, 256), value: truncate(value, 1024), inline: true })),
        footer: { text: n.type === "alert.test" ? "hookrelay" : `hookrelay · ${n.ruleType}` },
        timestamp: n.triggeredAt,
      },
    ],
  };
}

export const discord: ChannelKind<DiscordChannelConfig> = {
  type: "discord",
  config: discordChannelConfig,
  secretFields: ["webhook_url"],
  masked: (c) => ({ webhook_url: maskUrlToken(c.webhook_url) }),
  async send(config, n, ctx) {
    await postJson(config.webhook_url, JSON.stringify(discordMessage(n)), {}, ctx, "Discord");
  },
};
