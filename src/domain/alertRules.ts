import { and, count, desc, eq } from "drizzle-orm";
import {
  DEFAULT_COOLDOWN_MINUTES,
  RECENT_HISTORY,
  ruleConfigSchemas,
  type AlertHistoryEntry,
  type AlertRule,
  type CreateAlertRuleInput,
  type HistoryStatus,
  type ListAlertRulesQuery,
  type RuleType,
  type UpdateAlertRuleInput,
} from "../contracts/alertRules";
import { fromZod, notFound } from "../contracts/errors";
import { hex32, normalizeId } from "../contracts/ids";
import type { PageQuery } from "../contracts/pagination";
import { alertHistory, alertRules, destinations, sources } from "../db/schema";
import { iso } from "../core/clock";
import { transaction } from "../db/transaction";
import { recordAudit } from "./audit";
import type { Deps, Scope } from "./deps";
import { checkedChannelIds } from "./notificationChannels";
import { paginate } from "./paging";
import { createScope, inScope } from "./scope";

type RuleRow = typeof alertRules.$inferSelect;
type HistoryRow = typeof alertHistory.$inferSelect;

export function serializeAlertRule(row: RuleRow): AlertRule {
  return {
    id: row.id,
    org_id: row.orgId,
    env_id: row.envId,
    name: row.name,
    description: row.description,
    enabled: row.enabled,
    rule_type: row.ruleType,
    rule_config: row.ruleConfig,
    source_id: row.sourceId,
    destination_id: row.destinationId,
    channel_ids: row.channelIds,
    cooldown_minutes: row.cooldownMinutes,
    last_triggered_at: row.lastTriggeredAt,
    trigger_count: row.triggerCount,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

export function serializeHistory(row: HistoryRow): AlertHistoryEntry {
  return {
    id: row.id,
    org_id: row.orgId,
    env_id: row.envId,
    alert_rule_id: row.alertRuleId,
    trigger_reason: row.triggerReason,
    trigger_data: row.triggerData,
    channels_notified: row.channelsNotified,
    created_at: row.createdAt,
    status: row.status as HistoryStatus,
  };
}

/** rule_config checked against rule_type, defaults filled in: 400 naming body.rule_config.<field>. */
function checkedRuleConfig(type: RuleType, config: Record<string, unknown> | undefined): string {
  const parsed = ruleConfigSchemas[type].safeParse(config ?? {});
  if (!parsed.success) {
    throw fromZod(parsed.error, `Invalid rule_config for rule_type ${type}`, ["body", "rule_config"]);
  }
  return JSON.stringify(parsed.data);
}

/** A scope id as stored, naming a row of the caller's scope: 404 as the spec says when it does not. */
async function scopedSourceId({ db }: Deps, scope: Scope, raw: string | null | undefined): Promise<string | null | undefined> {
  if (raw === undefined || raw === null) return raw;
  const id = normalizeId(raw, "source", "Source");
  const [row] = await db
    .select({ id: sources.id })
    .from(sources)
    .where(and(eq(sources.id, id), inScope(sources, scope)))
    .limit(1);
  if (!row) throw notFound("Source");
  return id;
}

async function scopedDestinationId({ db }: Deps, scope: Scope, raw: string | null | undefined): Promise<string | null | undefined> {
  if (raw === undefined || raw === null) return raw;
  const id = normalizeId(raw, "destination", "Destination");
  const [row] = await db
    .select({ id: destinations.id })
    .from(destinations)
    .where(and(eq(destinations.id, id), inScope(destinations, scope)))
    .limit(1);
  if (!row) throw notFound("Destination");
  return id;
}

export async function createAlertRule(deps: Deps, scope: Scope, input: CreateAlertRuleInput) {
  const { orgId, envId } = createScope(scope, input);
  const ruleConfig = checkedRuleConfig(input.rule_type, input.rule_config);
  const channelIds = await checkedChannelIds(deps, scope, input.channel_ids ?? []);
  const sourceId = await scopedSourceId(deps, scope, input.source_id);
  const destinationId = await scopedDestinationId(deps, scope, input.destination_id);
  const now = iso(deps.clock.now());
  const row: RuleRow = {
    id: hex32(),
    orgId,
    envId,
    name: input.name,
    description: input.description ?? null,
    enabled: input.enabled === false ? 0 : 1,
    ruleType: input.rule_type,
    ruleConfig,
    sourceId: sourceId ?? null,
    destinationId: destinationId ?? null,
    channelIds: JSON.stringify(channelIds),
    cooldownMinutes: input.cooldown_minutes ?? DEFAULT_COOLDOWN_MINUTES,
    lastTriggeredAt: null,
    triggerCount: 0,
    createdAt: now,
    updatedAt: now,
    firingSince: null,
    reportedUntil: null,
    reportedUntilId: null,
  };
  await transaction(deps.db, async () => {
    await deps.db.insert(alertRules).values(row);
    await recordAudit(deps, scope, { action: "create", resourceType: "alert_rule", resourceId: row.id, after: serializeAlertRule(row), envId: row.envId });
  });
  // A new rule is evaluated now rather than at the next interval.
  deps.bus.publish({ type: "alerts.evaluate" });
  return { alert_rule: serializeAlertRule(row) };
}

/** The caller's rules, newest first. */
export async function listAlertRules({ db }: Deps, scope: Scope, query: ListAlertRulesQuery = {}) {
  const rows = await db
    .select()
    .from(alertRules)
    .where(
      and(
        inScope(alertRules, scope),
        query.rule_type ? eq(alertRules.ruleType, query.rule_type) : undefined,
        query.enabled !== undefined ? eq(alertRules.enabled, query.enabled) : undefined,
      ),
    )
    .orderBy(desc(alertRules.createdAt), desc(alertRules.id));
  return { alert_rules: rows.map(serializeAlertRule) };
}

async function findRule({ db }: Deps, scope: Scope, rawId: string): Promise<RuleRow> {
  const id = normalizeId(rawId, undefined, "Alert rule");
  const [row] = await db
    .select()
    .from(alertRules)
    .where(and(eq(alertRules.id, id), inScope(alertRules, scope)))
    .limit(1);
  if (!row) throw notFound("Alert rule");
  return row;
}

/** The rule with its most recent history, newest first. */
export async function getAlertRule(deps: Deps, scope: Scope, rawId: string) {
  const row = await findRule(deps, scope, rawId);
  const history = await deps.db
    .select()
    .from(alertHistory)
    .where(eq(alertHistory.alertRuleId, row.id))
    .orderBy(desc(alertHistory.createdAt), desc(alertHistory.id))
    .limit(RECENT_HISTORY);
  return { alert_rule: serializeAlertRule(row), history: history.map(serializeHistory) };
}

/** All of a rule's history, newest first, with offset or cursor pages. */
export async function listAlertHistory(deps: Deps, scope: Scope, rawId: string, page: PageQuery) {
  const rule = await findRule(deps, scope, rawId);
  const { rows, pagination } = await paginate({
    page,
    cols: { time: alertHistory.createdAt, id: alertHistory.id },
    filters: eq(alertHistory.alertRuleId, rule.id),
    select: (where, order, limit, offset) => deps.db.select().from(alertHistory).where(where).orderBy(...order).limit(limit).offset(offset),
    total: async (where) => (await deps.db.select({ n: count() }).from(alertHistory).where(where))[0]?.n ?? 0,
    key: (r) => ({ t: r.createdAt, id: r.id }),
  });
  return { history: rows.map(serializeHistory), pagination };
}

/** Partial update. A new rule_type needs a rule_config of its shape (the stored one is checked against it when none is given). */
export async function updateAlertRule(deps: Deps, scope: Scope, rawId: string, input: UpdateAlertRuleInput) {
  return transaction(deps.db, () => updateAlertRuleIn(deps, scope, rawId, input));
}

async function updateAlertRuleIn(deps: Deps, scope: Scope, rawId: string, input: UpdateAlertRuleInput) {
  const row = await findRule(deps, scope, rawId);
  const next: RuleRow = { ...row };
  if (input.name !== undefined) next.name = input.name;
  if (input.description !== undefined) next.description = input.description;
  if (input.enabled !== undefined) next.enabled = input.enabled ? 1 : 0;
  if (input.rule_type !== undefined) next.ruleType = input.rule_type;
  if (input.rule_config !== undefined || input.rule_type !== undefined) {
    next.ruleConfig = checkedRuleConfig(next.ruleType as RuleType, input.rule_config ?? (JSON.parse(row.ruleConfig) as Record<string, unknown>));
  }
  if (input.channel_ids !== undefined) next.channelIds = JSON.stringify(await checkedChannelIds(deps, scope, input.channel_ids));
  if (input.source_id !== undefined) next.sourceId = (await scopedSourceId(deps, scope, input.source_id)) ?? null;
  if (input.destination_id !== undefined) next.destinationId = (await scopedDestinationId(deps, scope, input.destination_id)) ?? null;
  if (input.cooldown_minutes !== undefined) next.cooldownMinutes = input.cooldown_minutes;
  next.updatedAt = iso(deps.clock.now());
  // The alert task's state is its own: written back here only to reset it (a stale copy would undo its work).
  const { id, orgId, envId, createdAt, lastTriggeredAt, triggerCount, firingSince, reportedUntil, reportedUntilId, ...changes } = next;
  const reset: Partial<RuleRow> = {};
  // Switched off, a rule stops firing without a resolved notification (it is no longer watched).
  if (next.enabled === 0) reset.firingSince = null;
  // Another type counts other things: nothing of them has been reported.
  if (next.ruleType !== row.ruleType) Object.assign(reset, { firingSince: null, reportedUntil: null, reportedUntilId: null });
  await deps.db
    .update(alertRules)
    .set({ ...changes, ...reset })
    .where(eq(alertRules.id, id));
  deps.bus.publish({ type: "alerts.evaluate" });
  await recordAudit(deps, scope, { action: "update", resourceType: "alert_rule", resourceId: id, before: serializeAlertRule(row), after: serializeAlertRule(next) });
  return { alert_rule: serializeAlertRule(next) };
}

/** Deletes the rule and its history. */
export async function deleteAlertRule(deps: Deps, scope: Scope, rawId: string) {
  await transaction(deps.db, async () => {
    const row = await findRule(deps, scope, rawId);
    await deps.db.delete(alertRules).where(eq(alertRules.id, row.id));
    await recordAudit(deps, scope, { action: "delete", resourceType: "alert_rule", resourceId: row.id, before: serializeAlertRule(row) });
  });
  return { success: true as const };
}
