import { createHmac } from "node:crypto";
import { webhookChannelConfig, MASK, type WebhookChannelConfig } from "../../contracts/notificationChannels";
import { postJson } from "./http";
import type { AlertNotification, ChannelKind } from "./types";

/** The JSON body of docs/decisions.md D9 (plus `link`, into the admin UI). */
export function webhookBody(n: AlertNotification): string {
  return JSON.stringify({
    type: n.type,
    alert_rule_id: n.alertRuleId,
    rule_name: n.ruleName,
    rule_type: n.ruleType,
    reason: n.reason,
    data: n.data,
    triggered_at: n.triggeredAt,
    ...(n.resolvedAt ? { resolved_at: n.resolvedAt } : {}),
    link: n.link,
  });
}

/**
 * `sha256=<hex HMAC-SHA256 of the raw body>`, keyed with the channel's secret.
 * Kept for receivers written against it; it covers the body only, so a
 * captured request stays valid for ever: the Standard Webhooks headers below
 * bind the signature to a message id and a time.
 */
export function webhookSignature(secret: string, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
}

/**
 * The key of the Standard Webhooks signature: a `whsec_<base64>` secret (the
 * form Standard Webhooks libraries make) is its decoded base64 part, as
 * `new Webhook(secret)` reads it; any other secret is its UTF-8 bytes, the
 * key of the body-only signature too (docs/alerts.md shows both ways to verify).
 */
export function channelSigningKey(secret: string): Buffer {
  if (secret.startsWith("whsec_")) {
    const b64 = secret.slice("whsec_".length);
    if (/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) {
      const key = Buffer.from(b64, "base64");
      if (key.length > 0) return key;
    }
  }
  return Buffer.from(secret, "utf8");
}

/**
 * Standard Webhooks (https://www.standardwebhooks.com) headers: HMAC-SHA256
 * over `<webhook-id>.<webhook-timestamp>.<body>`, sent as `v1,<base64>`. A
 * receiver refuses a timestamp far from its clock and an id it has seen, so
 * a captured notification cannot be replayed.
 */
export function standardWebhookSignature(secret: string, id: string, at: Date, body: string): Record<string, string> {
  const timestamp = String(Math.floor(at.getTime() / 1000));
  const signature = createHmac("sha256", channelSigningKey(secret)).update(`${id}.${timestamp}.${body}`).digest("base64");
  return { "webhook-id": id, "webhook-timestamp": timestamp, "webhook-signature": `v1,${signature}` };
}

export const webhook: ChannelKind<WebhookChannelConfig> = {
  type: "webhook",
  config: webhookChannelConfig,
  secretFields: ["secret"],
  masked: (c) => ({ url: c.url, ...(c.secret ? { secret: MASK } : {}) }),
  async send(config, n, ctx) {
    const body = webhookBody(n);
    // Signed at each try: the timestamp says when this request was sent.
    const headers: Record<string, string> = config.secret
      ? { "x-hookrelay-signature": webhookSignature(config.secret, body), ...standardWebhookSignature(config.secret, n.id, ctx.now(), body) }
      : {};
    await postJson(config.url, body, headers, ctx, "the webhook");
  },
};
