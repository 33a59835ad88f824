import { and, asc, isNull } from "drizzle-orm";
import { AppError } from "../contracts/errors";
import type { RelayKind } from "../contracts/relayFile";
import { connections, destinations, sources } from "../db/schema";
import type { Deps, Scope } from "./deps";
import { inScope } from "./scope";

/**
 * An environment's configuration as relay-file entries (docs/config-as-code.md):
 * what export writes and what a plan compares a file with. Secrets are in
 * the clear here, opened inside the domain; they leave it only as
 * references, or in full when an admin asks for them.
 */

export interface StateEntry {
  id: string;
  key: string;
  entry: Record<string, unknown>;
}

export type ConfigState = Record<RelayKind, StateEntry[]> & {
  /** Every source of the environment by slug, topic and outbound ones too: what a connection may name. */
  sourceIds: Map<string, string>;
};

/** Sources a file manages: not a topic's or the outbound messages' (they belong to those resources), not ephemeral ones. */
const UNMANAGED_SOURCE_TYPES = ["topic", "outbound"];

const parsed = (text: string | null): unknown => (text === null ? null : JSON.parse(text));

function opened(deps: Deps, sealed: string | null, what: string): string | null {
  if (sealed === null) return null;
  try {
    return deps.secrets.open(sealed);
  } catch {
    throw new AppError("conflict", `The ${what} cannot be decrypted with the current HOOKRELAY_SECRET_KEY; set it again before exporting or applying`);
  }
}

function uniqueKeys(kind: RelayKind, list: StateEntry[]) {
  const seen = new Set<string>();
  for (const e of list) {
    if (seen.has(e.key)) throw new AppError("conflict", `Two ${kind} are named "${e.key}": a relay file names each once; rename one first`);
    seen.add(e.key);
  }
}

export async function readConfigState(deps: Deps, scope: Scope): Promise<ConfigState> {
  const { db } = deps;
  const sourceRows = await db.select().from(sources).where(inScope(sources, scope)).orderBy(asc(sources.slug));
  const sourceIds = new Map(sourceRows.map((r) => [r.slug, r.id]));
  const slugOf = new Map(sourceRows.map((r) => [r.id, r.slug]));
  const managed = sourceRows.filter((r) => !UNMANAGED_SOURCE_TYPES.includes(r.type) && r.isEphemeral === 0);

  const sourceEntries: StateEntry[] = managed.map((r) => ({
    id: r.id,
    key: r.slug,
    entry: {
      slug: r.slug,
      name: r.name,
      description: r.description,
      template: r.template,
      verification_enabled: r.verificationEnabled === 1,
      verification_type: r.verificationType,
      verification_secret: opened(deps, r.verificationSecret, `verification secret of source ${r.slug}`),
      verification_header: r.verificationHeader,
      verification_config: parsed(r.verificationConfig),
      dedup_enabled: r.dedupEnabled === 1,
      dedup_strategy: r.dedupStrategy,
      dedup_field: r.dedupField,
      dedup_window_seconds: r.dedupWindowSeconds,
      ip_allowlist: parsed(r.ipAllowlist),
      ip_denylist: parsed(r.ipDenylist),
      status: r.status,
      request_limit: r.requestLimit,
      source_config: parsed(r.sourceConfig),
      schema_validation_enabled: r.schemaValidationEnabled === 1,
      json_schema: parsed(r.jsonSchema),
      schema_action: r.schemaAction,
    },
  }));

  // Destinations an application endpoint delivers through belong to the outbound API, not to the file.
  const destinationRows = await db
    .select()
    .from(destinations)
    .where(and(inScope(destinations, scope), isNull(destinations.applicationId)))
    .orderBy(asc(destinations.name), asc(destinations.id));
  const nameOf = new Map(destinationRows.map((r) => [r.id, r.name]));
  const destinationEntries: StateEntry[] = destinationRows.map((r) => {
    const what = `secrets of destination ${r.name}`;
    return {
      id: r.id,
      key: r.name,
      entry: {
        name: r.name,
        url: r.url,
        http_method: r.httpMethod,
        headers: parsed(opened(deps, r.headers, what)),
        auth_type: r.authType,
        auth_config: r.authType === "none" ? null : parsed(opened(deps, r.authConfig, what)),
        timeout_ms: r.timeoutMs,
        rate_limit_per_second: r.rateLimitPerSecond,
        max_retries: r.maxRetries,
        retry_strategy: r.retryStrategy,
        retry_interval_seconds: r.retryIntervalSeconds,
        retry_schedule: parsed(r.retrySchedule),
        signing_algorithm: r.signingAlgorithm,
        signing_secret: opened(deps, r.signingSecret, what),
        status: r.status,
      },
    };
  });

  const connectionRows = await db
    .select()
    .from(connections)
    .where(inScope(connections, scope))
    .orderBy(asc(connections.name), asc(connections.id));
  const connectionEntries: StateEntry[] = connectionRows.flatMap((r) => {
    const destination = nameOf.get(r.destinationId);
    // A connection to an application's destination is the outbound API's own wiring.
    if (destination === undefined) return [];
    return [
      {
        id: r.id,
        key: r.name,
        entry: {
          name: r.name,
          source: slugOf.get(r.sourceId) ?? r.sourceId,
          destination,
          description: r.description,
          enabled: r.enabled === 1,
          filter_rules: parsed(r.filterRules),
          transform_enabled: r.transformEnabled === 1,
          transform_expression: r.transformExpression,
          ordered: r.ordered === 1,
          ordering_key: r.orderingKey,
          on_dlq: r.onDlq,
        },
      },
    ];
  });

  const state = { sources: sourceEntries, destinations: destinationEntries, connections: connectionEntries, sourceIds };
  for (const kind of ["sources", "destinations", "connections"] as const) uniqueKeys(kind, state[kind]);
  return state;
}

/** Same value, whatever the order of an object's keys. */
export function canonical(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

export function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}
