/** The alert rule types in words: what each watches, the settings it takes with their defaults, and a rule as one sentence. */
import { plural } from "../../format";
import type { RuleType } from "../../types";

export interface ConfigField {
  key: string;
  label: string;
  unit?: string;
  /** The server's default, used when the field is left empty; none: the field is required. */
  fallback?: number;
  help: string;
  integer?: boolean;
  /** Said when a required field is left empty. */
  missing?: string;
}

const windowField = (fallback: number): ConfigField => ({
  key: "window_minutes",
  label: "Window",
  unit: "minutes",
  fallback,
  integer: true,
  help: "How far back each check looks. A longer window reacts more slowly but is fooled less by a short blip.",
});

interface RuleKind {
  label: string;
  /** One line on the type's card. */
  pitch: string;
  fields: ConfigField[];
  /** What a source or destination scope narrows the rule to. */
  scope: string;
  note?: string;
}

export const KINDS: Record<RuleType, RuleKind> = {
  failure_rate: {
    label: "Failure rate",
    pitch: "Too many deliveries fail.",
    fields: [
      { key: "threshold_percent", label: "Failure threshold", unit: "%", missing: "Say from what share of failed deliveries the rule fires, e.g. 20", help: "Fire when at least this share of the deliveries that finished in the window failed. 20 means one delivery in five." },
      windowField(5),
      {
        key: "min_attempts",
        label: "Minimum deliveries",
        fallback: 10,
        integer: true,
        help: "Judge only once at least this many deliveries finished in the window, so one failure out of two on a quiet night is not an alert.",
      },
    ],
    scope: "A source: only deliveries of its events. A destination: only deliveries to it. Neither: every delivery.",
  },
  latency: {
    label: "Latency",
    pitch: "Deliveries get slow.",
    fields: [
      { key: "threshold_ms", label: "Slowness threshold", unit: "ms", integer: true, missing: "Say from how many milliseconds a delivery counts as slow, e.g. 2000", help: "Fire when deliveries take at least this long to be answered. Timeouts count with the time they waited." },
      {
        key: "percentile",
        label: "Percentile",
        fallback: 95,
        help: "Which delivery time is compared: 95 is the time 95% of deliveries stayed under, so a few slow ones do not fire the rule; 50 is the typical (median) time, 100 the slowest.",
      },
      windowField(5),
    ],
    scope: "A source: only deliveries of its events. A destination: only deliveries to it. Neither: every delivery.",
  },
  dlq: {
    label: "Dead-letter queue",
    pitch: "Deliveries run out of retries.",
    fields: [
      {
        key: "threshold",
        label: "Deliveries in the DLQ",
        fallback: 1,
        integer: true,
        help: "Fire when at least this many deliveries landed in the dead-letter queue within the window (and are still there). Checked the moment one lands, too.",
      },
      windowField(60),
    ],
    scope: "A source: only deliveries of its events. A destination: only deliveries to it. Neither: every delivery.",
  },
  volume_drop: {
    label: "Volume drop",
    pitch: "Events stop arriving.",
    fields: [
      { key: "min_events", label: "Expected events", integer: true, missing: "Say how many events at least should arrive in the window", help: "Fire when fewer events than this arrived in the window. A new rule waits one whole window before it can fire." },
      windowField(60),
    ],
    scope: "A source: count the events it receives. A destination: count the events routed to it. Neither: every event of this environment.",
  },
  issue_opened: {
    label: "Issue opened",
    pitch: "A delivery issue opens.",
    fields: [],
    scope: "A destination: only its issues. A source: only issues whose failing event came from it. Neither: every issue.",
    note: "Nothing to set: the rule fires the moment an issue opens, or a resolved one reopens, unless the issue is snoozed. Each issue is its own trigger, so the cooldown applies between issues: set it to 0 to hear of every one.",
  },
};

export const ruleTypeLabel = (t: string) => KINDS[t as RuleType]?.label ?? t;

export interface Names {
  source?: string | null;
  destination?: string | null;
}

const n = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : undefined);

/** The rule in one sentence ("Fires when at least 20% of deliveries to Orders API fail within 5 minutes…"), from its config. */
export function ruleSentence(type: string, config: Record<string, unknown>, names: Names): string {
  const to = names.destination ? ` to ${names.destination}` : "";
  const from = names.source ? ` of events from ${names.source}` : "";
  const kind = KINDS[type as RuleType];
  const get = (key: string) => n(config[key]) ?? kind?.fields.find((f) => f.key === key)?.fallback;
  const w = get("window_minutes");
  const within = w === undefined ? "" : ` within ${plural(w, "minute")}`;
  const fmt = (v: number | undefined, unit = "") => (v === undefined ? "…" : `${v.toLocaleString()}${unit}`);
  switch (type) {
    case "failure_rate":
      return `Fires when at least ${fmt(get("threshold_percent"), "%")} of the deliveries${from}${to} fail${within}, judged once at least ${fmt(get("min_attempts"))} finished.`;
    case "latency":
      return `Fires when the ${ordinal(get("percentile"))} percentile delivery time${from}${to} reaches ${fmt(get("threshold_ms"), " ms")}${within}.`;
    case "dlq": {
      const t = get("threshold");
      const what = t === undefined ? "… deliveries" : plural(t, "delivery", "deliveries");
      return `Fires when ${what}${from}${to} ${t === 1 ? "lands" : "land"} in the dead-letter queue${within}.`;
    }
    case "volume_drop": {
      const min = get("min_events");
      const what = names.source ? ` from ${names.source}` : names.destination ? ` for ${names.destination}` : "";
      if (min === 1) return `Fires when no event arrives${what}${within}.`;
      return `Fires when fewer than ${min === undefined ? "…" : plural(min, "event")} arrive${what}${within}.`;
    }
    case "issue_opened":
      return `Fires when a delivery issue opens${names.destination ? ` at ${names.destination}` : ""}${names.source ? ` for events from ${names.source}` : ""}.`;
    default:
      return type;
  }
}

function ordinal(v: number | undefined) {
  if (v === undefined) return "…";
  const s = v % 100 >= 11 && v % 100 <= 13 ? "th" : ({ 1: "st", 2: "nd", 3: "rd" } as Record<number, string>)[v % 10] ?? "th";
  return Number.isInteger(v) ? `${v}${s}` : `${v}th`;
}
