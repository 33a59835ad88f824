import type { ChannelConfig, ChannelType } from "../../contracts/notificationChannels";
import { discord } from "./discord";
import { email } from "./email";
import { slack } from "./slack";
import type { AlertNotification, ChannelKind, SendContext } from "./types";
import { webhook } from "./webhook";

/**
 * The channel types, one file each. A leaf for the domain (it validates
 * configs with them, and `POST …/test` sends through them) and for the alert
 * task: it imports only contracts and the delivery sender with its SSRF
 * guard, never the domain.
 */
export { NotifyError, type AlertNotification, type SendContext } from "./types";

const kinds: Record<ChannelType, ChannelKind<any>> = { webhook, slack, discord, email };

export function channelKind(type: ChannelType): ChannelKind<unknown> {
  return kinds[type];
}

/** Sends one notification, once; throws NotifyError (or something unexpected) when it did not go through. */
export function sendNotification(channel: ChannelConfig, notification: AlertNotification, ctx: SendContext): Promise<void> {
  const { type, ...config } = channel;
  return kinds[type].send(config, notification, ctx);
}
