/** The notification channel types in words: what each is, the settings it takes, and where a channel sends. */
import { api } from "../../api";
import type { Channel, ChannelType } from "../../types";

interface ConfigField {
  key: string;
  label: string;
  help: string;
  placeholder?: string;
  optional?: boolean;
  /** Masked in answers: a password input, and the mask sent back keeps the stored value. */
  secret?: boolean;
  /** Said when a required field is left empty. */
  missing?: string;
}

interface ChannelKind {
  label: string;
  pitch: string;
  fields: ConfigField[];
}

export const KINDS: Record<ChannelType, ChannelKind> = {
  webhook: {
    label: "Webhook",
    pitch: "A JSON POST to an endpoint of yours.",
    fields: [
      {
        key: "url",
        label: "URL",
        placeholder: "https://ops.example.com/hookrelay-alerts",
        missing: "Say where to POST the alerts",
        help: "Each alert is POSTed here as JSON: the rule, the reason in words, the numbers measured and a link back here.",
      },
      {
        key: "secret",
        label: "Signing secret (optional)",
        optional: true,
        secret: true,
        help: "With a secret, each notification carries X-Hookrelay-Signature: sha256=<HMAC-SHA256 of the body>, so your receiver can tell it came from hookrelay.",
      },
    ],
  },
  slack: {
    label: "Slack",
    pitch: "A message in a Slack channel.",
    fields: [
      {
        key: "webhook_url",
        label: "Incoming webhook URL",
        placeholder: "https://hooks.slack.com/services/T…/B…/…",
        missing: "Paste the Slack incoming webhook URL",
        secret: true,
        help: "In Slack: Apps → Incoming Webhooks → Add to Slack, pick the channel, copy the webhook URL. Mattermost's incoming webhooks work too.",
      },
    ],
  },
  discord: {
    label: "Discord",
    pitch: "A message in a Discord channel.",
    fields: [
      {
        key: "webhook_url",
        label: "Webhook URL",
        placeholder: "https://discord.com/api/webhooks/…/…",
        missing: "Paste the Discord webhook URL",
        secret: true,
        help: "In Discord: Server settings → Integrations → Webhooks → New webhook, choose the channel, Copy webhook URL.",
      },
    ],
  },
  email: {
    label: "Email",
    pitch: "An email through your SMTP server.",
    fields: [
      { key: "to", label: "To", placeholder: "ops@example.com, oncall@example.com", missing: "Say who gets the email", help: "One address, or several separated by commas." },
      { key: "from", label: "From (optional)", optional: true, placeholder: "hookrelay <alerts@example.com>", help: "Default: hookrelay <hookrelay@the host of this server's base URL>." },
      {
        key: "smtp_url",
        label: "SMTP server (optional)",
        optional: true,
        secret: true,
        placeholder: "smtp://user:password@mail.example.com:587",
        help: "smtp://… on port 587 upgrades to TLS when the server offers it; smtps://… on port 465 is TLS from the start. Empty: the server's HOOKRELAY_SMTP_URL.",
      },
    ],
  },
};

export const channelTypeLabel = (t: string) => KINDS[t as ChannelType]?.label ?? t;

/** Where a channel sends, as its config shows it (secrets masked by the server). */
export function target(c: Pick<Channel, "type" | "config">): string {
  const cfg = c.config as Record<string, unknown>;
  const v = c.type === "email" ? cfg.to : c.type === "webhook" ? cfg.url : cfg.webhook_url;
  return Array.isArray(v) ? v.join(", ") : typeof v === "string" ? v : "";
}
