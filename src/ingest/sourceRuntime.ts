import type { ValidateFunction } from "ajv";
import { secretRequestHeaders, type DedupStrategy, type SchemaAction, type VerificationType } from "../contracts/sources";
import type { IngestSourceRow } from "../db/ingestStore";
import type { SecretBox } from "../domain/secrets";
import { compileIpFilter } from "../rules/ipFilter";
import { compileSchema } from "../rules/schemaCheck";
import { findTemplate, type SourceTemplate } from "../rules/templates";
import { buildVerifier, type Verifier } from "../rules/verify";
import { fail } from "../rules/verify/types";

/**
 * What ingest derives from a source row (decrypted secret, keyed verifier,
 * IP matcher, compiled schema), built once and reused while the row's
 * settings stay the same. The cache is keyed by the settings themselves, not
 * by an event on the bus, so a change made by `hookrelay` in local CLI mode
 * (another process) is seen on the next request.
 */
export interface SourceRuntime {
  verifier: Verifier | null;
  admits: (ip: string | null) => boolean;
  schema: ValidateFunction | null;
  schemaAction: SchemaAction;
  dedup: { strategy: DedupStrategy; field: string | null; windowSeconds: number } | null;
  template: SourceTemplate | undefined;
  /** Lower-case names of headers holding the source's secret: stored as `[redacted]` (empty for most sources). */
  redactedHeaders: readonly string[];
}

const MAX_CACHED = 10_000;
const cache = new Map<string, { fingerprint: string; runtime: SourceRuntime }>();

function fingerprint(row: IngestSourceRow): string {
  return [
    row.template,
    row.verification_enabled,
    row.verification_type,
    row.verification_secret,
    row.verification_header,
    row.verification_config,
    row.dedup_enabled,
    row.dedup_strategy,
    row.dedup_field,
    row.dedup_window_seconds,
    row.ip_allowlist,
    row.ip_denylist,
    row.schema_validation_enabled,
    row.json_schema,
    row.schema_action,
  ].join("\u0000");
}

export function sourceRuntime(row: IngestSourceRow, secrets: SecretBox): SourceRuntime {
  const fp = fingerprint(row);
  const hit = cache.get(row.id);
  if (hit && hit.fingerprint === fp) return hit.runtime;
  const runtime = build(row, secrets);
  if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value!);
  cache.set(row.id, { fingerprint: fp, runtime });
  return runtime;
}

function parseList(text: string | null): string[] | null {
  if (!text) return null;
  try {
    const v = JSON.parse(text);
    return Array.isArray(v) ? v.map(String) : null;
  } catch {
    return null;
  }
}

function build(row: IngestSourceRow, secrets: SecretBox): SourceRuntime {
  return {
    verifier: row.verification_enabled ? buildRowVerifier(row, secrets) : null,
    admits: compileIpFilter(parseList(row.ip_allowlist), parseList(row.ip_denylist)),
    schema: row.schema_validation_enabled && row.json_schema ? safeCompile(row.json_schema) : null,
    schemaAction: row.schema_action === "warn" ? "warn" : "reject",
    dedup: row.dedup_enabled
      ? { strategy: (row.dedup_strategy as DedupStrategy | null) ?? "body_hash", field: row.dedup_field, windowSeconds: row.dedup_window_seconds }
      : null,
    template: findTemplate(row.template),
    redactedHeaders: secretRequestHeaders(row.verification_type, row.verification_header),
  };
}

/**
 * Settings were checked when saved; should a stored one still be unusable
 * (a secret sealed with another key, a row written by hand) every request
 * fails verification with the reason, rather than passing or crashing.
 */
function buildRowVerifier(row: IngestSourceRow, secrets: SecretBox): Verifier {
  if (!row.verification_type || !row.verification_secret) return () => fail("verification is enabled but not configured");
  let secret: string;
  try {
    secret = secrets.open(row.verification_secret);
  } catch {
    return () => fail("verification secret cannot be decrypted (was HOOKRELAY_SECRET_KEY changed?)");
  }
  try {
    const config = row.verification_config ? JSON.parse(row.verification_config) : {};
    return buildVerifier(row.verification_type as VerificationType, secret, row.verification_header, config);
  } catch {
    return () => fail("verification settings are invalid");
  }
}

function safeCompile(schemaText: string): ValidateFunction | null {
  try {
    return compileSchema(schemaText);
  } catch {
    return null;
  }
}
