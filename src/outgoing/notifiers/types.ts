import type { z } from "zod";
import type { ChannelType } from "../../contracts/notificationChannels";

/** One alert, as every channel type tells it. */
export interface AlertNotification {
  /**
   * Names this notification: the same on every try of it, so a receiver can
   * drop a repeat (a rule's notification: its history entry's id). Sent as
   * the Standard Webhooks `webhook-id`.
   */
  id: string;
  /**
   * `alert.triggered` for a rule that fired, `alert.resolved` for a firing
   * rule whose condition cleared, `alert.test` for POST /notification-channels/{id}/test.
   */
  type: "alert.triggered" | "alert.resolved" | "alert.test";
  alertRuleId: string | null;
  ruleName: string;
  ruleType: string;
  /** Why it fired, in words. */
  reason: string;
  /** The measured numbers (and the ids they concern). */
  data: Record<string, unknown>;
  /** When the rule fired; for `alert.resolved`, when the firing it ends began. */
  triggeredAt: string;
  /** `alert.resolved` only: when the condition was seen cleared. */
  resolvedAt?: string;
  /** Where to look in the admin UI. */
  link: string;
}

export interface SendContext {
  /** For the whole send: connect, request and response (or the SMTP dialogue). */
  timeoutMs: number;
  /** HOOKRELAY_BLOCK_PRIVATE_DESTINATIONS: the SSRF guard of destinations applies to channels too. */
  blockPrivate: boolean;
  /** HOOKRELAY_SMTP_URL. */
  smtpUrl?: string;
  /** HOOKRELAY_BASE_URL: names the sender of emails that give no `from`. */
  baseUrl: string;
  /** The injected clock: the time a signature says a request was sent. */
  now(): Date;
}

/** A send that did not go through; the message is shown to users (history, test results), so it never holds a secret. */
export class NotifyError extends Error {}

/**
 * One channel type: its config (validated on save), how responses show it,
 * and how it sends. Types are data to the rest of the code, as verification
 * schemes are (src/rules/verify/).
 */
export interface ChannelKind<C> {
  type: ChannelType;
  config: z.ZodType<C>;
  /** Fields holding a secret (or a URL with one): masked in responses; sent back masked, the stored value is kept. */
  secretFields: readonly string[];
  /** The config as responses show it. */
  masked(config: C): Record<string, unknown>;
  send(config: C, notification: AlertNotification, ctx: SendContext): Promise<void>;
}
