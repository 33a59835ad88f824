import { pendingSourceCounts } from "../db/pg/counters";
import { inScope } from "./scope";
import { isUniqueViolation } from "../db/errors";
import { and, desc, eq, like, or } from "drizzle-orm";
import { events, sources } from "../db/schema";
import { environments } from "../db/schema/tenancy";
import { AppError, notFound, parseOrThrow } from "../contracts/errors";
import { newId, normalizeId } from "../contracts/ids";
import type { CreateSourceInput, DedupStrategy, ListSourcesQuery, SourceDto, UpdateSourceInput, VerificationType } from "../contracts/sources";
import { createSourceInput, updateSourceInput } from "../contracts/sources";
import { invalidIpEntries } from "../rules/ipFilter";
import { compileSchema, InvalidSchemaError } from "../rules/schemaCheck";
import { findTemplate, templateDedupsByDefault, templates } from "../rules/templates";
import { verificationProblems } from "../rules/verify";
import { iso } from "../core/clock";
import type { Deps, Scope } from "./deps";

type SourceRow = typeof sources.$inferSelect;
type Issue = { field: string; message: string };

/** Ephemeral sources without expires_at or request_limit live this long. */
export const DEFAULT_EPHEMERAL_TTL_MS = 24 * 3600 * 1000;

// ---------------------------------------------------------------- serializing

const MASK = "********";

/** What responses show of a verification secret: enough to recognise it, never enough to use it. */
export function maskSecret(plain: string): string {
  return plain.length >= 16 ? MASK + plain.slice(-4) : MASK;
}

function openSecret(deps: Deps, sealed: string | null): string | null {
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

// ---------------------------------------------------------------- templates

export function listTemplates() {
  return {
    templates: templates.map((t) => ({
      id: t.id,
      name: t.name,
      description: t.description,
      verification_type: t.verification_type,
      verification_header: t.verification_header,
      verification_config: JSON.stringify(t.verification_config),
      dedup_strategy: t.dedup_strategy,
      dedup_field: t.dedup_field,
    })),
  };
}

// ---------------------------------------------------------------- input normalisation

/** A JSON object given as an object or as its JSON text → its canonical JSON text. */
function jsonObjectText(field: string, value: unknown, issues: Issue[]): string | null {
  if (value === null || value === undefined) return null;
  let v = value;
  if (typeof v === "string") {
    try {
      v = JSON.parse(v);
    } catch {
      issues.push({ field: `body.${field}`, message: "must be a JSON object (or its JSON text)" });
      return null;
    }
  }
  if (!v || typeof v !== "object" || Array.isArray(v)) {
    issues.push({ field: `body.${field}`, message: "must be a JSON object" });
    return null;
  }
  return JSON.stringify(v);
}

/** A CIDR list → JSON array text; every entry checked. */
function ipListText(field: string, value: string[] | null | undefined, issues: Issue[]): string | null {
  if (value === null || value === undefined) return null;
  const entries = value.map((e) => e.trim()).filter((e) => e !== "");
  for (const i of invalidIpEntries(entries)) issues.push({ field: `body.${field}.${i}`, message: `"${entries[i]}" is not an IPv4/IPv6 address or CIDR` });
  return JSON.stringify(entries);
}

function slugify(name: string) {
  const s = name
    .normalize("NFKD")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 80);
  return s || "source";
}

/** The settings that must make sense together, as they will be after the write. */
interface Settings {
  verificationEnabled: number;
  verificationType: string | null;
  /** Only when a new secret is given: existing ones were checked when saved. */
  newSecret: string | null;
  hasSecret: boolean;
  verificationHeader: string | null;
  verificationConfig: string | null;
  dedupEnabled: number;
  dedupStrategy: string | null;
  dedupField: string | null;
  schemaValidationEnabled: number;
  jsonSchema: string | null;
}

function settingsIssues(s: Settings): Issue[] {
  const issues: Issue[] = [];
  if (s.verificationType) {
    const config = s.verificationConfig ? JSON.parse(s.verificationConfig) : {};
    for (const p of verificationProblems(s.verificationType as VerificationType, s.newSecret, s.verificationHeader, config)) {
      issues.push({ field: `body.${p.field}`, message: p.message });
    }
  }
  if (s.verificationEnabled) {
    if (!s.verificationType) issues.push({ field: "body.verification_type", message: "is required when verification is enabled (or pick a template)" });
    if (!s.hasSecret) issues.push({ field: "body.verification_secret", message: "is required when verification is enabled" });
  }
  if ((s.dedupStrategy === "header" || s.dedupStrategy === "field") && !s.dedupField) {
    issues.push({ field: "body.dedup_field", message: `is required with dedup_strategy ${s.dedupStrategy}` });
  }
  if (s.dedupStrategy === "field" && s.dedupField && s.dedupField.split(".").some((seg) => seg === "")) {
    issues.push({ field: "body.dedup_field", message: "must be a dot path such as data.id" });
  }
  if (s.schemaValidationEnabled && !s.jsonSchema) issues.push({ field: "body.json_schema", message: "is required when schema validation is enabled" });
  if (s.jsonSchema) {
    try {
      compileSchema(s.jsonSchema);
    } catch (err) {
      if (!(err instanceof InvalidSchemaError)) throw err;
      issues.push({ field: "body.json_schema", message: `is not a valid JSON Schema: ${err.message}` });
    }
  }
  return issues;
}

function throwIfIssues(issues: Issue[]) {
  if (issues.length > 0) throw new AppError("validation_error", "Invalid source settings", issues);
}


// ---------------------------------------------------------------- scope

/** org_id / env_id overrides may only name the caller's own organization and environment. */
async function targetEnv({ db }: Deps, scope: Scope, orgId?: string, envId?: string) {
  const org = orgId ?? scope.orgId;
  const env = envId ?? scope.envId;
  if (org !== scope.orgId || env !== scope.envId) return null;
  const [row] = await db.select({ id: environments.id }).from(environments).where(and(eq(environments.id, env), eq(environments.orgId, org))).limit(1);
  return row ? { orgId: org, envId: env } : null;
}

async function findRow({ db }: Deps, scope: Scope, rawId: string): Promise<SourceRow> {
  const id = normalizeId(rawId, "source", "Source");
  const [row] = await db
    .select()
    .from(sources)
    .where(and(eq(sources.id, id), inScope(sources, scope)))
    .limit(1);
  if (!row) throw notFound("Source");
  return row;
}

async function freeSlug({ db }: Deps, orgId: string, envId: string, base: string): Promise<string> {
  const taken = new Set(
    (
      await db
        .select({ slug: sources.slug })
        .from(sources)
        .where(and(eq(sources.orgId, orgId), eq(sources.envId, envId), or(eq(sources.slug, base), like(sources.slug, `${base}-%`))))
    ).map((r) => r.slug),
  );
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`;
}

// ---------------------------------------------------------------- use-cases

export async function createSource(deps: Deps, scope: Scope, raw: CreateSourceInput) {
  const input = parseOrThrow(createSourceInput, raw, "Invalid source settings");
  const target = await targetEnv(deps, scope, input.org_id, input.env_id);
  if (!target) throw notFound("Environment");
  const issues: Issue[] = [];

  const template = findTemplate(input.template);
  if (input.template && !template) issues.push({ field: "body.template", message: `unknown template; see GET /v1/sources/templates` });

  const verificationType = input.verification_type ?? template?.verification_type ?? null;
  const fromTemplate = template && (input.verification_type === undefined || input.verification_type === template.verification_type);
  const verificationHeader = input.verification_header !== undefined ? input.verification_header : fromTemplate ? template.verification_header : null;
  const verificationConfig =
    input.verification_config !== undefined
      ? jsonObjectText("verification_config", input.verification_config, issues)
      : fromTemplate
        ? JSON.stringify(template.verification_config)
        : null;
  const secret = input.verification_secret ?? null;
  const verificationEnabled = input.verification_enabled ?? Boolean(verificationType && secret);
  // A template naming the provider's delivery id turns dedup on: providers redeliver, and each copy would be delivered again.
  const dedupEnabled = input.dedup_enabled ?? templateDedupsByDefault(template);
  let dedupStrategy: DedupStrategy | null = input.dedup_strategy !== undefined ? input.dedup_strategy : (template?.dedup_strategy ?? null);
  const dedupField = input.dedup_field !== undefined ? input.dedup_field : input.dedup_strategy === undefined ? (template?.dedup_field ?? null) : null;
  if (dedupEnabled && !dedupStrategy) dedupStrategy = "body_hash";
  const jsonSchema = jsonObjectText("json_schema", input.json_schema, issues);
  const schemaValidationEnabled = input.schema_validation_enabled ?? false;
  const ipAllowlist = ipListText("ip_allowlist", input.ip_allowlist, issues);
  const ipDenylist = ipListText("ip_denylist", input.ip_denylist, issues);
  const sourceConfig = jsonObjectText("source_config", input.source_config, issues);
  throwIfIssues(issues);
  throwIfIssues(
    settingsIssues({
      verificationEnabled: verificationEnabled ? 1 : 0,
      verificationType,
      newSecret: secret,
      hasSecret: secret !== null,
      verificationHeader,
      verificationConfig,
      dedupEnabled: dedupEnabled ? 1 : 0,
      dedupStrategy,
      dedupField,
      schemaValidationEnabled: schemaValidationEnabled ? 1 : 0,
      jsonSchema,
    }),
  );

  const now = deps.clock.now();
  const isEphemeral = input.is_ephemeral ?? false;
  let expiresAt = input.expires_at ? iso(new Date(input.expires_at)) : null;
  if (isEphemeral && !expiresAt && !input.request_limit) expiresAt = iso(new Date(now.getTime() + DEFAULT_EPHEMERAL_TTL_MS));

  const explicitSlug = input.slug !== undefined;
  const slug = explicitSlug ? input.slug! : await freeSlug(deps, target.orgId, target.envId, slugify(input.name));
  const row: SourceRow = {
    id: newId("source"),
    orgId: target.orgId,
    envId: target.envId,
    slug,
    name: input.name,
    description: input.description ?? null,
    template: template?.id ?? null,
    verificationEnabled: verificationEnabled ? 1 : 0,
    verificationType,
    verificationSecret: secret === null ? null : deps.secrets.seal(secret),
    verificationHeader,
    verificationConfig,
    dedupEnabled: dedupEnabled ? 1 : 0,
    dedupStrategy,
    dedupField,
    dedupWindowSeconds: input.dedup_window_seconds ?? 3600,
    ipAllowlist,
    ipDenylist,
    status: input.status ?? "active",
    eventCount: 0,
    requestCount: 0,
    lastEventAt: null,
    isEphemeral: isEphemeral ? 1 : 0,
    expiresAt,
    requestLimit: input.request_limit ?? null,
    type: input.type ?? "webhook",
    sourceConfig,
    schemaValidationEnabled: schemaValidationEnabled ? 1 : 0,
    jsonSchema,
    schemaAction: input.schema_action ?? (schemaValidationEnabled || jsonSchema ? "reject" : null),
    createdAt: iso(now),
    updatedAt: iso(now),
  };
  try {
    await deps.db.insert(sources).values(row);
  } catch (err) {
    if (isUniqueViolation(err)) throw new AppError("conflict", `A source with slug "${slug}" already exists`);
    throw err;
  }
  return { source: serializeSource(deps, row) };
}

/** The sources of the caller's environment, newest first. */
export async function listSources(deps: Deps, scope: Scope, query: ListSourcesQuery = {}) {
  const target = await targetEnv(deps, scope, query.org_id, query.env_id);
  if (!target) return { sources: [] };
  const filters = [eq(sources.orgId, target.orgId), eq(sources.envId, target.envId)];
  if (query.status) filters.push(eq(sources.status, query.status));
  if (query.type) filters.push(eq(sources.type, query.type));
  const rows = await deps.db
    .select()
    .from(sources)
    .where(and(...filters))
    .orderBy(desc(sources.createdAt), desc(sources.id));
  return { sources: rows.map((r) => serializeSource(deps, r)) };
}

export async function getSource(deps: Deps, scope: Scope, id: string) {
  return { source: serializeSource(deps, await findRow(deps, scope, id)) };
}

/** The verification secret in full (responses only ever show it masked). */
export async function getSourceSecret(deps: Deps, scope: Scope, id: string) {
  const row = await findRow(deps, scope, id);
  if (row.verificationSecret === null) return { secret: null };
  const secret = openSecret(deps, row.verificationSecret);
  if (secret === null) throw new AppError("conflict", "The stored secret cannot be decrypted with the current HOOKRELAY_SECRET_KEY; set a new one");
  return { secret };
}

export async function updateSource(deps: Deps, scope: Scope, id: string, raw: UpdateSourceInput) {
  const input = parseOrThrow(updateSourceInput, raw, "Invalid source settings");
  const current = await findRow(deps, scope, id);
  const issues: Issue[] = [];
  const patch: Partial<SourceRow> = {};

  if (input.name !== undefined) patch.name = input.name;
  if (input.description !== undefined) patch.description = input.description;
  if (input.slug !== undefined) patch.slug = input.slug;

  // A template re-fills the verification settings and dedup key, unless the same request sets them.
  if (input.template !== undefined) {
    const template = findTemplate(input.template);
    if (input.template !== null && !template) issues.push({ field: "body.template", message: "unknown template; see GET /v1/sources/templates" });
    patch.template = template?.id ?? null;
    if (template) {
      patch.verificationType = template.verification_type;
      patch.verificationHeader = template.verification_header;
      patch.verificationConfig = JSON.stringify(template.verification_config);
      patch.dedupStrategy = template.dedup_strategy;
      patch.dedupField = template.dedup_field;
    }
  }
  if (input.verification_type !== undefined) {
    // Another scheme's config means nothing to this one.
    if (input.verification_type !== (patch.verificationType ?? current.verificationType) && input.verification_config === undefined) patch.verificationConfig = null;
    patch.verificationType = input.verification_type;
  }
  if (input.verification_header !== undefined) patch.verificationHeader = input.verification_header;
  if (input.verification_config !== undefined) patch.verificationConfig = jsonObjectText("verification_config", input.verification_config, issues);
  let newSecret: string | null = null;
  if (input.verification_secret !== undefined) {
    const currentPlain = openSecret(deps, current.verificationSecret);
    // A masked value sent back unchanged (a form round-trip) keeps the stored secret.
    const isEcho = input.verification_secret !== null && currentPlain !== null && input.verification_secret === maskSecret(currentPlain);
    if (!isEcho) {
      newSecret = input.verification_secret;
      patch.verificationSecret = newSecret === null ? null : deps.secrets.seal(newSecret);
    }
  }
  if (input.verification_enabled !== undefined) patch.verificationEnabled = input.verification_enabled ? 1 : 0;
  if (input.dedup_enabled !== undefined) patch.dedupEnabled = input.dedup_enabled ? 1 : 0;
  if (input.dedup_strategy !== undefined) patch.dedupStrategy = input.dedup_strategy;
  if (input.dedup_field !== undefined) patch.dedupField = input.dedup_field;
  if (input.dedup_window_seconds !== undefined) patch.dedupWindowSeconds = input.dedup_window_seconds;
  if (input.ip_allowlist !== undefined) patch.ipAllowlist = ipListText("ip_allowlist", input.ip_allowlist, issues);
  if (input.ip_denylist !== undefined) patch.ipDenylist = ipListText("ip_denylist", input.ip_denylist, issues);
  if (input.status !== undefined) patch.status = input.status;
  if (input.expires_at !== undefined) patch.expiresAt = input.expires_at === null ? null : iso(new Date(input.expires_at));
  if (input.request_limit !== undefined) patch.requestLimit = input.request_limit;
  if (input.source_config !== undefined) patch.sourceConfig = jsonObjectText("source_config", input.source_config, issues);
  if (input.schema_validation_enabled !== undefined) patch.schemaValidationEnabled = input.schema_validation_enabled ? 1 : 0;
  if (input.json_schema !== undefined) patch.jsonSchema = jsonObjectText("json_schema", input.json_schema, issues);
  if (input.schema_action !== undefined) patch.schemaAction = input.schema_action;
  throwIfIssues(issues);

  const next = { ...current, ...patch };
  if (next.dedupEnabled && !next.dedupStrategy) patch.dedupStrategy = next.dedupStrategy = "body_hash";
  if (next.schemaValidationEnabled && !next.schemaAction) patch.schemaAction = next.schemaAction = "reject";
  throwIfIssues(
    settingsIssues({
      verificationEnabled: next.verificationEnabled,
      verificationType: next.verificationType,
      newSecret,
      hasSecret: next.verificationSecret !== null,
      verificationHeader: next.verificationHeader,
      verificationConfig: next.verificationConfig,
      dedupEnabled: next.dedupEnabled,
      dedupStrategy: next.dedupStrategy,
      dedupField: next.dedupField,
      schemaValidationEnabled: next.schemaValidationEnabled,
      jsonSchema: next.jsonSchema,
    }),
  );

  patch.updatedAt = iso(deps.clock.now());
  let updated: SourceRow | undefined;
  try {
    [updated] = await deps.db.update(sources).set(patch).where(eq(sources.id, current.id)).returning();
  } catch (err) {
    if (isUniqueViolation(err)) throw new AppError("conflict", `A source with slug "${patch.slug}" already exists`);
    throw err;
  }
  if (!updated) throw notFound("Source");

  if (updated.status === "active" && current.status !== "active") await releaseHeldEvents(deps, updated.id);
  deps.bus.publish({ type: "source.updated", sourceId: updated.id });
  return { source: serializeSource(deps, updated) };
}

/**
 * Events held while the source was paused become pending again, unrouted,
 * so the delivery engine picks them up (it routes pending events whose
 * routed_at is NULL; the source.updated message wakes it).
 */
async function releaseHeldEvents({ db }: Deps, sourceId: string) {
  await db
    .update(events)
    .set({ status: "pending", routedAt: null })
    .where(and(eq(events.sourceId, sourceId), eq(events.status, "held")));
}

/** Deletes the source with its events and their attempts (foreign keys cascade). */
export async function deleteSource(deps: Deps, scope: Scope, id: string) {
  const row = await findRow(deps, scope, id);
  // Its events are applications' messages: they go with their applications.
  if (row.type === "outbound") throw new AppError("conflict", "This source holds the outbound messages of every application; delete applications instead");
  await deps.db.delete(sources).where(eq(sources.id, row.id));
  deps.bus.publish({ type: "source.updated", sourceId: row.id });
  return { success: true as const };
}
