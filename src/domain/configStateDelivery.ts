import { and, asc, isNull } from "drizzle-orm";
import { connections, destinations, sources } from "../db/schema";
import { opened, parsedJson, type Names, type StateEntry } from "./configStateParts";
import type { Deps, Scope } from "./deps";
import { inScope } from "./scope";

/** Sources, destinations and connections as relay-file entries (src/domain/configState.ts). */

/** Sources a file manages: not a topic's or the outbound messages' (they belong to those resources), not ephemeral ones. */
const UNMANAGED_SOURCE_TYPES = ["topic", "outbound"];

export async function readDeliveryState(deps: Deps, scope: Scope) {
  const { db } = deps;
  const sourceRows = await db.select().from(sources).where(inScope(sources, scope)).orderBy(asc(sources.slug));
  const sourceIds = new Map(sourceRows.map((r) => [r.slug, r.id]));
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
      verification_config: parsedJson(r.verificationConfig),
      dedup_enabled: r.dedupEnabled === 1,
      dedup_strategy: r.dedupStrategy,
      dedup_field: r.dedupField,
      dedup_window_seconds: r.dedupWindowSeconds,
      ip_allowlist: parsedJson(r.ipAllowlist),
      ip_denylist: parsedJson(r.ipDenylist),
      status: r.status,
      request_limit: r.requestLimit,
      source_config: parsedJson(r.sourceConfig),
      schema_validation_enabled: r.schemaValidationEnabled === 1,
      json_schema: parsedJson(r.jsonSchema),
      schema_action: r.schemaAction,
    },
  }));

  // Destinations an application endpoint delivers through belong to the outbound API, not to the file.
  const destinationRows = await db
    .select()
    .from(destinations)
    .where(and(inScope(destinations, scope), isNull(destinations.applicationId)))
    .orderBy(asc(destinations.name), asc(destinations.id));
  const destinationEntries: StateEntry[] = destinationRows.map((r) => {
    const what = `secrets of destination ${r.name}`;
    return {
      id: r.id,
      key: r.name,
      entry: {
        name: r.name,
        url: r.url,
        http_method: r.httpMethod,
        headers: parsedJson(opened(deps, r.headers, what)),
        auth_type: r.authType,
        auth_config: r.authType === "none" ? null : parsedJson(opened(deps, r.authConfig, what)),
        timeout_ms: r.timeoutMs,
        rate_limit_per_second: r.rateLimitPerSecond,
        max_retries: r.maxRetries,
        retry_strategy: r.retryStrategy,
        retry_interval_seconds: r.retryIntervalSeconds,
        retry_schedule: parsedJson(r.retrySchedule),
        signing_algorithm: r.signingAlgorithm,
        signing_secret: opened(deps, r.signingSecret, what),
        status: r.status,
      },
    };
  });

  const names: Names = { sourceSlug: new Map(sourceRows.map((r) => [r.id, r.slug])), destinationName: new Map(destinationRows.map((r) => [r.id, r.name])) };
  const connectionRows = await db.select().from(connections).where(inScope(connections, scope)).orderBy(asc(connections.name), asc(connections.id));
  const connectionEntries: StateEntry[] = connectionRows.flatMap((r) => {
    const destination = names.destinationName.get(r.destinationId);
    // A connection to an application's destination is the outbound API's own wiring.
    if (destination === undefined) return [];
    return [
      {
        id: r.id,
        key: r.name,
        entry: {
          name: r.name,
          source: names.sourceSlug.get(r.sourceId) ?? r.sourceId,
          destination,
          description: r.description,
          enabled: r.enabled === 1,
          filter_rules: parsedJson(r.filterRules),
          transform_enabled: r.transformEnabled === 1,
          transform_expression: r.transformExpression,
          ordered: r.ordered === 1,
          ordering_key: r.orderingKey,
          on_dlq: r.onDlq,
        },
      },
    ];
  });
  return { sources: sourceEntries, destinations: destinationEntries, connections: connectionEntries, sourceIds, names };
}
