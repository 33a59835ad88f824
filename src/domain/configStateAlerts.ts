import { asc } from "drizzle-orm";
import { alertRules, notificationChannels } from "../db/schema";
import { opened, parsedJson, type Names, type StateEntry } from "./configStateParts";
import type { Deps, Scope } from "./deps";
import { parseIds } from "./notificationChannels";
import { inScope } from "./scope";

/** Notification channels and alert rules as relay-file entries (src/domain/configState.ts). */
export async function readAlertState(deps: Deps, scope: Scope, names: Names) {
  const { db } = deps;
  const channelRows = await db.select().from(notificationChannels).where(inScope(notificationChannels, scope)).orderBy(asc(notificationChannels.name), asc(notificationChannels.id));
  const channelName = new Map(channelRows.map((r) => [r.id, r.name]));
  const channels: StateEntry[] = channelRows.map((r) => ({
    id: r.id,
    key: r.name,
    entry: { name: r.name, channel_type: r.type, config: parsedJson(opened(deps, r.config, `config of notification channel ${r.name}`)) },
  }));
  const ruleRows = await db.select().from(alertRules).where(inScope(alertRules, scope)).orderBy(asc(alertRules.name), asc(alertRules.id));
  const rules: StateEntry[] = ruleRows.map((r) => ({
    id: r.id,
    key: r.name,
    entry: {
      name: r.name,
      rule_type: r.ruleType,
      description: r.description,
      enabled: r.enabled === 1,
      rule_config: parsedJson(r.ruleConfig),
      source: r.sourceId === null ? null : (names.sourceSlug.get(r.sourceId) ?? r.sourceId),
      destination: r.destinationId === null ? null : (names.destinationName.get(r.destinationId) ?? r.destinationId),
      channels: parseIds(r.channelIds).map((id) => channelName.get(id) ?? id),
      cooldown_minutes: r.cooldownMinutes,
    },
  }));
  return { channels, rules };
}
