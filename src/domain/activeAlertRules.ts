import { and, asc, eq, inArray, isNull, lt, sql, type Column, type SQL } from "drizzle-orm";
import { ruleConfigSchemas, type AlertHistoryEntry, type ChannelNotified, type HistoryStatus, type RuleConfigs, type RuleType } from "../contracts/alertRules";
import { hex32 } from "../contracts/ids";
import { alertHistory, alertRules } from "../db/schema";
import { iso } from "../core/clock";
import type { Mark } from "./alertMeasurements";
import { serializeHistory } from "./alertRules";
import type { Deps } from "./deps";
import { parseIds } from "./notificationChannels";
import { inScope } from "./scope";

/**
 * Alert rules as the alert task (src/alerts/background.ts) runs them: the
 * enabled ones, taking a trigger or a resolution so that one node acts, and
 * the history it records. Their CRUD is alertRules.ts.
 */

type RuleRow = typeof alertRules.$inferSelect;
type HistoryRow = typeof alertHistory.$inferSelect;

/** An enabled rule as the alert task evaluates it. */
export interface ActiveRule<T extends RuleType = RuleType> {
  id: string;
  orgId: string;
  envId: string;
  name: string;
  ruleType: T;
  config: RuleConfigs[T];
  sourceId: string | null;
  destinationId: string | null;
  channelIds: string[];
  cooldownMinutes: number;
  lastTriggeredAt: string | null;
  createdAt: string;
  /** When its condition began to hold, while it is firing; null when it is not. */
  firingSince: string | null;
  /** What it has reported up to (docs/alerts.md, "Firing, resolved and what is counted"). */
  reportedUntil: Mark | null;
}

function activeRule(row: RuleRow): ActiveRule | null {
  const type = row.ruleType as RuleType;
  const schema = ruleConfigSchemas[type];
  if (!schema) return null;
  let config: unknown;
  try {
    config = schema.parse(JSON.parse(row.ruleConfig));
  } catch {
    return null;
  }
  return {
    id: row.id,
    orgId: row.orgId,
    envId: row.envId,
    name: row.name,
    ruleType: type,
    config: config as RuleConfigs[RuleType],
    sourceId: row.sourceId,
    destinationId: row.destinationId,
    channelIds: parseIds(row.channelIds),
    cooldownMinutes: row.cooldownMinutes,
    lastTriggeredAt: row.lastTriggeredAt,
    createdAt: row.createdAt,
    firingSince: row.firingSince,
    reportedUntil: row.reportedUntil === null ? null : { at: row.reportedUntil, id: row.reportedUntilId },
  };
}

/** Enabled rules of these types, of every environment or of one. A disabled rule is never evaluated. */
export async function enabledRules({ db }: Deps, types: readonly RuleType[], scope?: { orgId: string; envId: string }): Promise<ActiveRule[]> {
  const conds: (SQL | undefined)[] = [eq(alertRules.enabled, 1), inArray(alertRules.ruleType, [...types])];
  if (scope) conds.push(inScope(alertRules, scope));
  const rows = await db
    .select()
    .from(alertRules)
    .where(and(...conds))
    .orderBy(asc(alertRules.createdAt), asc(alertRules.id));
  return rows.map(activeRule).filter((r): r is ActiveRule => r !== null);
}

/** Whether the rule is still cooling down from its last trigger at `now`. */
export function coolingDown(rule: Pick<ActiveRule, "lastTriggeredAt" | "cooldownMinutes">, now: Date): boolean {
  return rule.lastTriggeredAt !== null && now.getTime() - Date.parse(rule.lastTriggeredAt) < rule.cooldownMinutes * 60_000;
}

const sameOrNull = (col: Column, v: string | null) => (v === null ? isNull(col) : eq(col, v));

/** The rule's state is still as it was read: nobody triggered or resolved it since. */
const unchangedSinceRead = (rule: ActiveRule) =>
  and(
    eq(alertRules.id, rule.id),
    eq(alertRules.enabled, 1),
    sameOrNull(alertRules.lastTriggeredAt, rule.lastTriggeredAt),
    sameOrNull(alertRules.firingSince, rule.firingSince),
    sameOrNull(alertRules.reportedUntil, rule.reportedUntil?.at ?? null),
    sameOrNull(alertRules.reportedUntilId, rule.reportedUntil?.id ?? null),
  );

/**
 * Takes a trigger: counts it and sets last_triggered_at, only if the rule is
 * still enabled, out of its cooldown, and nobody else took a trigger since
 * it was read (two evaluations at once fire it once). For a periodic rule
 * (`mark` given) it also starts or continues its firing and moves its
 * high-water mark past what this trigger reports, in the same statement, so
 * no node reports those items again. Updates `rule`.
 */
export async function claimTrigger({ db }: Deps, rule: ActiveRule, now: Date, mark?: Mark): Promise<boolean> {
  if (coolingDown(rule, now)) return false;
  const at = iso(now);
  const state = mark ? { firingSince: rule.firingSince ?? at, reportedUntil: mark.at, reportedUntilId: mark.id } : {};
  const taken = await db
    .update(alertRules)
    .set({ lastTriggeredAt: at, triggerCount: sql`${alertRules.triggerCount} + 1`, ...state })
    .where(unchangedSinceRead(rule))
    .returning({ id: alertRules.id });
  if (taken.length === 0) return false;
  rule.lastTriggeredAt = at;
  if (mark) {
    rule.firingSince = state.firingSince!;
    rule.reportedUntil = mark;
  }
  return true;
}

/**
 * Ends a rule's firing when its condition no longer holds: only if it is
 * still firing as it was read (one node sends the resolved notification).
 * Returns when it had been firing since, or null when someone else got there.
 */
export async function claimResolution({ db }: Deps, rule: ActiveRule): Promise<string | null> {
  const since = rule.firingSince;
  if (since === null) return null;
  const taken = await db.update(alertRules).set({ firingSince: null }).where(unchangedSinceRead(rule)).returning({ id: alertRules.id });
  if (taken.length === 0) return null;
  rule.firingSince = null;
  return since;
}

export async function recordAlertHistory(
  { db }: Deps,
  rule: Pick<ActiveRule, "id" | "orgId" | "envId">,
  entry: { id?: string; status?: HistoryStatus; reason: string; data: Record<string, unknown>; channels: ChannelNotified[]; at: Date },
): Promise<AlertHistoryEntry> {
  const row: HistoryRow = {
    id: entry.id ?? hex32(),
    orgId: rule.orgId,
    envId: rule.envId,
    alertRuleId: rule.id,
    triggerReason: entry.reason,
    triggerData: JSON.stringify(entry.data),
    channelsNotified: JSON.stringify(entry.channels),
    createdAt: iso(entry.at),
    status: entry.status ?? "triggered",
  };
  await db.insert(alertHistory).values(row);
  return serializeHistory(row);
}

/** History older than the retention period goes, as events do. */
export async function pruneAlertHistory({ db, clock, settings }: Deps): Promise<number> {
  const cutoff = iso(new Date(clock.now().getTime() - settings.retentionDays * 86_400_000));
  const gone = await db.delete(alertHistory).where(lt(alertHistory.createdAt, cutoff)).returning({ id: alertHistory.id });
  return gone.length;
}
