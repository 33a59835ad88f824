import { z } from "zod";
import { fromJsonText } from "./common";
import { pageQuery, paginationBody as pagination } from "./pagination";

/** Alert rules and their history (spec: Alert rule, Alert history entry; docs/decisions.md D9). */

export const RULE_TYPES = ["failure_rate", "latency", "dlq", "volume_drop", "issue_opened"] as const;
export type RuleType = (typeof RULE_TYPES)[number];

/** Rules evaluated on a timer; issue_opened fires only as an issue opens, and dlq also as a delivery lands in the DLQ. */
export const PERIODIC_RULE_TYPES = ["failure_rate", "latency", "dlq", "volume_drop"] as const satisfies readonly RuleType[];

export const DEFAULT_COOLDOWN_MINUTES = 15;
const MAX_WINDOW_MINUTES = 7 * 24 * 60;

const windowMinutes = (fallback: number) => z.int().min(1).max(MAX_WINDOW_MINUTES).default(fallback);

/**
 * rule_config per rule_type, with defaults for everything but the threshold.
 * Unknown fields are dropped (docs/decisions.md D3).
 */
export const ruleConfigSchemas = {
  /** Fires when at least threshold_percent of the attempts finished in the window failed, over at least min_attempts attempts. */
  failure_rate: z.object({
    threshold_percent: z.number().gt(0).max(100),
    window_minutes: windowMinutes(5),
    min_attempts: z.int().min(1).max(1_000_000).default(10),
  }),
  /** Fires when the given percentile of attempt durations in the window is at least threshold_ms. */
  latency: z.object({
    threshold_ms: z.int().min(1).max(3_600_000),
    percentile: z.number().gt(0).max(100).default(95),
    window_minutes: windowMinutes(5),
  }),
  /** Fires when at least threshold deliveries landed in the DLQ within the window (and are still there). */
  dlq: z.object({
    threshold: z.int().min(1).max(1_000_000).default(1),
    window_minutes: windowMinutes(60),
  }),
  /** Fires when fewer than min_events events arrived in the window, once the rule is older than the window. */
  volume_drop: z.object({
    min_events: z.int().min(1).max(1_000_000_000),
    window_minutes: windowMinutes(60),
  }),
  /** Fires when an issue opens (or a resolved one reopens), unless it is snoozed. */
  issue_opened: z.object({}),
} as const;

export type RuleConfigs = { [K in RuleType]: z.infer<(typeof ruleConfigSchemas)[K]> };

/** rule_config arrives as an object (or its JSON text, as responses carry it); checked against rule_type in the domain. */
const ruleConfigInput = z.preprocess(fromJsonText, z.record(z.string(), z.unknown()));
const channelIdsInput = z.preprocess(fromJsonText, z.array(z.string().min(1).max(100)).max(20));
const nullableId = z.string().min(1).max(100).nullable();

export const createAlertRuleInput = z.object({
  name: z.string().trim().min(1).max(200),
  rule_type: z.enum(RULE_TYPES),
  description: z.string().max(2000).nullable().optional(),
  enabled: z.boolean().optional(),
  rule_config: ruleConfigInput.optional(),
  source_id: nullableId.optional(),
  destination_id: nullableId.optional(),
  channel_ids: channelIdsInput.optional(),
  cooldown_minutes: z.int().min(0).max(MAX_WINDOW_MINUTES).optional(),
  org_id: z.string().max(64).optional(),
  env_id: z.string().max(64).optional(),
});
export type CreateAlertRuleInput = z.infer<typeof createAlertRuleInput>;

export const updateAlertRuleInput = z.object({
  name: z.string().trim().min(1).max(200).optional(),
  rule_type: z.enum(RULE_TYPES).optional(),
  description: z.string().max(2000).nullable().optional(),
  enabled: z.boolean().optional(),
  rule_config: ruleConfigInput.optional(),
  source_id: nullableId.optional(),
  destination_id: nullableId.optional(),
  channel_ids: channelIdsInput.optional(),
  cooldown_minutes: z.int().min(0).max(MAX_WINDOW_MINUTES).optional(),
});
export type UpdateAlertRuleInput = z.infer<typeof updateAlertRuleInput>;

const flagQuery = z.enum(["0", "1", "true", "false"]).transform((v) => (v === "1" || v === "true" ? 1 : 0));
export const listAlertRulesQuery = z.object({
  rule_type: z.enum(RULE_TYPES).optional(),
  enabled: flagQuery.optional(),
});
export type ListAlertRulesQuery = z.infer<typeof listAlertRulesQuery>;

export const alertRule = z.object({
  id: z.string(),
  org_id: z.string(),
  env_id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  enabled: z.number().int(),
  rule_type: z.string(),
  rule_config: z.string().describe("JSON object, encoded as a string, defaults filled in"),
  source_id: z.string().nullable(),
  destination_id: z.string().nullable(),
  channel_ids: z.string().describe("JSON array of channel ids, encoded as a string"),
  cooldown_minutes: z.number().int(),
  last_triggered_at: z.string().nullable(),
  trigger_count: z.number().int(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type AlertRule = z.infer<typeof alertRule>;

/** One channel's outcome in a history entry's channels_notified. */
export interface ChannelNotified {
  channel_id: string;
  channel_name: string | null;
  channel_type: string | null;
  success: boolean;
  error: string | null;
  /** Sends tried (a failed send is retried a few times). */
  attempts: number;
}

/** What a history entry records: a trigger, or the end of a firing (its condition no longer holds). */
export const HISTORY_STATUSES = ["triggered", "resolved"] as const;
export type HistoryStatus = (typeof HISTORY_STATUSES)[number];

export const alertHistoryEntry = z.object({
  id: z.string(),
  org_id: z.string(),
  env_id: z.string(),
  alert_rule_id: z.string(),
  trigger_reason: z.string().describe("Why the rule fired, in words"),
  trigger_data: z.string().describe("JSON object of the measured numbers, encoded as a string"),
  channels_notified: z.string().describe("JSON array of {channel_id, channel_name, channel_type, success, error, attempts}, encoded as a string"),
  created_at: z.string(),
  status: z.enum(HISTORY_STATUSES).describe("triggered: the rule fired; resolved: its condition cleared after it fired"),
});
export type AlertHistoryEntry = z.infer<typeof alertHistoryEntry>;

export const RECENT_HISTORY = 20;

export const alertRuleBody = z.object({ alert_rule: alertRule });
export const alertRuleDetail = z.object({ alert_rule: alertRule, history: z.array(alertHistoryEntry).describe(`The ${RECENT_HISTORY} most recent entries, newest first`) });
export const alertRuleList = z.object({ alert_rules: z.array(alertRule) });

export const alertHistoryQuery = pageQuery;
export const alertHistoryList = z.object({ history: z.array(alertHistoryEntry), pagination });
