import { pendingSourceCounts } from "../db/pg/counters";
import type { sources } from "../db/schema";
import type { SourceDto } from "../contracts/sources";
import type { Deps } from "./deps";

type SourceRow = typeof sources.$inferSelect;

const MASK = "********";

/** What responses show of a verification secret: enough to recognise it, never enough to use it. */
export function maskSecret(plain: string): string {
  return plain.length >= 16 ? MASK + plain.slice(-4) : MASK;
}

export function openSecret(deps: Deps, sealed: string | null): string | null {
  if (sealed === null) return null;
  try {
    return deps.secrets.open(sealed);
  } catch {
    return null;
  }
}

export function ingestUrl(deps: Deps, id: string) {
  return `${deps.settings.baseUrl}/v1/ingest/${id}`;
}

/** The one place a source row becomes the API shape (flags 0/1, JSON columns as strings, secret masked). */
export function serializeSource(deps: Deps, row: SourceRow): SourceDto {
  const secret = row.verificationSecret === null ? null : openSecret(deps, row.verificationSecret);
  const pending = pendingSourceCounts(row.id);
  return {
    id: row.id,
    org_id: row.orgId,
    env_id: row.envId,
    slug: row.slug,
    name: row.name,
    description: row.description,
    template: row.template,
    verification_enabled: row.verificationEnabled,
    verification_type: row.verificationType,
    verification_secret: row.verificationSecret === null ? null : secret === null ? MASK : maskSecret(secret),
    verification_header: row.verificationHeader,
    verification_config: row.verificationConfig,
    dedup_enabled: row.dedupEnabled,
    dedup_strategy: row.dedupStrategy,
    dedup_field: row.dedupField,
    dedup_window_seconds: row.dedupWindowSeconds,
    ip_allowlist: row.ipAllowlist,
    ip_denylist: row.ipDenylist,
    status: row.status,
    // On PostgreSQL this node's counts not yet flushed are added (src/db/pg/counters.ts); none on SQLite.
    event_count: row.eventCount + pending.events,
    request_count: row.requestCount + pending.requests,
    last_event_at: pending.last > (row.lastEventAt ?? "") ? pending.last : row.lastEventAt,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
    is_ephemeral: row.isEphemeral,
    expires_at: row.expiresAt,
    request_limit: row.requestLimit,
    type: row.type,
    source_config: row.sourceConfig,
    schema_validation_enabled: row.schemaValidationEnabled,
    json_schema: row.jsonSchema,
    schema_action: row.schemaAction,
    ingest_url: ingestUrl(deps, row.id),
  };
}
