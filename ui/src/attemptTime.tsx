/**
 * When a delivery attempt happened. An attempt is queued first and sent when
 * due; with backoff a retry can wait hours, so its time is when it was sent,
 * and one not sent yet says when it is scheduled instead.
 */
import { Time } from "./components/time";
import { fullTime, timeAgo } from "./format";
import type { DeliveryAttempt, EventAttemptSummary } from "./types";

export interface AttemptTimes {
  status: string;
  /** When the request went out; null while queued (or while it is being sent). */
  sent: string | null;
  /** When it is due; null when the server does not say. */
  scheduled: string | null;
}

/** From a row of GET /v1/delivery-attempts. */
export function listedAttemptTimes(a: DeliveryAttempt): AttemptTimes {
  return { status: a.status, sent: a.sent_at, scheduled: a.scheduled_at };
}

/** From an event detail's delivery_attempts[]: `attempted_at` is the sent time there. */
export function summaryAttemptTimes(a: EventAttemptSummary): AttemptTimes {
  return { status: a.status, sent: a.attempted_at, scheduled: a.scheduled_at };
}

/** "8:21 PM (in 59 min)": the clock time, with the date when it is not today, and how far off it is. */
export function scheduledText(iso: string, now = Date.now()): string {
  const t = new Date(iso);
  const today = t.toDateString() === new Date(now).toDateString();
  const clock = today ? t.toLocaleTimeString([], { hour: "numeric", minute: "2-digit" }) : t.toLocaleString([], { dateStyle: "medium", timeStyle: "short" });
  return `${clock} (${t.getTime() <= now ? "due now" : timeAgo(iso, now)})`;
}

const waiting = (t: AttemptTimes) => t.status === "queued" || t.status === "delivering";

/** The "When" of an attempt in a table: when it was sent, or "scheduled for …" while it waits. */
export function AttemptWhen({ times }: { times: AttemptTimes }) {
  if (times.sent) return <Time iso={times.sent} />;
  if (times.status === "delivering") return <span className="nowrap">sending now</span>;
  // Finished without a request: it failed before sending (destination gone, transform error…).
  if (!waiting(times)) return <span className="muted">never sent</span>;
  if (times.scheduled)
    return (
      <time dateTime={times.scheduled} title={fullTime(times.scheduled)} className="nowrap muted">
        scheduled for {scheduledText(times.scheduled)}
      </time>
    );
  return <span className="muted">not sent yet</span>;
}

/** One sentence for an attempt that has not been sent: instead of empty request and response sections. */
export function notSentText(times: AttemptTimes): string {
  if (times.status === "delivering") return "Being sent now.";
  if (!waiting(times)) return "Never sent: it failed before the request went out.";
  return times.scheduled ? `Not sent yet: scheduled for ${fullTime(times.scheduled)} (${Date.parse(times.scheduled) <= Date.now() ? "due now" : timeAgo(times.scheduled)}).` : "Not sent yet.";
}
