import { z } from "zod";
import { createAlertRuleInput, ruleConfigSchemas, type RuleType } from "./alertRules";
import { createApplicationInput } from "./applications";
import { createEndpointInput } from "./endpoints";
import { createCollectionInput } from "./collections";
import { createConnectionInput } from "./connections";
import { createDestinationInput } from "./destinations";
import { createEventTypeInput } from "./eventTypes";
import { CHANNEL_TYPES, channelConfigSchemas, type ChannelType } from "./notificationChannels";
import { createSourceInput } from "./sources";
import { createTopicInput } from "./topics";

/**
 * The entries of a relay file, one schema per kind of resource
 * (docs/config-as-code.md). Each is the resource's create body without ids:
 * the file accepts what the API accepts, references are by slug or name
 * (`source`, `destination`, `channels`), and unknown keys are refused so a
 * typo is named instead of silently ignored.
 */

const refName = z.string().trim().min(1).max(200);
const sourceRef = refName.describe("the slug of a source in this file or the environment");
const destinationRef = refName.describe("the name of a destination in this file or the environment");

export const relaySource = createSourceInput
  .omit({ org_id: true, env_id: true, type: true, is_ephemeral: true, expires_at: true, slug: true })
  .extend({ slug: createSourceInput.shape.slug.unwrap() })
  .strict()
  .meta({ description: "A source, keyed by slug (its ingest URL keeps the id the environment gave it)" });

export const relayDestination = createDestinationInput.omit({ org_id: true, env_id: true }).strict().meta({ description: "A destination, keyed by name" });

export const relayConnection = createConnectionInput
  .omit({ org_id: true, env_id: true, source_id: true, destination_id: true })
  .extend({ source: sourceRef, destination: destinationRef })
  .strict()
  .meta({ description: "A connection, keyed by name: source (by slug) → destination (by name)" });

export const relayChannel = z
  .object({ name: z.string().trim().min(1).max(200), channel_type: z.enum(CHANNEL_TYPES), config: z.record(z.string(), z.unknown()) })
  .strict()
  .meta({ description: "A notification channel, keyed by name; its type cannot change (give it a new name)" });

export const relayTopic = createTopicInput
  .omit({ org_id: true, env_id: true, slug: true })
  .extend({ slug: createTopicInput.shape.slug.unwrap() })
  .strict()
  .meta({ description: "A topic, keyed by slug" });

export const relayEventType = createEventTypeInput.omit({ org_id: true, env_id: true }).strict().meta({ description: "An event type, keyed by name" });

export const relayAlertRule = createAlertRuleInput
  .omit({ org_id: true, env_id: true, source_id: true, destination_id: true, channel_ids: true })
  .extend({
    source: sourceRef.nullable().optional(),
    destination: destinationRef.nullable().optional(),
    channels: z.array(refName).max(20).optional().describe("the names of the notification channels it notifies"),
  })
  .strict()
  .meta({ description: "An alert rule, keyed by name" });

export const relayCollection = createCollectionInput
  .omit({ org_id: true, env_id: true, source_id: true })
  .extend({ source: sourceRef, name: z.string().trim().min(1).max(200) })
  .strict()
  .meta({ description: "A collection, keyed by name, built from a source's events" });

export const relayEndpoint = createEndpointInput.strict().meta({ description: "An application endpoint, keyed by url within its application; a changed secret is a rotation" });

export const relayApplication = createApplicationInput
  .omit({ org_id: true, env_id: true })
  .extend({ endpoints: z.array(relayEndpoint).max(100).optional().describe("its endpoints, keyed by url") })
  .strict()
  .meta({ description: "An application of the outbound API, keyed by name, with its endpoints" });

/** The stable reference name of an endpoint's signing secret. */
export function endpointSecretRefName(app: string, url: string): string {
  return ["APP", app, "ENDPOINT", url.replace(/^https?:\/\//, ""), "SECRET"].join("_").toUpperCase().replace(/[^A-Z0-9]+/g, "_");
}

/** Where the applications' secrets are, as paths from the file's root (only those present). */
export function applicationSecretPaths(apps: unknown): (string | number)[][] {
  const out: (string | number)[][] = [];
  if (!Array.isArray(apps)) return out;
  apps.forEach((app: unknown, i) => {
    const endpoints = (app as { endpoints?: unknown } | null)?.endpoints;
    if (!Array.isArray(endpoints)) return;
    endpoints.forEach((e: unknown, j) => {
      const secret = (e as { secret?: unknown } | null)?.secret;
      if (secret !== undefined && secret !== null) out.push(["applications", i, "endpoints", j, "secret"]);
    });
  });
  return out;
}

/** Every kind a file holds, in the order they are created: what is referred to comes first. Deletes go in reverse. */
export const RELAY_KINDS = ["sources", "destinations", "notification_channels", "topics", "event_types", "connections", "alert_rules", "collections"] as const;
export type RelayKind = (typeof RELAY_KINDS)[number];

export const ENTRY_SCHEMAS = {
  sources: relaySource,
  destinations: relayDestination,
  notification_channels: relayChannel,
  topics: relayTopic,
  event_types: relayEventType,
  connections: relayConnection,
  alert_rules: relayAlertRule,
  collections: relayCollection,
} as const satisfies Record<RelayKind, z.ZodType>;

/** The field each kind's entries are keyed by. */
export const KEY_FIELD: Record<RelayKind, "slug" | "name"> = {
  sources: "slug",
  destinations: "name",
  notification_channels: "name",
  topics: "slug",
  event_types: "name",
  connections: "name",
  alert_rules: "name",
  collections: "name",
};

/** A kind as one resource is called in a plan. */
export const SINGULAR = {
  sources: "source",
  destinations: "destination",
  notification_channels: "notification_channel",
  topics: "topic",
  event_types: "event_type",
  connections: "connection",
  alert_rules: "alert_rule",
  collections: "collection",
} as const satisfies Record<RelayKind, string>;

/** The kinds a plan names, the applications section's included. */
export const CHANGE_KINDS = [...Object.values(SINGULAR), "application", "endpoint"] as const;

/** A field of an entry naming another resource, and the id field the API takes for it. */
export interface Reference {
  field: string;
  to: "sources" | "destinations" | "notification_channels";
  idField: string;
  many?: true;
}

export const REFERENCES: Partial<Record<RelayKind, Reference[]>> = {
  connections: [
    { field: "source", to: "sources", idField: "source_id" },
    { field: "destination", to: "destinations", idField: "destination_id" },
  ],
  alert_rules: [
    { field: "source", to: "sources", idField: "source_id" },
    { field: "destination", to: "destinations", idField: "destination_id" },
    { field: "channels", to: "notification_channels", idField: "channel_ids", many: true },
  ],
  collections: [{ field: "source", to: "sources", idField: "source_id" }],
};

/** Custom header names whose values are credentials: exported as references like the other secrets. */
export const SECRET_HEADER = /auth|token|key|secret|password|passwd|cookie|signature|credential/i;

/** A channel's secret config fields (src/outgoing/notifiers/*: a Slack or Discord webhook URL is itself a credential). */
export const CHANNEL_SECRET_FIELDS: Record<ChannelType, readonly string[]> = { webhook: ["secret"], slack: ["webhook_url"], discord: ["webhook_url"], email: ["smtp_url"] };

/** Where an entry's secrets are, as paths inside the entry (only those present). */
export function secretPaths(kind: RelayKind, entry: Record<string, unknown>): string[][] {
  const out: string[][] = [];
  if (kind === "sources") out.push(["verification_secret"]);
  if (kind === "destinations") {
    out.push(["signing_secret"]);
    for (const field of ["password", "token", "api_key"]) out.push(["auth_config", field]);
    const headers = entry.headers;
    if (headers && typeof headers === "object") for (const name of Object.keys(headers)) if (SECRET_HEADER.test(name)) out.push(["headers", name]);
  }
  if (kind === "notification_channels") {
    for (const field of CHANNEL_SECRET_FIELDS[entry.channel_type as ChannelType] ?? []) out.push(["config", field]);
  }
  return out.filter((p) => valueAt(entry, p) !== undefined && valueAt(entry, p) !== null);
}

export function valueAt(entry: unknown, path: readonly string[]): unknown {
  let v: unknown = entry;
  for (const part of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<string, unknown>)[part];
  }
  return v;
}

export function setAt(entry: Record<string, unknown>, path: readonly string[], value: unknown) {
  let v: Record<string, unknown> = entry;
  for (const part of path.slice(0, -1)) v = v[part] as Record<string, unknown>;
  v[path[path.length - 1]!] = value;
}

/** The stable reference name of a secret: resource kind, its key and the field (`SOURCE_GITHUB_SECRET`). */
export function secretRefName(kind: RelayKind, key: string, path: readonly string[]): string {
  const field =
    path[0] === "verification_secret" ? "SECRET" : path[0] === "headers" ? `HEADER_${path[1]}` : path[0] === "auth_config" ? `AUTH_${path[1]}` : path[0] === "config" ? path[1]! : path.join("_");
  const what = kind === "notification_channels" ? "channel" : SINGULAR[kind];
  return [what, key, field].join("_").toUpperCase().replace(/[^A-Z0-9]+/g, "_").replace(/_+$/, "");
}

/**
 * A configuration value as the domain stores it, for comparing a file with
 * an environment: a channel's or a rule's config with its defaults filled in
 * (what the use-case would store), left as it is when it does not parse
 * (the use-case then names the problem).
 */
export function storedConfig(kind: RelayKind, entry: Record<string, unknown>): unknown {
  if (kind === "notification_channels") {
    const parsed = channelConfigSchemas[entry.channel_type as ChannelType]?.safeParse(entry.config);
    return parsed?.success ? parsed.data : entry.config;
  }
  if (kind === "alert_rules") {
    const parsed = ruleConfigSchemas[entry.rule_type as RuleType]?.safeParse(entry.rule_config ?? {});
    return parsed?.success ? parsed.data : entry.rule_config;
  }
  return undefined;
}
