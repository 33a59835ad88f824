import { createHmac } from "node:crypto";
import { webhookChannelConfig, MASK, type WebhookChannelConfig } from "../../contracts/notificationChannels";
import { postJson } from "./http";
import type { AlertNotification, ChannelKind } from "./types";

/** The JSON body of contract §6 (plus `link`, into the admin UI). */
export function webhookBody(n: AlertNotification): string {
  return JSON.stringify({
    type: n.type,
    alert_rule_id: n.alertRuleId,
    rule_name: n.ruleName,
    rule_type: n.ruleType,
    reason: n.reason,
    data: n.data,
    triggered_at: n.triggeredAt,
    link: n.link,
  });
}

/** `sha256=<hex HMAC-SHA256 of the raw body>`, keyed with the channel's secret. */
export function webhookSignature(secret: string, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
}

export const webhook: ChannelKind<WebhookChannelConfig> = {
  type: "webhook",
  config: webhookChannelConfig,
  secretFields: ["secret"],
  masked: (c) => ({ url: c.url, ...(c.secret ? { secret: MASK } : {}) }),
  async send(config, n, ctx) {
    const body = webhookBody(n);
    const headers: Record<string, string> = config.secret ? { "x-hookrelay-signature": webhookSignature(config.secret, body) } : {};
    await postJson(config.url, body, headers, ctx, "the webhook");
  },
};
