import { and, desc, eq, inArray } from "drizzle-orm";
// Leaf modules shared with the alert task: configs are checked, masked and sent with the code that later sends alerts.
import { channelKind, NotifyError, sendNotification, type AlertNotification, type SendContext } from "../outgoing/notifiers";
import { AppError, notFound, fromZod } from "../contracts/errors";
import { hex32, newId, normalizeId } from "../contracts/ids";
import type { ChannelConfig, ChannelDetail, ChannelListItem, ChannelType, CreateChannelInput, UpdateChannelInput } from "../contracts/notificationChannels";
import { alertRules, notificationChannels } from "../db/schema";
import { iso, type Clock } from "../core/clock";
import { transaction } from "../db/transaction";
import { recordAudit } from "./audit";
import type { Deps, DomainSettings, Scope } from "./deps";
import { createScope, inScope } from "./scope";
import type { SecretBox } from "./secrets";

type ChannelRow = typeof notificationChannels.$inferSelect;
type Config = Record<string, unknown>;

/** One try of a notification send; the alert task retries, a test answers after one. */
export const SEND_TIMEOUT_MS = 10_000;

function openConfig(row: ChannelRow, secrets: SecretBox): Config | null {
  try {
    return JSON.parse(secrets.open(row.config)) as Config;
  } catch {
    // A listing should survive a changed secret key; sending then fails with a clear error.
    return null;
  }
}

function maskedConfig(row: ChannelRow, secrets: SecretBox): Config {
  const config = openConfig(row, secrets);
  const kind = channelKind(row.type as ChannelType);
  const parsed = config && kind ? kind.config.safeParse(config) : null;
  return parsed?.success ? kind.masked(parsed.data) : {};
}

export function serializeChannelListItem(row: ChannelRow, secrets: SecretBox): ChannelListItem {
  return { id: row.id, name: row.name, type: row.type, config: maskedConfig(row, secrets), created_at: row.createdAt };
}

function serializeChannelDetail(row: ChannelRow, secrets: SecretBox): ChannelDetail {
  return { ...serializeChannelListItem(row, secrets), updated_at: row.updatedAt };
}

/** The config checked against its type: 400 naming each bad field as body.config.<field>. */
function checkedConfig(type: ChannelType, config: Config, settings: DomainSettings): Config {
  const parsed = channelKind(type).config.safeParse(config);
  if (!parsed.success) {
    throw fromZod(parsed.error, `Invalid config for a ${type} channel`, ["body", "config"]);
  }
  const out = parsed.data as Config;
  if (type === "email" && !out.smtp_url && !settings.smtpUrl) {
    throw new AppError("validation_error", "An email channel needs an SMTP server", [
      { field: "body.config.smtp_url", message: "is required when the server has no HOOKRELAY_SMTP_URL" },
    ]);
  }
  return out;
}

export async function createChannel(deps: Deps, scope: Scope, input: CreateChannelInput) {
  const { db, clock, secrets, settings } = deps;
  const { orgId, envId } = createScope(scope, input);
  const config = checkedConfig(input.channel_type, input.config, settings);
  const now = iso(clock.now());
  const row: ChannelRow = {
    id: newId("channel"),
    orgId,
    envId,
    name: input.name,
    type: input.channel_type,
    config: secrets.seal(JSON.stringify(config)),
    createdAt: now,
    updatedAt: now,
  };
  await transaction(db, async () => {
    await db.insert(notificationChannels).values(row);
    await recordAudit(deps, scope, { action: "create", resourceType: "notification_channel", resourceId: row.id, after: serializeChannelDetail(row, secrets), envId: row.envId });
  });
  return serializeChannelListItem(row, secrets);
}

export async function listChannels({ db, secrets }: Deps, scope: Scope) {
  const rows = await db
    .select()
    .from(notificationChannels)
    .where(and(inScope(notificationChannels, scope)))
    .orderBy(desc(notificationChannels.createdAt), desc(notificationChannels.id));
  return { channels: rows.map((r) => serializeChannelListItem(r, secrets)) };
}

async function findChannel({ db }: Deps, scope: Scope, rawId: string): Promise<ChannelRow> {
  const id = normalizeId(rawId, "channel", "Notification channel");
  const [row] = await db
    .select()
    .from(notificationChannels)
    .where(and(eq(notificationChannels.id, id), inScope(notificationChannels, scope)))
    .limit(1);
  if (!row) throw notFound("Notification channel");
  return row;
}

export async function getChannel(deps: Deps, scope: Scope, rawId: string) {
  return serializeChannelDetail(await findChannel(deps, scope, rawId), deps.secrets);
}

/**
 * name and config. The given config is laid over the stored one: fields
 * left out keep their value, null removes one, and a secret sent back as
 * it was shown (masked) keeps the stored secret. The channel type is fixed.
 */
export async function updateChannel(deps: Deps, scope: Scope, rawId: string, input: UpdateChannelInput) {
  return transaction(deps.db, () => updateChannelIn(deps, scope, rawId, input));
}

async function updateChannelIn(deps: Deps, scope: Scope, rawId: string, input: UpdateChannelInput) {
  const { db, clock, secrets, settings } = deps;
  const row = await findChannel(deps, scope, rawId);
  const next: ChannelRow = { ...row };
  if (input.name !== undefined) next.name = input.name;
  if (input.config !== undefined) {
    const type = row.type as ChannelType;
    const kind = channelKind(type);
    const stored = openConfig(row, secrets) ?? {};
    const parsedStored = kind.config.safeParse(stored);
    const shown = parsedStored.success ? kind.masked(parsedStored.data) : {};
    const merged: Config = { ...stored };
    for (const [field, value] of Object.entries(input.config)) {
      if (value === null) delete merged[field];
      else if (kind.secretFields.includes(field) && stored[field] !== undefined && value === shown[field]) continue;
      else merged[field] = value;
    }
    next.config = secrets.seal(JSON.stringify(checkedConfig(type, merged, settings)));
  }
  next.updatedAt = iso(clock.now());
  await db.update(notificationChannels).set({ name: next.name, config: next.config, updatedAt: next.updatedAt }).where(eq(notificationChannels.id, row.id));
  await recordAudit(deps, scope, { action: "update", resourceType: "notification_channel", resourceId: row.id, before: serializeChannelDetail(row, secrets), after: serializeChannelDetail(next, secrets) });
  return { id: next.id, name: next.name, type: next.type, updated_at: next.updatedAt };
}

/** The caller's alert rules that notify this channel. */
async function rulesUsing({ db }: Deps, scope: Scope, channelId: string) {
  const rules = await db
    .select({ id: alertRules.id, name: alertRules.name, channelIds: alertRules.channelIds })
    .from(alertRules)
    .where(and(inScope(alertRules, scope)));
  return rules.filter((r) => parseIds(r.channelIds).includes(channelId));
}

/** Refused with 409 while an alert rule still lists the channel: the rule would silently notify nobody. */
export async function deleteChannel(deps: Deps, scope: Scope, rawId: string) {
  return transaction(deps.db, () => deleteChannelIn(deps, scope, rawId));
}

async function deleteChannelIn(deps: Deps, scope: Scope, rawId: string) {
  const row = await findChannel(deps, scope, rawId);
  const using = await rulesUsing(deps, scope, row.id);
  if (using.length > 0) {
    throw new AppError(
      "conflict",
      `Notification channel is used by ${using.length} alert rule${using.length === 1 ? "" : "s"}: remove it from ${using.length === 1 ? "that rule" : "those rules"} first`,
      using.map((r) => ({ alert_rule_id: r.id, name: r.name })),
    );
  }
  await deps.db.delete(notificationChannels).where(eq(notificationChannels.id, row.id));
  await recordAudit(deps, scope, { action: "delete", resourceType: "notification_channel", resourceId: row.id, before: serializeChannelDetail(row, deps.secrets) });
  return { deleted: true as const };
}

/** A real send of a test notification, one try: `{success, error}`, never an error status for a failed send. */
export async function testChannel(deps: Deps, scope: Scope, rawId: string) {
  const row = await findChannel(deps, scope, rawId);
  const notification: AlertNotification = {
    id: hex32(),
    type: "alert.test",
    alertRuleId: null,
    ruleName: "Test notification",
    ruleType: "test",
    reason: `This is a test of the notification channel "${row.name}". If you can read it, the channel works.`,
    data: { channel_id: row.id, channel_name: row.name },
    triggeredAt: iso(deps.clock.now()),
    link: `${deps.settings.baseUrl}/notification-channels/${row.id}`,
  };
  const result = await sendTest(deps, row, notification);
  // Sent before the entry is written (a send may not run inside a transaction): the entry is the only write here.
  await recordAudit(deps, scope, { action: "test", resourceType: "notification_channel", resourceId: row.id, after: result });
  return result;
}

async function sendTest(deps: Deps, row: ChannelRow, notification: AlertNotification): Promise<{ success: boolean; error: string | null }> {
  const channel = openChannel(row, deps.secrets);
  if (!channel) return { success: false, error: "the channel's config cannot be read (was the secret key changed?)" };
  try {
    await sendNotification(channel, notification, sendContext(deps.settings, deps.clock));
    return { success: true, error: null };
  } catch (err) {
    return { success: false, error: failureMessage(err) };
  }
}

// ---------------------------------------------------------------- for alert rules and the alert task

export function parseIds(text: string): string[] {
  try {
    const v = JSON.parse(text) as unknown;
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
  } catch {
    return [];
  }
}

/**
 * channel_ids as stored (`nc_…`), each naming a channel of the caller's
 * scope: 400 naming body.channel_ids.<i> for any that does not.
 */
export async function checkedChannelIds({ db }: Deps, scope: Scope, raw: string[]): Promise<string[]> {
  const problems: { field: string; message: string }[] = [];
  const ids = raw.map((r, i) => {
    try {
      return normalizeId(r, "channel");
    } catch {
      problems.push({ field: `body.channel_ids.${i}`, message: `no notification channel ${r}` });
      return null;
    }
  });
  const wanted = [...new Set(ids.filter((x): x is string => x !== null))];
  const found = wanted.length
    ? new Set(
        (
          await db
            .select({ id: notificationChannels.id })
            .from(notificationChannels)
            .where(and(inArray(notificationChannels.id, wanted), inScope(notificationChannels, scope)))
        ).map((r) => r.id),
      )
    : new Set<string>();
  ids.forEach((id, i) => {
    if (id !== null && !found.has(id)) problems.push({ field: `body.channel_ids.${i}`, message: `no notification channel ${raw[i]}` });
  });
  const index = (field: string) => Number(field.slice(field.lastIndexOf(".") + 1));
  problems.sort((x, y) => index(x.field) - index(y.field));
  if (problems.length > 0) throw new AppError("validation_error", "channel_ids must name existing notification channels", problems);
  return [...new Set(ids as string[])];
}

export interface SendableChannel {
  id: string;
  name: string;
  type: ChannelType;
  /** null when the stored config cannot be opened or no longer validates. */
  config: ChannelConfig | null;
}

function openChannel(row: ChannelRow, secrets: SecretBox): ChannelConfig | null {
  const config = openConfig(row, secrets);
  const kind = channelKind(row.type as ChannelType);
  const parsed = config && kind ? kind.config.safeParse(config) : null;
  return parsed?.success ? ({ type: row.type, ...(parsed.data as object) } as ChannelConfig) : null;
}

/** Channels by stored id, secrets opened, for sending; ids of deleted channels are simply absent. */
export async function loadChannelsForSend({ db, secrets }: Deps, ids: string[]): Promise<SendableChannel[]> {
  if (ids.length === 0) return [];
  const rows = await db.select().from(notificationChannels).where(inArray(notificationChannels.id, ids));
  return rows.map((r) => ({ id: r.id, name: r.name, type: r.type as ChannelType, config: openChannel(r, secrets) }));
}

export function sendContext(settings: DomainSettings, clock: Clock): SendContext {
  return { timeoutMs: SEND_TIMEOUT_MS, blockPrivate: settings.blockPrivateDestinations, smtpUrl: settings.smtpUrl, baseUrl: settings.baseUrl, now: () => clock.now() };
}

/** What a failed send says in history and test results: our own messages as they are, anything else generically. */
export function failureMessage(err: unknown): string {
  if (err instanceof NotifyError) return err.message;
  return "the send failed unexpectedly";
}
