import { createAlertRuleInput, updateAlertRuleInput } from "../contracts/alertRules";
import { createConnectionInput, updateConnectionInput } from "../contracts/connections";
import { createDestinationInput, updateDestinationInput } from "../contracts/destinations";
import { eq } from "drizzle-orm";
import { parseOrThrow } from "../contracts/errors";
import { createChannelInput, updateChannelInput } from "../contracts/notificationChannels";
import { REFERENCES, type RelayKind } from "../contracts/relayFile";
import type { CreateSourceInput } from "../contracts/sources";
import { sources, topics } from "../db/schema";
import { createAlertRule, deleteAlertRule, updateAlertRule } from "./alertRules";
import { createCollection, deleteCollection, updateCollection } from "./collections";
import { createConnection, deleteConnection, updateConnection } from "./connections";
import type { PlanStep } from "./configPlan";
import type { Deps, Scope } from "./deps";
import { createDestination, deleteDestination, updateDestination } from "./destinations";
import { createEventType, deleteEventType, updateEventType } from "./eventTypes";
import { createChannel, deleteChannel, updateChannel } from "./notificationChannels";
import { createSource, deleteSource, updateSource } from "./sources";
import { createTopic, deleteTopic, updateTopic } from "./topics";

/**
 * One step of a plan carried out through the resource's own use-case, with
 * the body a request would send: names the entry refers to become the ids
 * the API takes. Each use-case validates and audits as it does for a request.
 */

type Input = Record<string, unknown>;
type Ids = Record<"sources" | "destinations" | "notification_channels", Map<string, string>>;

interface Handler {
  create(deps: Deps, scope: Scope, input: Input): Promise<string>;
  update(deps: Deps, scope: Scope, id: string, input: Input, before: Input): Promise<unknown>;
  remove(deps: Deps, scope: Scope, id: string): Promise<unknown>;
}

const HANDLERS: Record<RelayKind, Handler> = {
  sources: {
    create: async (deps, scope, input) => (await createSource(deps, scope, input as CreateSourceInput)).source.id,
    update: (deps, scope, id, input) => updateSource(deps, scope, id, input),
    remove: (deps, scope, id) => deleteSource(deps, scope, id),
  },
  destinations: {
    create: async (deps, scope, input) => (await createDestination(deps, scope, parseOrThrow(createDestinationInput, input))).destination.id,
    update: (deps, scope, id, input) => updateDestination(deps, scope, id, parseOrThrow(updateDestinationInput, input)),
    remove: (deps, scope, id) => deleteDestination(deps, scope, id),
  },
  notification_channels: {
    create: async (deps, scope, input) => (await createChannel(deps, scope, parseOrThrow(createChannelInput, input))).id,
    // The use-case lays the given config over the stored one: what the file no longer has is removed (null).
    update: (deps, scope, id, { name, config }, before) => {
      const removed = Object.keys((before.config as Input | null) ?? {}).filter((k) => !(k in ((config as Input | undefined) ?? {})));
      const next = config === undefined ? undefined : { ...Object.fromEntries(removed.map((k) => [k, null])), ...(config as Input) };
      return updateChannel(deps, scope, id, parseOrThrow(updateChannelInput, { name, config: next }));
    },
    remove: (deps, scope, id) => deleteChannel(deps, scope, id),
  },
  topics: {
    create: async (deps, scope, input) => (await createTopic(deps, scope, input as Parameters<typeof createTopic>[2])).topic.id,
    update: (deps, scope, id, input) => updateTopic(deps, scope, id, input),
    remove: (deps, scope, id) => deleteTopic(deps, scope, id),
  },
  event_types: {
    create: async (deps, scope, input) => (await createEventType(deps, scope, input as Parameters<typeof createEventType>[2])).event_type.id,
    update: (deps, scope, id, input) => updateEventType(deps, scope, id, input),
    remove: (deps, scope, id) => deleteEventType(deps, scope, id),
  },
  connections: {
    create: async (deps, scope, input) => (await createConnection(deps, scope, parseOrThrow(createConnectionInput, input))).connection.id,
    update: (deps, scope, id, input) => updateConnection(deps, scope, id, parseOrThrow(updateConnectionInput, input)),
    remove: (deps, scope, id) => deleteConnection(deps, scope, id),
  },
  alert_rules: {
    create: async (deps, scope, input) => (await createAlertRule(deps, scope, parseOrThrow(createAlertRuleInput, input))).alert_rule.id,
    update: (deps, scope, id, input) => updateAlertRule(deps, scope, id, parseOrThrow(updateAlertRuleInput, input)),
    remove: (deps, scope, id) => deleteAlertRule(deps, scope, id),
  },
  collections: {
    create: async (deps, scope, input) => (await createCollection(deps, scope, input as Parameters<typeof createCollection>[2])).collection.id,
    update: (deps, scope, id, input) => updateCollection(deps, scope, id, input),
    remove: (deps, scope, id) => deleteCollection(deps, scope, id),
  },
};

/** The API's body for an entry: each reference by name replaced by the id field it names. */
function inputOf(kind: RelayKind, entry: Input, ids: Ids): Input {
  const input: Input = { ...entry };
  for (const ref of REFERENCES[kind] ?? []) {
    const value = input[ref.field];
    delete input[ref.field];
    if (value === undefined) continue;
    const idOf = (name: string) => ids[ref.to].get(name) ?? name;
    input[ref.idField] = value === null ? null : ref.many ? (value as string[]).map(idOf) : idOf(value as string);
  }
  return input;
}

/**
 * Fields an update sends together: the use-cases read them as pairs (a new
 * template re-fills the verification settings unless the same request sets
 * them; auth_config is checked against auth_type; a key against its
 * algorithm; a transform's switch against its expression).
 */
const TOGETHER: Partial<Record<RelayKind, string[][]>> = {
  sources: [
    ["template", "verification_type", "verification_header", "verification_config", "dedup_strategy", "dedup_field"],
    ["verification_type", "verification_config"],
  ],
  destinations: [
    ["auth_type", "auth_config"],
    ["signing_algorithm", "signing_secret"],
  ],
  connections: [
    ["transform_enabled", "transform_expression"],
    ["ordered", "ordering_key"],
  ],
  alert_rules: [["rule_type", "rule_config"]],
};

/**
 * An update sends only what changes (and what the use-case reads with it),
 * so the audit trail shows the change and nothing else: a secret sent again
 * unchanged would be sealed anew and read as changed.
 */
function patchOf(kind: RelayKind, entry: Input, changed: string[]): Input {
  const send = new Set(changed);
  for (const group of TOGETHER[kind] ?? []) if (group.some((f) => send.has(f))) group.forEach((f) => send.add(f));
  return Object.fromEntries(Object.entries(entry).filter(([f, v]) => send.has(f) && v !== undefined));
}

export async function carryOut(deps: Deps, scope: Scope, step: PlanStep, ids: Ids): Promise<void> {
  const handler = HANDLERS[step.kind];
  if (step.action === "delete") return void (await handler.remove(deps, scope, step.id!));
  if (step.action === "update") {
    const input = inputOf(step.kind, patchOf(step.kind, step.entry ?? {}, step.changed ?? []), ids);
    return void (await handler.update(deps, scope, step.id!, input, step.before ?? {}));
  }
  const input = inputOf(step.kind, step.entry ?? {}, ids);
  const id = await handler.create(deps, scope, input);
  if (step.kind in ids) ids[step.kind as keyof Ids].set(step.key, id);
  if (step.kind === "topics") {
    // Its source, which connections and collections later in the file may name.
    const [source] = await deps.db.select({ id: sources.id, slug: sources.slug }).from(sources).innerJoin(topics, eq(topics.sourceId, sources.id)).where(eq(topics.id, id));
    if (source) ids.sources.set(source.slug, source.id);
  }
}

export type { Ids };
