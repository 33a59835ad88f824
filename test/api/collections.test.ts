import { beforeAll, describe, expect, it } from "vitest";
import { createSourceId } from "../helpers/delivery";
import { otherOrgKey, scopeOf, type TestScope } from "../helpers/rows";
import { call, type TestServer } from "../helpers/server";
import { useServer } from "../helpers/fixture";
import { createCollection } from "../catalog/helpers";

let server: TestServer, key: string;
let scope: TestScope;
let source: string;

useServer({}, (s) => ({ server, key } = s));
beforeAll(async () => {
  scope = await scopeOf(server, key);
  source = await createSourceId(server, key, { name: "Stripe" });
});

function expectValidation(res: { status: number; body: any }, field?: string) {
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe("validation_error");
  if (field) expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
}

describe("POST /v1/collections", () => {
  it("creates a collection with the fields of docs/decisions.md D11 and its builder's state", async () => {
    const res = await call(server, "POST", "/v1/collections", {
      key,
      body: {
        name: "Customers",
        description: "current state of Stripe customers",
        source_id: source,
        event_types: ["customer.created", "customer.updated"],
        key_path: "data.object.id",
        transform_expression: "data.object",
        delete_event_types: ["customer.deleted"],
      },
    });
    expect(res.status).toBe(201);
    const c = res.body.collection;
    expect(c).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{32}$/),
      org_id: scope.orgId,
      env_id: scope.envId,
      name: "Customers",
      description: "current state of Stripe customers",
      source_id: source,
      source_name: "Stripe",
      event_types: '["customer.created","customer.updated"]',
      event_type_path: "type",
      key_path: "data.object.id",
      transform_expression: "data.object",
      delete_event_types: '["customer.deleted"]',
      record_count: 0,
      build_status: "live",
      position_event_id: null,
      position_at: null,
      events_pending: 0,
      events_processed: 0,
      events_ignored: 0,
      events_missing_key: 0,
      events_transform_failed: 0,
      last_error: null,
      last_error_event_id: null,
      last_error_at: null,
      backfill_total: 0,
      backfill_processed: 0,
      backfill_completed_at: c.created_at,
      created_at: c.created_at,
      updated_at: c.created_at,
    });
  });

  it("needs only source_id and key_path; accepts types as JSON text and key paths with [n]", async () => {
    const c = await createCollection(server, key, { source_id: source.replace(/^src_/, ""), key_path: "items[0].id", event_types: '["a"]' });
    expect(c).toMatchObject({ name: "Stripe by items.0.id", key_path: "items.0.id", event_types: '["a"]', event_type_path: "type", transform_expression: null, delete_event_types: null });
  });

  it("answers 404 for an unknown source or another organization's, and 400 for a bad transform with JSONata's message", async () => {
    expect((await call(server, "POST", "/v1/collections", { key, body: { source_id: "src_" + "0".repeat(32), key_path: "id" } })).status).toBe(404);
    const other = await otherOrgKey(server);
    expect((await call(server, "POST", "/v1/collections", { key: other, body: { source_id: source, key_path: "id" } })).status).toBe(404);
    const bad = await call(server, "POST", "/v1/collections", { key, body: { source_id: source, key_path: "id", transform_expression: "{ unclosed" } });
    expectValidation(bad, "body.transform_expression");
    expect(bad.body.error.message).toMatch(/Invalid JSONata expression/);
  });

  it("answers bad input with 400, never 500", async () => {
    const bodies: unknown[] = [
      {},
      { source_id: source },
      { key_path: "id" },
      { source_id: source, key_path: "" },
      { source_id: source, key_path: "a..b" },
      { source_id: source, key_path: 5 },
      { source_id: source, key_path: "id", event_types: "not json" },
      { source_id: source, key_path: "id", event_types: [1] },
      { source_id: source, key_path: "id", delete_event_types: {} },
      { source_id: source, key_path: "id", event_type_path: "." },
      { source_id: source, key_path: "id", name: "" },
      { source_id: source, key_path: "id", transform_expression: 7 },
      "[]",
      "{",
    ];
    for (const body of bodies) {
      const res = await call(server, "POST", "/v1/collections", { key, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
  });
});

describe("GET /v1/collections and /v1/collections/{id}", () => {
  it("lists newest first, filters by source, hides other organizations' collections", async () => {
    const other = await createSourceId(server, key);
    const a = await createCollection(server, key, { source_id: source, key_path: "id" });
    const b = await createCollection(server, key, { source_id: other, key_path: "id" });
    const all = await call(server, "GET", "/v1/collections", { key });
    const ids = all.body.collections.map((c: { id: string }) => c.id);
    expect(ids.indexOf(b.id)).toBeLessThan(ids.indexOf(a.id));
    const bySource = await call(server, "GET", `/v1/collections?source_id=${other}`, { key });
    expect(bySource.body.collections.map((c: { id: string }) => c.id)).toEqual([b.id]);
    expect((await call(server, "GET", `/v1/collections?source_id=nonsense`, { key })).body.collections).toEqual([]);
    const otherKey = await otherOrgKey(server);
    expect((await call(server, "GET", "/v1/collections", { key: otherKey })).body.collections).toEqual([]);
    expect((await call(server, "GET", `/v1/collections/${a.id}`, { key: otherKey })).status).toBe(404);
    expect((await call(server, "GET", `/v1/collections/${a.id}/records`, { key: otherKey })).status).toBe(404);
  });

  it("gets one; 404 for unknown ids of any shape", async () => {
    const c = await createCollection(server, key, { source_id: source, key_path: "id" });
    expect((await call(server, "GET", `/v1/collections/${c.id}`, { key })).body.collection).toEqual(c);
    for (const id of ["f".repeat(32), "x", "%00"]) expect((await call(server, "GET", `/v1/collections/${id}`, { key })).status, id).toBe(404);
  });
});

describe("PATCH /v1/collections/{id}", () => {
  it("updates fields, checks them like create, 404 for an unknown collection", async () => {
    const c = await createCollection(server, key, { source_id: source, key_path: "id" });
    const res = await call(server, "PATCH", `/v1/collections/${c.id}`, { key, body: { name: "New name", description: null, event_types: ["x.y"], delete_event_types: null, transform_expression: "$" } });
    expect(res.status).toBe(200);
    expect(res.body.collection).toMatchObject({ name: "New name", description: null, event_types: '["x.y"]', delete_event_types: null, transform_expression: "$" });
    expectValidation(await call(server, "PATCH", `/v1/collections/${c.id}`, { key, body: { transform_expression: "(" } }), "body.transform_expression");
    expectValidation(await call(server, "PATCH", `/v1/collections/${c.id}`, { key, body: { key_path: "" } }), "body.key_path");
    expect((await call(server, "PATCH", `/v1/collections/${c.id}`, { key, body: { source_id: "src_" + "1".repeat(32) } })).status).toBe(404);
    expect((await call(server, "PATCH", `/v1/collections/${"1".repeat(32)}`, { key, body: { name: "x" } })).status).toBe(404);
    // A transform set to "" or null is cleared.
    expect((await call(server, "PATCH", `/v1/collections/${c.id}`, { key, body: { transform_expression: "" } })).body.collection.transform_expression).toBeNull();
  });
});

describe("DELETE /v1/collections/{id}", () => {
  it("deletes the collection; it and its records answer 404 afterwards", async () => {
    const c = await createCollection(server, key, { source_id: source, key_path: "id" });
    expect((await call(server, "DELETE", `/v1/collections/${c.id}`, { key })).body).toEqual({ success: true });
    expect((await call(server, "GET", `/v1/collections/${c.id}`, { key })).status).toBe(404);
    expect((await call(server, "GET", `/v1/collections/${c.id}/records`, { key })).status).toBe(404);
    expect((await call(server, "DELETE", `/v1/collections/${c.id}`, { key })).status).toBe(404);
  });

  it("goes with its source", async () => {
    const s = await createSourceId(server, key);
    const c = await createCollection(server, key, { source_id: s, key_path: "id" });
    expect((await call(server, "DELETE", `/v1/sources/${s}`, { key })).status).toBe(200);
    expect((await call(server, "GET", `/v1/collections/${c.id}`, { key })).status).toBe(404);
  });
});

describe("OpenAPI", () => {
  it("documents the topic, event type and collection routes", async () => {
    const doc = await call(server, "GET", "/v1/openapi.json", { key });
    const paths = Object.keys(doc.body.paths);
    for (const p of [
      "/topics",
      "/topics/{id}",
      "/topics/{id}/publish",
      "/event-types",
      "/event-types/{id}",
      "/collections",
      "/collections/{id}",
      "/collections/{id}/records",
      "/collections/{id}/records/{key}",
      "/collections/{id}/records/{key}/changelog",
    ]) {
      expect(paths, p).toContain(p);
    }
  });
});
