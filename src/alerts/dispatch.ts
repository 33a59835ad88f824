import type { ChannelNotified } from "../contracts/alertRules";
import { hex32 } from "../contracts/ids";
import { recordAlertHistory, type ActiveRule } from "../domain/activeAlertRules";
import { iso } from "../core/clock";
import type { Deps } from "../domain/deps";
import { failureMessage, loadChannelsForSend, sendContext, type SendableChannel } from "../domain/notificationChannels";
import type { Logger } from "../observability/logger";
import type { Metrics } from "../observability/metrics";
import type { Trigger } from "./evaluate";
import { sendNotification, type AlertNotification } from "../outgoing/notifiers";

export interface DispatchOptions {
  logger: Logger;
  metrics?: Metrics;
  /** Pauses before the retries of a failed send: one try, then one more after each pause. */
  retryDelaysMs: readonly number[];
  /** Aborted on shutdown: no further retries are waited for. */
  signal: AbortSignal;
}

/** Two retries, the second after a longer pause: enough to ride out a blip, short enough to be done before the next evaluation. */
export const RETRY_DELAYS_MS = [500, 2000] as const;

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done);
  });
}

/** One channel: a few tries, each with its timeout; the outcome as history records it. */
async function notifyChannel(deps: Deps, channelId: string, channel: SendableChannel | undefined, n: AlertNotification, opts: DispatchOptions): Promise<ChannelNotified> {
  const base = { channel_id: channelId, channel_name: channel?.name ?? null, channel_type: channel?.type ?? null };
  if (!channel) return { ...base, success: false, error: "the channel no longer exists", attempts: 0 };
  if (!channel.config) return { ...base, success: false, error: "the channel's config cannot be read (was the secret key changed?)", attempts: 0 };
  let error = "";
  let attempts = 0;
  for (const delay of [0, ...opts.retryDelaysMs]) {
    if (delay > 0) {
      if (opts.signal.aborted) break;
      await pause(delay, opts.signal);
    }
    attempts++;
    try {
      await sendNotification(channel.config, n, sendContext(deps.settings, deps.clock));
      opts.metrics?.notificationsSent.inc({ channel_type: channel.type });
      return { ...base, success: true, error: null, attempts };
    } catch (err) {
      error = failureMessage(err);
    }
  }
  opts.metrics?.notificationsFailed.inc({ channel_type: channel.type });
  opts.logger.warn("alert notification failed", { channel_id: channelId, channel_type: channel.type, attempts, error });
  return { ...base, success: false, error, attempts };
}

/** What is sent: a trigger, or a resolution (with when the firing it ends began). */
export type Notice = Omit<Trigger, "mark"> & ({ status: "triggered" } | { status: "resolved"; firingSince: string });

/**
 * Notifies every channel of a rule that fired (or whose firing ended), side by side (one failing
 * channel neither stops nor delays the others), then writes the history
 * entry with each channel's outcome.
 */
export async function dispatchAlert(deps: Deps, rule: ActiveRule, notice: Notice, at: Date, opts: DispatchOptions) {
  const channels = new Map((await loadChannelsForSend(deps, rule.channelIds)).map((c) => [c.id, c]));
  // The history entry's id names the notification: receivers can match the two, and drop a repeated try.
  const entryId = hex32();
  const notification: AlertNotification = {
    id: entryId,
    type: notice.status === "resolved" ? "alert.resolved" : "alert.triggered",
    alertRuleId: rule.id,
    ruleName: rule.name,
    ruleType: rule.ruleType,
    reason: notice.reason,
    data: notice.data,
    // A resolution tells when the firing it ends began, and when it ended.
    triggeredAt: notice.status === "resolved" ? notice.firingSince : iso(at),
    ...(notice.status === "resolved" ? { resolvedAt: iso(at) } : {}),
    link: `${deps.settings.baseUrl}${notice.path}`,
  };
  const outcomes = await Promise.all(rule.channelIds.map((id) => notifyChannel(deps, id, channels.get(id), notification, opts)));
  return recordAlertHistory(deps, rule, { id: entryId, status: notice.status, reason: notice.reason, data: notice.data, channels: outcomes, at });
}
