/**
 * When a delivery attempt happened. An attempt carries when it was sent
 * (`sent_at` in the attempts list, `attempted_at` in an event's detail; null
 * while it is still queued) and when it is due (`scheduled_at`).
 */
export interface AttemptTimes {
  sent: string | null;
  scheduled: string | null;
}

export function attemptTimes(a: Record<string, unknown>): AttemptTimes {
  const text = (v: unknown) => (typeof v === "string" && v !== "" ? v : null);
  const sent = text("sent_at" in a ? a.sent_at : a.attempted_at);
  return { sent, scheduled: sent ? null : text(a.scheduled_at) };
}

/** The cell for an attempt's time: its sent time, or `scheduled <time>` while queued (a terminal table shows both relative: `scheduled in 4m`). */
export function attemptWhenCell(a: Record<string, unknown>): string | null {
  const t = attemptTimes(a);
  if (t.sent) return t.sent;
  return t.scheduled ? `scheduled ${t.scheduled}` : a.status === "queued" ? "queued" : null;
}

/** The columns of an attempts list (endpoint and message attempts). */
export const ATTEMPT_COLUMNS = [
  "id",
  { key: "sent_at", header: "sent", get: (a: Record<string, unknown>) => attemptWhenCell(a) },
  "event_id",
  "status",
  "response_status",
  "duration_ms",
  "attempt_number",
  "trigger_type",
  "error",
];
