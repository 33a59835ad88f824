import { z } from "zod";
import { destinationUrl } from "./destinations";

/**
 * Notification channels (spec: Notification channel; docs/decisions.md D9). Unlike
 * other resources, config is an object in responses (the spec says so), and
 * the item is not wrapped in a `{channel}` key.
 */

export const CHANNEL_TYPES = ["webhook", "slack", "discord", "email"] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];

/** What a secret field (or the secret part of a URL) reads as in responses; sent back unchanged, it keeps the stored value. */
export const MASK = "********";

/** `ops@example.com` or `Ops <ops@example.com>`. */
const ADDRESS = /^(?:[^<>]*<\s*([^<>\s]+@[^<>\s]+)\s*>|([^<>\s,]+@[^<>\s,]+))$/;
const emailAddress = z
  .string()
  .trim()
  .min(3)
  .max(320)
  .refine((s) => {
    const m = ADDRESS.exec(s);
    const addr = m?.[1] ?? m?.[2];
    return !!addr && z.email().safeParse(addr).success;
  }, "must be an email address (name@example.com or Name <name@example.com>)");

/** One address, a comma list in one string, or an array of addresses. */
const recipients = z.union([
  z
    .string()
    .max(4000)
    .superRefine((s, ctx) => {
      const parts = s.split(",").map((p) => p.trim());
      if (parts.length > 50) ctx.addIssue({ code: "custom", message: "at most 50 recipients" });
      for (const p of parts) if (!emailAddress.safeParse(p).success) ctx.addIssue({ code: "custom", message: `"${p.slice(0, 100)}" is not an email address` });
    }),
  z.array(emailAddress).min(1).max(50),
]);

export const smtpUrl = z
  .string()
  .trim()
  .max(2048)
  .superRefine((s, ctx) => {
    let u: URL;
    try {
      u = new URL(s);
    } catch {
      return void ctx.addIssue({ code: "custom", message: "must be an smtp:// or smtps:// URL, e.g. smtp://user:pass@mail.example.com:587" });
    }
    if (u.protocol !== "smtp:" && u.protocol !== "smtps:") ctx.addIssue({ code: "custom", message: "must use smtp:// (plain or STARTTLS) or smtps:// (implicit TLS)" });
    else if (!u.hostname) ctx.addIssue({ code: "custom", message: "must name a host" });
    // The mail library would read connection options from the query, a proxy among them, and go wherever it says.
    else if (s.includes("?") || s.includes("#")) ctx.addIssue({ code: "custom", message: "must not carry a query string or fragment: set require_tls and tls_verify in the channel's config instead" });
  });

export const webhookChannelConfig = z.object({
  url: destinationUrl,
  /** Signs each notification: X-Hookrelay-Signature: sha256=<hex HMAC-SHA256 of the body>. */
  secret: z.string().min(1).max(1000).optional(),
});
export const slackChannelConfig = z.object({ webhook_url: destinationUrl });
export const discordChannelConfig = z.object({ webhook_url: destinationUrl });
export const emailChannelConfig = z.object({
  to: recipients,
  from: emailAddress.optional(),
  /** Overrides HOOKRELAY_SMTP_URL for this channel. */
  smtp_url: smtpUrl.optional(),
  /** smtp:// only: refuse to send unless the server upgrades the connection with STARTTLS. */
  require_tls: z.boolean().optional(),
  /** false accepts any certificate (a self-signed one on your own mail server); default true. */
  tls_verify: z.boolean().optional(),
});

export type WebhookChannelConfig = z.infer<typeof webhookChannelConfig>;
export type SlackChannelConfig = z.infer<typeof slackChannelConfig>;
export type DiscordChannelConfig = z.infer<typeof discordChannelConfig>;
export type EmailChannelConfig = z.infer<typeof emailChannelConfig>;

export const channelConfigSchemas = {
  webhook: webhookChannelConfig,
  slack: slackChannelConfig,
  discord: discordChannelConfig,
  email: emailChannelConfig,
} as const;

export type ChannelConfig =
  | ({ type: "webhook" } & WebhookChannelConfig)
  | ({ type: "slack" } & SlackChannelConfig)
  | ({ type: "discord" } & DiscordChannelConfig)
  | ({ type: "email" } & EmailChannelConfig);

/** Checked against the type in the domain (a PATCH merges onto the stored config first). */
const configObject = z.record(z.string(), z.unknown());

export const createChannelInput = z.object({
  name: z.string().trim().min(1).max(200),
  channel_type: z.enum(CHANNEL_TYPES),
  config: configObject,
  org_id: z.string().max(64).optional(),
  env_id: z.string().max(64).optional(),
});
export type CreateChannelInput = z.infer<typeof createChannelInput>;

export const updateChannelInput = z.object({
  name: z.string().trim().min(1).max(200).optional(),
  /** Merged onto the stored config: fields left out keep their value, null removes an optional one, the mask keeps a secret. */
  config: configObject.optional(),
});
export type UpdateChannelInput = z.infer<typeof updateChannelInput>;

const channelConfigOut = z.record(z.string(), z.unknown()).describe("The type's config with secrets masked as ********");

export const channelListItem = z.object({ id: z.string(), name: z.string(), type: z.string(), config: channelConfigOut, created_at: z.string() });
export type ChannelListItem = z.infer<typeof channelListItem>;
export const channelDetail = channelListItem.extend({ updated_at: z.string() });
export type ChannelDetail = z.infer<typeof channelDetail>;

export const channelList = z.object({ channels: z.array(channelListItem) });
export const channelUpdated = z.object({ id: z.string(), name: z.string(), type: z.string(), updated_at: z.string() });
export const channelDeleted = z.object({ deleted: z.literal(true) });
export const channelTestResult = z.object({ success: z.boolean(), error: z.string().nullable() });
