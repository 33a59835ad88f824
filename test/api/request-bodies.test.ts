import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { call, type TestServer } from "../helpers/server";
import { useServer } from "../helpers/fixture";

/** What every JSON request body goes through (docs/api.md, "Request bodies"), on both stores. */

let server: TestServer, key: string;
useServer({}, (s) => ({ server, key } = s));

/** A request as fetch wrappers, axios and Postman send it: JSON content type, raw body text (possibly empty). */
async function raw(method: string, path: string, body: string) {
  const res = await server.request(path, { method, headers: { "x-api-key": key, "content-type": "application/json" }, body });
  return { status: res.status, body: (await res.json()) as any };
}

async function ingestedEvent() {
  const source = await call(server, "POST", "/v1/sources", { key, body: { name: `bodies-${crypto.randomUUID()}` } });
  const res = await server.request(`/v1/ingest/${source.body.source.id}`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"a":1}' });
  expect(res.status).toBe(200);
  return ((await res.json()) as { event_id: string }).event_id;
}

describe("an empty body with Content-Type: application/json", () => {
  it("means no fields where the body is optional: event retry, secret rotation, bulk retry", async () => {
    const eventId = await ingestedEvent();
    for (const body of ["", "  \r\n"]) {
      const retried = await raw("POST", `/v1/events/${eventId}/retry`, body);
      expect([JSON.stringify(body), retried.status, retried.body]).toEqual([JSON.stringify(body), 200, expect.objectContaining({ retried: [] })]);
    }

    const app = await call(server, "POST", "/v1/applications", { key, body: { name: "bodies", uid: "bodies-app" } });
    expect(app.status).toBe(201);
    const endpoint = await call(server, "POST", "/v1/applications/bodies-app/endpoints", { key, body: { url: "https://hooks.example.com/in" } });
    expect(endpoint.status).toBe(201);
    const rotated = await raw("POST", `/v1/applications/bodies-app/endpoints/${endpoint.body.endpoint.id}/secret/rotate`, "");
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);

    const bulk = await raw("POST", "/v1/events/retry", "");
    expect(bulk.status).toBe(202);
  });

  it("is an update of nothing on a PATCH, and a missing required field (not malformed JSON) on a create", async () => {
    const created = await call(server, "POST", "/v1/sources", { key, body: { name: "empty-patch" } });
    const patched = await raw("PATCH", `/v1/sources/${created.body.source.id}`, "");
    expect(patched.status).toBe(200);
    expect(patched.body.source.name).toBe("empty-patch");

    const create = await raw("POST", "/v1/sources", "");
    expect(create.status).toBe(400);
    expect(create.body.error.code).toBe("validation_error");
    expect(create.body.error.details).toEqual([expect.objectContaining({ field: "body.name" })]);
  });

  it("still answers malformed JSON for a body that is not JSON", async () => {
    const eventId = await ingestedEvent();
    const res = await raw("POST", `/v1/events/${eventId}/retry`, "{");
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({ code: "validation_error", message: "Malformed JSON in request body" });
  });
});

describe("a field the operation does not take", () => {
  it("is a 400 validation_error naming it on a create, and nothing is created", async () => {
    const res = await call(server, "POST", "/v1/sources", { key, body: { name: "typo", bogus_field: 1 } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("validation_error");
    expect(res.body.error.message).toContain('"bogus_field"');
    expect(res.body.error.details).toEqual([{ field: "body.bogus_field", message: "unknown field" }]);
    const list = await call(server, "GET", "/v1/sources", { key });
    expect(list.body.sources.map((s: { name: string }) => s.name)).not.toContain("typo");
  });

  it("says a field cannot change after creation on an update, and nothing changes", async () => {
    const created = await call(server, "POST", "/v1/notification-channels", { key, body: { name: "hook", channel_type: "webhook", config: { url: "https://hooks.example.com/alerts" } } });
    expect(created.status).toBe(201);
    const res = await call(server, "PATCH", `/v1/notification-channels/${created.body.id}`, { key, body: { channel_type: "slack" } });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({
      code: "validation_error",
      message: '"channel_type" cannot be changed after creation',
      details: [{ field: "body.channel_type", message: "cannot be changed after creation" }],
    });
    const both = await call(server, "PATCH", `/v1/notification-channels/${created.body.id}`, { key, body: { name: "renamed", channel_type: "slack", colour: "red" } });
    expect(both.status).toBe(400);
    expect(both.body.error.details).toEqual([
      { field: "body.channel_type", message: "cannot be changed after creation" },
      { field: "body.colour", message: "unknown field" },
    ]);
    const after = await call(server, "GET", `/v1/notification-channels/${created.body.id}`, { key });
    expect([after.body.name, after.body.type]).toEqual(["hook", "webhook"]);
  });

  it("is not looked for inside user data: payloads, metadata, channel configs and transform test bodies stay open", async () => {
    await call(server, "POST", "/v1/applications", { key, body: { name: "open", uid: "open-app", metadata: { anything: 1, nested: { goes: true } } } }).then((r) => expect(r.status).toBe(201));
    const message = await call(server, "POST", "/v1/applications/open-app/messages", { key, body: { event_type: "order.created", payload: { any_field: 1, deep: { more: [1, 2] } } } });
    expect(message.status).toBe(202);
    const channel = await call(server, "POST", "/v1/notification-channels", { key, body: { name: "cfg", channel_type: "webhook", config: { url: "https://hooks.example.com/a", extra: "kept for the type check to judge" } } });
    expect(channel.status).not.toBe(500);
    expect(channel.body.error?.details?.[0]?.field).not.toBe("body.config.extra");
    const transform = await call(server, "POST", "/v1/connections/test-transform", { key, body: { transform_expression: "a", body: { a: 1, b: 2 }, headers: { "x-any": "1" } } });
    expect(transform.status).toBe(200);
  });
});

describe("a NUL character in a text field", () => {
  it("is a 400 validation_error naming the field on create and update, on both stores", async () => {
    const res = await call(server, "POST", "/v1/sources", { key, body: { name: "a\u0000b" } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("validation_error");
    expect(res.body.error.details).toEqual([{ field: "body.name", message: "may not contain a NUL character" }]);

    const created = await call(server, "POST", "/v1/sources", { key, body: { name: "nul-target" } });
    const patched = await call(server, "PATCH", `/v1/sources/${created.body.source.id}`, { key, body: { description: "x\u0000", ip_allowlist: ["10.0.0.0/8", "\u0000"] } });
    expect(patched.status).toBe(400);
    expect(patched.body.error.details.map((d: { field: string }) => d.field)).toEqual(["body.description", "body.ip_allowlist.1"]);
    const after = await call(server, "GET", `/v1/sources/${created.body.source.id}`, { key });
    expect(after.body.source.description).toBeNull();
  });

  it("inside a user payload is data, kept as sent (JSON escapes it)", async () => {
    await call(server, "POST", "/v1/applications", { key, body: { name: "nul", uid: "nul-app" } });
    const message = await call(server, "POST", "/v1/applications/nul-app/messages", { key, body: { event_type: "t.nul", payload: { text: "a\u0000b" } } });
    expect(message.status).toBe(202);
    expect(JSON.parse(message.body.message.payload)).toEqual({ text: "a\u0000b" });

    const source = await call(server, "POST", "/v1/sources", { key, body: { name: "nul-ingest" } });
    const ingest = await server.request(`/v1/ingest/${source.body.source.id}`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"text":"a\\u0000b"}' });
    expect(ingest.status).toBe(200);
    const { event_id } = (await ingest.json()) as { event_id: string };
    const event = await call(server, "GET", `/v1/events/${event_id}`, { key });
    expect(event.body.body).toBe('{"text":"a\\u0000b"}');
  });

  it("inside an ingested body's dedup field is still a key: stored and de-duplicated on both stores", async () => {
    const source = await call(server, "POST", "/v1/sources", { key, body: { name: "nul-dedup", dedup_enabled: true, dedup_strategy: "field", dedup_field: "id" } });
    expect(source.status).toBe(201);
    const send = () => server.request(`/v1/ingest/${source.body.source.id}`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"id":"a\\u0000b"}' });
    const first = await send();
    expect(first.status).toBe(200);
    const second = await send();
    expect(second.status).toBe(200);
    expect(await second.json()).toMatchObject({ duplicate: true });
  });

  it("inside a provider's event type is kept as data on both stores (shown as U+FFFD)", async () => {
    const secret = "whsec_nul_type_secret";
    const source = await call(server, "POST", "/v1/sources", { key, body: { name: "nul-type", template: "stripe", verification_secret: secret } });
    expect(source.status).toBe(201);
    const payload = '{"id":"evt_nul","type":"invoice\\u0000paid"}';
    const t = Math.floor(Date.now() / 1000);
    const v1 = createHmac("sha256", secret).update(`${t}.${payload}`).digest("hex");
    const res = await server.request(`/v1/ingest/${source.body.source.id}`, { method: "POST", headers: { "content-type": "application/json", "stripe-signature": `t=${t},v1=${v1}` }, body: payload });
    expect(res.status).toBe(200);
    const { event_id } = (await res.json()) as { event_id: string };
    const event = await call(server, "GET", `/v1/events/${event_id}`, { key });
    expect(event.body).toMatchObject({ verification_status: "verified", event_type: "invoice\uFFFDpaid", body: payload });
  });
});
