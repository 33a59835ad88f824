import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createConnection, createDestination, waitFor } from "../helpers/delivery";
import { getEvent } from "../helpers/ingest";
import { otherOrgKey, scopeOf, type TestScope } from "../helpers/rows";
import { call, type TestServer } from "../helpers/server";
import { startSink, type Sink } from "../helpers/sink";
import { useServer } from "../helpers/fixture";

let server: TestServer, key: string;
let scope: TestScope;
let sink: Sink;

useServer({}, (s) => ({ server, key } = s));
beforeAll(async () => {
  scope = await scopeOf(server, key);
  sink = startSink();
});
afterAll(async () => {
  sink.close();
});

const orderSchema = { type: "object", required: ["id", "amount"], properties: { id: { type: "string" }, amount: { type: "integer", minimum: 0 } } };

async function createTopic(body: Record<string, unknown>) {
  const res = await call(server, "POST", "/v1/topics", { key, body });
  if (res.status !== 201) throw new Error(`create topic: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.topic as Record<string, any> & { id: string; slug: string; source_id: string };
}

function expectValidation(res: { status: number; body: any }, field?: string) {
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe("validation_error");
  if (field) expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
}

describe("POST /v1/topics", () => {
  it("creates a topic with the spec's fields, its schema returned as a JSON string", async () => {
    const res = await call(server, "POST", "/v1/topics", { key, body: { name: "Orders", description: "order lifecycle", schema: orderSchema } });
    expect(res.status).toBe(201);
    const t = res.body.topic;
    expect(t).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{32}$/),
      org_id: scope.orgId,
      env_id: scope.envId,
      name: "Orders",
      slug: "orders",
      description: "order lifecycle",
      schema: JSON.stringify(orderSchema),
      status: "active",
      source_id: expect.stringMatching(/^src_[0-9a-f]{32}$/),
      created_at: t.created_at,
      updated_at: t.created_at,
    });
  });

  it("creates the topic's own source, listed among the sources with type topic", async () => {
    const t = await createTopic({ name: "Invoices" });
    const list = await call(server, "GET", "/v1/sources?type=topic", { key });
    const source = list.body.sources.find((s: { id: string }) => s.id === t.source_id);
    expect(source).toMatchObject({ type: "topic", name: "Invoices", slug: "topic-invoices", status: "active" });
    const one = await call(server, "GET", `/v1/sources/${t.source_id}`, { key });
    expect(one.body.source.type).toBe("topic");
  });

  it("refuses an invalid JSON Schema with 400 and ajv's message", async () => {
    const res = await call(server, "POST", "/v1/topics", { key, body: { name: "Bad", schema: { type: "objekt" } } });
    expectValidation(res, "body.schema");
    expect(res.body.error.details[0].message).toMatch(/not a valid JSON Schema: .*type/);
    expectValidation(await call(server, "POST", "/v1/topics", { key, body: { name: "Bad", schema: "{not json" } }), "body.schema");
    expectValidation(await call(server, "POST", "/v1/topics", { key, body: { name: "Bad", schema: [1, 2] } }), "body.schema");
  });

  it("refuses a slug already taken in the environment with 409", async () => {
    await createTopic({ name: "Shipments" });
    const again = await call(server, "POST", "/v1/topics", { key, body: { name: "shipments" } });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("conflict");
    const explicit = await call(server, "POST", "/v1/topics", { key, body: { name: "Other", slug: "shipments" } });
    expect(explicit.status).toBe(409);
  });

  it("answers bad input with 400, never 500", async () => {
    for (const body of [{}, { name: "" }, { name: 5 }, { name: "x", status: "archived" }, { name: "x", slug: "Not A Slug!" }, { name: "x", description: 3 }, "[]", "{"]) {
      const res = await call(server, "POST", "/v1/topics", { key, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
  });
});

describe("GET /v1/topics and /v1/topics/{id}", () => {
  it("lists the environment's topics newest first, never another organization's", async () => {
    const a = await createTopic({ name: "List A" });
    const b = await createTopic({ name: "List B" });
    const res = await call(server, "GET", "/v1/topics", { key });
    expect(res.status).toBe(200);
    const ids = res.body.topics.map((t: { id: string }) => t.id);
    expect(ids.indexOf(b.id)).toBeLessThan(ids.indexOf(a.id));
    const other = await otherOrgKey(server);
    expect((await call(server, "GET", "/v1/topics", { key: other })).body.topics).toEqual([]);
    expect((await call(server, "GET", `/v1/topics/${a.id}`, { key: other })).status).toBe(404);
    expect((await call(server, "GET", `/v1/topics?env_id=elsewhere`, { key })).body.topics).toEqual([]);
  });

  it("gets a topic by id or by slug; 404 for an unknown one", async () => {
    const t = await createTopic({ name: "Lookup" });
    expect((await call(server, "GET", `/v1/topics/${t.id}`, { key })).body.topic).toEqual(t);
    expect((await call(server, "GET", `/v1/topics/lookup`, { key })).body.topic).toEqual(t);
    for (const id of ["0".repeat(32), "nope", "%00"]) {
      const res = await call(server, "GET", `/v1/topics/${id}`, { key });
      expect(res.status, id).toBe(404);
      expect(res.body.error.code).toBe("not_found");
    }
  });
});

describe("PATCH /v1/topics/{id}", () => {
  it("pauses and resumes; any other status is a 400", async () => {
    const t = await createTopic({ name: "Toggle" });
    const paused = await call(server, "PATCH", `/v1/topics/${t.id}`, { key, body: { status: "paused" } });
    expect(paused.status).toBe(200);
    expect(paused.body.topic.status).toBe("paused");
    expect((await call(server, "PATCH", `/v1/topics/${t.id}`, { key, body: { status: "active" } })).body.topic.status).toBe("active");
    expectValidation(await call(server, "PATCH", `/v1/topics/${t.id}`, { key, body: { status: "disabled" } }), "body.status");
  });

  it("changes name, description and schema; a rename renames its source; null clears the schema", async () => {
    const t = await createTopic({ name: "Before", schema: orderSchema });
    const res = await call(server, "PATCH", `/v1/topics/${t.id}`, { key, body: { name: "After", description: "d", schema: { type: "object" } } });
    expect(res.status).toBe(200);
    expect(res.body.topic).toMatchObject({ name: "After", description: "d", schema: '{"type":"object"}', slug: "before" });
    expect((await call(server, "GET", `/v1/sources/${t.source_id}`, { key })).body.source.name).toBe("After");
    expect((await call(server, "PATCH", `/v1/topics/${t.id}`, { key, body: { schema: null } })).body.topic.schema).toBeNull();
    expectValidation(await call(server, "PATCH", `/v1/topics/${t.id}`, { key, body: { schema: { type: 12 } } }), "body.schema");
  });

  it("answers 404 for an unknown topic and 409 for a taken slug", async () => {
    expect((await call(server, "PATCH", `/v1/topics/${"a".repeat(32)}`, { key, body: { name: "x" } })).status).toBe(404);
    await createTopic({ name: "Taken slug" });
    const t = await createTopic({ name: "Wants slug" });
    expect((await call(server, "PATCH", `/v1/topics/${t.id}`, { key, body: { slug: "taken-slug" } })).status).toBe(409);
  });
});

describe("DELETE /v1/topics/{id}", () => {
  it("deletes the topic with its source; 404 afterwards", async () => {
    const t = await createTopic({ name: "Doomed" });
    const res = await call(server, "DELETE", `/v1/topics/${t.id}`, { key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true });
    expect((await call(server, "GET", `/v1/topics/${t.id}`, { key })).status).toBe(404);
    expect((await call(server, "GET", `/v1/sources/${t.source_id}`, { key })).status).toBe(404);
    expect((await call(server, "DELETE", `/v1/topics/${t.id}`, { key })).status).toBe(404);
  });
});

describe("POST /v1/topics/{id}/publish", () => {
  it("stores the payload as an event on the topic's source and delivers it through a connection to a sink", async () => {
    const t = await createTopic({ name: "Deliveries", schema: orderSchema });
    const destination = await createDestination(server, key, { url: `${sink.url}/orders` });
    await createConnection(server, key, { source_id: t.source_id, destination_id: destination });
    const payload = { id: "ord_1", amount: 4200 };
    const res = await call(server, "POST", `/v1/topics/${t.id}/publish`, { key, body: { event_type: "order.created", payload } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, event_id: expect.stringMatching(/^evt_[0-9a-f]{32}$/) });

    const [delivered] = await sink.waitFor(1);
    expect(delivered!.path).toBe("/orders");
    expect(JSON.parse(delivered!.body)).toEqual(payload);
    expect(delivered!.headers["x-hookrelay-event-id"]).toBe(res.body.event_id);
    expect(delivered!.headers["x-topic"]).toBe("deliveries");
    expect(delivered!.headers["x-event-type"]).toBe("order.created");

    const event = await getEvent(server, key, res.body.event_id);
    expect(event).toMatchObject({ source_id: t.source_id, method: "POST", body: JSON.stringify(payload) });
    await waitFor(async () => (await getEvent(server, key, res.body.event_id)).status === "delivered", { what: "event delivered" });
    const listed = await call(server, "GET", `/v1/events?source_id=${t.source_id}`, { key });
    expect(listed.body.events[0]).toMatchObject({ id: res.body.event_id, event_type: "order.created", source_name: "Deliveries" });
  });

  it("publishes by slug, without an event type, any JSON value", async () => {
    const t = await createTopic({ name: "Anything" });
    for (const payload of ["text", 42, [1, 2], null, { nested: { a: 1 } }]) {
      const res = await call(server, "POST", `/v1/topics/${t.slug}/publish`, { key, body: { payload } });
      expect(res.status, JSON.stringify(payload)).toBe(200);
      expect((await getEvent(server, key, res.body.event_id)).body).toBe(JSON.stringify(payload));
    }
  });

  it("refuses a payload that violates the topic's schema with 422 schema_violation and the errors; nothing is stored", async () => {
    const t = await createTopic({ name: "Strict", schema: orderSchema });
    const res = await call(server, "POST", `/v1/topics/${t.id}/publish`, { key, body: { payload: { id: 7, amount: -1 } } });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe("schema_violation");
    const paths = res.body.error.details.errors.map((e: { path: string }) => e.path);
    expect(paths).toEqual(expect.arrayContaining(["/id", "/amount"]));
    const missing = await call(server, "POST", `/v1/topics/${t.id}/publish`, { key, body: { payload: { id: "x" } } });
    expect(missing.status).toBe(422);
    expect((await call(server, "GET", `/v1/events?source_id=${t.source_id}`, { key })).body.pagination.total).toBe(0);
  });

  it("checks the payload against the schema of the event type it names (422)", async () => {
    const et = await call(server, "POST", "/v1/event-types", { key, body: { name: "invoice.paid", json_schema: { type: "object", required: ["invoice_id"] } } });
    expect(et.status).toBe(201);
    const t = await createTopic({ name: "Billing" });
    const bad = await call(server, "POST", `/v1/topics/${t.id}/publish`, { key, body: { event_type: "invoice.paid", payload: { amount: 1 } } });
    expect(bad.status).toBe(422);
    expect(bad.body.error.details).toMatchObject({ event_type: "invoice.paid", errors: [expect.objectContaining({ message: expect.stringContaining("invoice_id") })] });
    const good = await call(server, "POST", `/v1/topics/${t.id}/publish`, { key, body: { event_type: "invoice.paid", payload: { invoice_id: "in_1" } } });
    expect(good.status).toBe(200);
    // A type with no event type behind it is accepted as is.
    expect((await call(server, "POST", `/v1/topics/${t.id}/publish`, { key, body: { event_type: "unknown.kind", payload: {} } })).status).toBe(200);
  });

  it("refuses to publish to a paused topic with 409 conflict", async () => {
    const t = await createTopic({ name: "Paused" });
    await call(server, "PATCH", `/v1/topics/${t.id}`, { key, body: { status: "paused" } });
    const res = await call(server, "POST", `/v1/topics/${t.id}/publish`, { key, body: { payload: {} } });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe("conflict");
    await call(server, "PATCH", `/v1/topics/${t.id}`, { key, body: { status: "active" } });
    expect((await call(server, "POST", `/v1/topics/${t.id}/publish`, { key, body: { payload: {} } })).status).toBe(200);
  });

  it("answers 400 without a payload or with a bad event type, 404 for an unknown topic", async () => {
    const t = await createTopic({ name: "Inputs" });
    expectValidation(await call(server, "POST", `/v1/topics/${t.id}/publish`, { key, body: {} }), "body.payload");
    expectValidation(await call(server, "POST", `/v1/topics/${t.id}/publish`, { key, body: { payload: {}, event_type: "bad type!" } }), "body.event_type");
    expectValidation(await call(server, "POST", `/v1/topics/${t.id}/publish`, { key, body: "{" }));
    expect((await call(server, "POST", `/v1/topics/${"b".repeat(32)}/publish`, { key, body: { payload: {} } })).status).toBe(404);
  });

  it("keeps the topic's source closed to its open ingest URL (403): publishing needs a key and the schema check", async () => {
    const t = await createTopic({ name: "Closed", schema: orderSchema });
    const res = await server.request(`/v1/ingest/${t.source_id}`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(res.status).toBe(403);
    expect(((await res.json()) as any).error.code).toBe("forbidden");
    expect((await call(server, "GET", `/v1/events?source_id=${t.source_id}`, { key })).body.pagination.total).toBe(0);
  });
});
