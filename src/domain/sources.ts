import { inScope } from "./scope";
import { isUniqueViolation } from "../db/errors";
import { and, desc, eq } from "drizzle-orm";
import { events, sources } from "../db/schema";
import { environments } from "../db/schema/tenancy";
import { AppError, notFound, parseOrThrow } from "../contracts/errors";
import { newId, normalizeId } from "../contracts/ids";
import type { CreateSourceInput, DedupStrategy, ListSourcesQuery, UpdateSourceInput } from "../contracts/sources";
import { createSourceInput, updateSourceInput } from "../contracts/sources";
import { findTemplate, templateDedupsByDefault, templates } from "../rules/templates";
import { iso } from "../core/clock";
import { transaction } from "../db/transaction";
import { recordAudit } from "./audit";
import type { Deps, Scope } from "./deps";
import { freeSourceSlug, slugify } from "./slugs";
import { maskSecret, openSecret, serializeSource } from "./sourceSerializer";
import { ipListText, jsonObjectText, settingsIssues, throwIfIssues, type Issue } from "./sourceSettings";

/** Sources: CRUD and templates; their settings are checked in sourceSettings.ts, shown by sourceSerializer.ts. */

type SourceRow = typeof sources.$inferSelect;

/** Ephemeral sources without expires_at or request_limit live this long. */
export const DEFAULT_EPHEMERAL_TTL_MS = 24 * 3600 * 1000;

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
  const slug = explicitSlug ? input.slug! : await freeSourceSlug(deps.db, target.orgId, target.envId, slugify(input.name, "source"));
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
  const source = serializeSource(deps, row);
  await transaction(deps.db, async () => {
    try {
      await deps.db.insert(sources).values(row);
    } catch (err) {
      if (isUniqueViolation(err)) throw new AppError("conflict", `A source with slug "${slug}" already exists`);
      throw err;
    }
    await recordAudit(deps, scope, { action: "create", resourceType: "source", resourceId: row.id, after: source, envId: row.envId });
  });
  return { source };
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
  return transaction(deps.db, () => updateSourceIn(deps, scope, id, input));
}

async function updateSourceIn(deps: Deps, scope: Scope, id: string, input: UpdateSourceInput) {
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
  const source = serializeSource(deps, updated);
  await recordAudit(deps, scope, { action: "update", resourceType: "source", resourceId: updated.id, before: serializeSource(deps, current), after: source });
  return { source };
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
  await transaction(deps.db, async () => {
    await deps.db.delete(sources).where(eq(sources.id, row.id));
    await recordAudit(deps, scope, { action: "delete", resourceType: "source", resourceId: row.id, before: serializeSource(deps, row) });
  });
  deps.bus.publish({ type: "source.updated", sourceId: row.id });
  return { success: true as const };
}
