import { isUniqueViolation } from "../db/errors";
import { and, desc, eq, or } from "drizzle-orm";
import { eventTypes } from "../db/schema";
import { AppError, notFound, parseOrThrow } from "../contracts/errors";
import type { CreateEventTypeInput, EventTypeDto, ListEventTypesQuery, UpdateEventTypeInput } from "../contracts/eventTypes";
import { createEventTypeInput, updateEventTypeInput } from "../contracts/eventTypes";
import { hex32 } from "../contracts/ids";
// A pure leaf shared with ingest: a schema accepted here is compiled by exactly the code that later checks payloads.
import { compileSchema, InvalidSchemaError, type SchemaError } from "../rules/schemaCheck";
import { iso } from "../core/clock";
import { transaction } from "../db/transaction";
import { recordAudit } from "./audit";
import type { Deps, Scope } from "./deps";
import { createScope, inScope } from "./scope";

type EventTypeRow = typeof eventTypes.$inferSelect;

// ---------------------------------------------------------------- JSON Schemas (shared with topics)

/**
 * A JSON Schema given as an object or its JSON text → its JSON text, or a
 * 400 naming `field` with ajv's own message when it is not a valid schema.
 */
export function schemaText(field: string, value: unknown): string | null {
  if (value === null || value === undefined) return null;
  let schema = value;
  if (typeof schema === "string") {
    try {
      schema = JSON.parse(schema);
    } catch {
      throw invalid(field, "must be a JSON object (or its JSON text)");
    }
  }
  if (!schema || typeof schema !== "object" || Array.isArray(schema)) throw invalid(field, "must be a JSON object");
  const text = JSON.stringify(schema);
  try {
    compileSchema(text);
  } catch (err) {
    if (err instanceof InvalidSchemaError) throw invalid(field, `is not a valid JSON Schema: ${err.message}`);
    throw err;
  }
  return text;
}

function invalid(field: string, message: string) {
  return new AppError("validation_error", `Invalid ${field}: ${message}`, [{ field: `body.${field}`, message }]);
}

/** A JSON value's violations of a stored schema, as ingest reports them; null when it is valid. */
export function payloadErrors(schema: string, payload: unknown): SchemaError[] | null {
  const validate = compileSchema(schema);
  if (validate(payload)) return null;
  return (validate.errors ?? []).slice(0, 50).map((e) => ({
    path: e.instancePath,
    message: `${e.message ?? "is invalid"}${e.params && "allowedValues" in e.params ? `: ${JSON.stringify(e.params.allowedValues)}` : ""}`,
  }));
}

// ---------------------------------------------------------------- event types

export function serializeEventType(row: EventTypeRow): EventTypeDto {
  return {
    id: row.id,
    org_id: row.orgId,
    env_id: row.envId,
    name: row.name,
    description: row.description,
    json_schema: row.jsonSchema,
    status: row.status,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}


/** `{id}` is the id or the name (names are what clients know; ids what lists return). */
async function findRow({ db }: Deps, scope: Scope, idOrName: string): Promise<EventTypeRow> {
  const byId = /^[0-9a-f]{32}$/.test(idOrName) ? eq(eventTypes.id, idOrName) : undefined;
  const rows = await db
    .select()
    .from(eventTypes)
    .where(inScope(eventTypes, scope, byId ? or(byId, eq(eventTypes.name, idOrName)) : eq(eventTypes.name, idOrName)))
    .limit(2);
  const row = rows.find((r) => r.id === idOrName) ?? rows[0];
  if (!row) throw notFound("Event type");
  return row;
}

function conflict(name: string) {
  return new AppError("conflict", `An event type named "${name}" already exists`, [{ field: "body.name", message: "must be unique in the environment" }]);
}

export async function createEventType(deps: Deps, scope: Scope, raw: CreateEventTypeInput) {
  const input = parseOrThrow(createEventTypeInput, raw, "Invalid event type");
  const { orgId, envId } = createScope(scope, input);
  const now = iso(deps.clock.now());
  const row: EventTypeRow = {
    id: hex32(),
    orgId,
    envId,
    name: input.name,
    description: input.description ?? null,
    jsonSchema: schemaText("json_schema", input.json_schema),
    status: input.status ?? "active",
    createdAt: now,
    updatedAt: now,
  };
  await transaction(deps.db, async () => {
    try {
      await deps.db.insert(eventTypes).values(row);
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict(row.name);
      throw err;
    }
    await recordAudit(deps, scope, { action: "create", resourceType: "event_type", resourceId: row.id, after: serializeEventType(row), envId: row.envId });
  });
  return { event_type: serializeEventType(row) };
}

/** The caller's event types, newest first. */
export async function listEventTypes(deps: Deps, scope: Scope, query: ListEventTypesQuery = {}) {
  if ((query.org_id && query.org_id !== scope.orgId) || (query.env_id && query.env_id !== scope.envId)) return { event_types: [] };
  const rows = await deps.db
    .select()
    .from(eventTypes)
    .where(inScope(eventTypes, scope, query.status ? eq(eventTypes.status, query.status) : undefined))
    .orderBy(desc(eventTypes.createdAt), desc(eventTypes.id));
  return { event_types: rows.map(serializeEventType) };
}

export async function getEventType(deps: Deps, scope: Scope, idOrName: string) {
  return { event_type: serializeEventType(await findRow(deps, scope, idOrName)) };
}

export async function updateEventType(deps: Deps, scope: Scope, idOrName: string, raw: UpdateEventTypeInput) {
  return transaction(deps.db, () => updateEventTypeIn(deps, scope, idOrName, raw));
}

async function updateEventTypeIn(deps: Deps, scope: Scope, idOrName: string, raw: UpdateEventTypeInput) {
  const input = parseOrThrow(updateEventTypeInput, raw, "Invalid event type");
  const current = await findRow(deps, scope, idOrName);
  const patch: Partial<EventTypeRow> = {};
  if (input.name !== undefined) patch.name = input.name;
  if (input.description !== undefined) patch.description = input.description;
  if (input.json_schema !== undefined) patch.jsonSchema = schemaText("json_schema", input.json_schema);
  if (input.status !== undefined) patch.status = input.status;
  patch.updatedAt = iso(deps.clock.now());
  let updated: EventTypeRow | undefined;
  try {
    [updated] = await deps.db.update(eventTypes).set(patch).where(inScope(eventTypes, scope, eq(eventTypes.id, current.id))).returning();
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(patch.name ?? current.name);
    throw err;
  }
  if (!updated) throw notFound("Event type");
  await recordAudit(deps, scope, { action: "update", resourceType: "event_type", resourceId: current.id, before: serializeEventType(current), after: serializeEventType(updated) });
  return { event_type: serializeEventType(updated) };
}

export async function deleteEventType(deps: Deps, scope: Scope, idOrName: string) {
  await transaction(deps.db, async () => {
    const row = await findRow(deps, scope, idOrName);
    await deps.db.delete(eventTypes).where(inScope(eventTypes, scope, eq(eventTypes.id, row.id)));
    await recordAudit(deps, scope, { action: "delete", resourceType: "event_type", resourceId: row.id, before: serializeEventType(row) });
  });
  return { success: true as const };
}

/**
 * The check outbound messages (and topic publishes) make: when the caller's
 * environment has an event type of this name with a json_schema, a payload
 * that violates it is a 422 `schema_violation` listing the errors. A name
 * with no event type, or one without a schema, accepts any payload.
 */
export async function validatePayloadForEventType(deps: Pick<Deps, "db">, scope: Pick<Scope, "orgId" | "envId">, name: string, payload: unknown): Promise<void> {
  const [row] = await deps.db
    .select({ jsonSchema: eventTypes.jsonSchema })
    .from(eventTypes)
    .where(and(inScope(eventTypes, scope), eq(eventTypes.name, name)))
    .limit(1);
  if (!row?.jsonSchema) return;
  const errors = payloadErrors(row.jsonSchema, payload);
  if (errors) throw new AppError("schema_violation", `Payload does not match the JSON Schema of event type "${name}"`, { event_type: name, errors });
}
