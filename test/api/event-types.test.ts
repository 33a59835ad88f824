import { beforeAll, describe, expect, it } from "vitest";
import { AppError } from "../../src/contracts/errors";
import { validatePayloadForEventType } from "../../src/domain/eventTypes";
import { otherOrgKey, scopeOf, type TestScope } from "../helpers/rows";
import { call, type TestServer } from "../helpers/server";
import { useServer } from "../helpers/fixture";

let server: TestServer, key: string;
let scope: TestScope;

useServer({}, (s) => ({ server, key } = s));
beforeAll(async () => {
  scope = await scopeOf(server, key);
});

const customerSchema = { type: "object", required: ["id", "email"], properties: { id: { type: "string" }, email: { type: "string", format: "email" } } };

async function create(body: Record<string, unknown>) {
  const res = await call(server, "POST", "/v1/event-types", { key, body });
  if (res.status !== 201) throw new Error(`create event type: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.event_type as Record<string, any> & { id: string; name: string };
}

function expectValidation(res: { status: number; body: any }, field?: string) {
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe("validation_error");
  if (field) expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
}

describe("POST /v1/event-types", () => {
  it("creates an event type with the spec's fields, json_schema returned as a JSON string", async () => {
    const res = await call(server, "POST", "/v1/event-types", { key, body: { name: "customer.created", description: "A customer signed up", json_schema: customerSchema } });
    expect(res.status).toBe(201);
    const et = res.body.event_type;
    expect(et).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{32}$/),
      org_id: scope.orgId,
      env_id: scope.envId,
      name: "customer.created",
      description: "A customer signed up",
      json_schema: JSON.stringify(customerSchema),
      status: "active",
      created_at: et.created_at,
      updated_at: et.created_at,
    });
    // The JSON text a client got back is accepted again as it is.
    const echoed = await create({ name: "customer.echoed", json_schema: et.json_schema });
    expect(echoed.json_schema).toBe(JSON.stringify(customerSchema));
  });

  it("refuses a second event type of the same name in the environment with 409; another organization may use it", async () => {
    await create({ name: "order.shipped" });
    const again = await call(server, "POST", "/v1/event-types", { key, body: { name: "order.shipped" } });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("conflict");
    const other = await otherOrgKey(server);
    expect((await call(server, "POST", "/v1/event-types", { key: other, body: { name: "order.shipped" } })).status).toBe(201);
  });

  it("refuses an invalid JSON Schema with 400 carrying ajv's message", async () => {
    const res = await call(server, "POST", "/v1/event-types", { key, body: { name: "bad.schema", json_schema: { type: "object", properties: { a: { minLength: "three" } } } } });
    expectValidation(res, "body.json_schema");
    expect(res.body.error.details[0].message).toContain("must be integer");
    expectValidation(await call(server, "POST", "/v1/event-types", { key, body: { name: "bad.schema", json_schema: "not json" } }), "body.json_schema");
  });

  it("answers bad input with 400, never 500", async () => {
    for (const body of [{}, { name: "" }, { name: "has space" }, { name: ["a"] }, { name: "x", status: "gone" }, { name: "x", json_schema: 5 }, "null", "{"]) {
      const res = await call(server, "POST", "/v1/event-types", { key, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
  });
});

describe("GET /v1/event-types and /v1/event-types/{id}", () => {
  it("lists {event_types} newest first and filters by status", async () => {
    const a = await create({ name: "list.a" });
    const b = await create({ name: "list.b", status: "deprecated" });
    const all = await call(server, "GET", "/v1/event-types", { key });
    expect(all.status).toBe(200);
    const names = all.body.event_types.map((e: { name: string }) => e.name);
    expect(names.indexOf(b.name)).toBeLessThan(names.indexOf(a.name));
    const deprecated = await call(server, "GET", "/v1/event-types?status=deprecated", { key });
    expect(deprecated.body.event_types.map((e: { name: string }) => e.name)).toContain("list.b");
    expect(deprecated.body.event_types.map((e: { name: string }) => e.name)).not.toContain("list.a");
    expectValidation(await call(server, "GET", "/v1/event-types?status=nope", { key }));
  });

  it("gets one by id or by name; 404 for unknown ones and for another organization's", async () => {
    const et = await create({ name: "lookup.by-name" });
    expect((await call(server, "GET", `/v1/event-types/${et.id}`, { key })).body.event_type).toEqual(et);
    expect((await call(server, "GET", `/v1/event-types/lookup.by-name`, { key })).body.event_type).toEqual(et);
    expect((await call(server, "GET", `/v1/event-types/${"c".repeat(32)}`, { key })).status).toBe(404);
    expect((await call(server, "GET", `/v1/event-types/no.such.type`, { key })).status).toBe(404);
    const other = await otherOrgKey(server);
    expect((await call(server, "GET", `/v1/event-types/${et.id}`, { key: other })).status).toBe(404);
  });
});

describe("PATCH /v1/event-types/{id}", () => {
  it("updates description, schema and status; checks the schema; a rename onto a taken name is 409", async () => {
    const et = await create({ name: "patch.me" });
    const res = await call(server, "PATCH", `/v1/event-types/${et.id}`, { key, body: { description: "d", json_schema: customerSchema, status: "deprecated" } });
    expect(res.status).toBe(200);
    expect(res.body.event_type).toMatchObject({ name: "patch.me", description: "d", json_schema: JSON.stringify(customerSchema), status: "deprecated" });
    expectValidation(await call(server, "PATCH", `/v1/event-types/${et.id}`, { key, body: { json_schema: { required: "id" } } }), "body.json_schema");
    expectValidation(await call(server, "PATCH", `/v1/event-types/${et.id}`, { key, body: { status: "archived" } }), "body.status");
    await create({ name: "patch.taken" });
    expect((await call(server, "PATCH", `/v1/event-types/${et.id}`, { key, body: { name: "patch.taken" } })).status).toBe(409);
    expect((await call(server, "PATCH", `/v1/event-types/${et.id}`, { key, body: { name: "patch.renamed" } })).body.event_type.name).toBe("patch.renamed");
    expect((await call(server, "PATCH", `/v1/event-types/${"d".repeat(32)}`, { key, body: { description: "x" } })).status).toBe(404);
  });
});

describe("DELETE /v1/event-types/{id}", () => {
  it("deletes; the name is free again; 404 afterwards", async () => {
    const et = await create({ name: "delete.me" });
    expect((await call(server, "DELETE", `/v1/event-types/${et.id}`, { key })).body).toEqual({ success: true });
    expect((await call(server, "GET", `/v1/event-types/${et.id}`, { key })).status).toBe(404);
    expect((await call(server, "DELETE", `/v1/event-types/${et.id}`, { key })).status).toBe(404);
    await create({ name: "delete.me" });
  });
});

describe("validatePayloadForEventType (what outbound messages are checked with)", () => {
  it("throws 422 schema_violation with the errors when the named event type's schema rejects the payload", async () => {
    await create({ name: "customer.updated", json_schema: customerSchema });
    const err = await validatePayloadForEventType(server.deps, scope, "customer.updated", { id: 1 }).catch((e) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err.status).toBe(422);
    expect(err.code).toBe("schema_violation");
    expect(err.details.errors.map((e: { path: string; message: string }) => `${e.path} ${e.message}`)).toEqual(expect.arrayContaining(["/id must be string", " must have required property 'email'"]));
    const badEmail = await validatePayloadForEventType(server.deps, scope, "customer.updated", { id: "c", email: "nope" }).catch((e) => e);
    expect(badEmail.code).toBe("schema_violation");
  });

  it("accepts a valid payload, a type without a schema, an unknown type, and never looks into another scope", async () => {
    await expect(validatePayloadForEventType(server.deps, scope, "customer.updated", { id: "c", email: "a@b.example" })).resolves.toBeUndefined();
    await create({ name: "free.form" });
    await expect(validatePayloadForEventType(server.deps, scope, "free.form", "anything")).resolves.toBeUndefined();
    await expect(validatePayloadForEventType(server.deps, scope, "not.defined", 1)).resolves.toBeUndefined();
    await expect(validatePayloadForEventType(server.deps, { orgId: "x", envId: "y" }, "customer.updated", {})).resolves.toBeUndefined();
  });
});
