import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../helpers/delivery";
import { scopeOf, type TestScope } from "../helpers/rows";
import { call, type TestServer } from "../helpers/server";
import { useServer } from "../helpers/fixture";
import { createApp, createEndpoint, getMessage, messageAttempts, outboundSink, sendMessage } from "../outbound/helpers";

let server: TestServer, key: string;
let scope: TestScope;
const sink = outboundSink();

useServer({}, (s) => ({ server, key } = s));
beforeAll(async () => {
  scope = await scopeOf(server, key);
});
afterAll(async () => {
  sink.close();
});

function expect4xx(res: { status: number; body: any }, status: number, code: string, field?: string) {
  expect(res.status).toBe(status);
  expect(res.body.error.code).toBe(code);
  if (field) expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
}

const delivered = (appId: string, id: string) => waitFor(async () => ((await getMessage(server, key, appId, id)).status === "delivered" ? true : null), { what: `message ${id} delivered` });

describe("POST /v1/applications/{appId}/messages", () => {
  it("answers 202 with the message, and sends the payload as JSON to the endpoint", async () => {
    const app = await createApp(server, key, { uid: "send-basic" });
    await createEndpoint(server, key, app.id, { url: `${sink.url}/basic` });
    const res = await call(server, "POST", "/v1/applications/send-basic/messages", { key, body: { event_type: "invoice.paid", payload: { invoice: "in_1", amount: 1200 } } });
    expect(res.status).toBe(202);
    const m = res.body.message;
    expect(m).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{32}$/),
      org_id: scope.orgId,
      env_id: scope.envId,
      application_id: app.id,
      event_type: "invoice.paid",
      payload: JSON.stringify({ invoice: "in_1", amount: 1200 }),
      status: "pending",
      ordering_key: null,
      created_at: m.created_at,
      updated_at: m.created_at,
    });
    const [req] = await waitFor(async () => (sink.at("/basic").length ? sink.at("/basic") : null));
    expect(req!.method).toBe("POST");
    expect(req!.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(req!.body)).toEqual({ invoice: "in_1", amount: 1200 });
    expect(req!.headers["webhook-id"]).toBe(m.id);
    // A message is not a relayed event: the relay's own x-hookrelay-* headers stay out.
    expect(Object.keys(req!.headers).filter((h) => h.startsWith("x-hookrelay-"))).toEqual([]);
    await delivered(app.id, m.id);
  });

  it("treats id as an idempotency key per application: the same message back, sent once", async () => {
    const app = await createApp(server, key);
    await createEndpoint(server, key, app.id, { url: `${sink.url}/idem` });
    const first = await sendMessage(server, key, app.id, { event_type: "a.b", payload: { n: 1 }, id: "order-42-paid" });
    const again = await call(server, "POST", `/v1/applications/${app.id}/messages`, { key, body: { event_type: "a.b", payload: { n: 2 }, id: "order-42-paid" } });
    expect(again.status).toBe(202);
    expect(again.body.message.id).toBe(first.id);
    expect(again.body.message.payload).toBe('{"n":1}');
    // Concurrent repeats settle on the one message too.
    const burst = await Promise.all(Array.from({ length: 5 }, () => call(server, "POST", `/v1/applications/${app.id}/messages`, { key, body: { event_type: "a.b", payload: {}, id: "burst-1" } })));
    expect(burst.map((r) => r.status)).toEqual([202, 202, 202, 202, 202]);
    expect(new Set(burst.map((r) => r.body.message.id)).size).toBe(1);
    await delivered(app.id, first.id);
    await delivered(app.id, burst[0]!.body.message.id);
    expect(sink.at("/idem")).toHaveLength(2);
    // The key finds the message, and is the application's own: another application may use it.
    expect((await getMessage(server, key, app.id, "order-42-paid")).id).toBe(first.id);
    const other = await createApp(server, key);
    expect((await sendMessage(server, key, other.id, { event_type: "a.b", payload: {}, id: "order-42-paid" })).id).not.toBe(first.id);
  });

  it("checks the payload against the event type of that name: 422 schema_violation with the errors", async () => {
    await call(server, "POST", "/v1/event-types", { key, body: { name: "user.signup", json_schema: { type: "object", required: ["email"], properties: { email: { type: "string" } } } } });
    const app = await createApp(server, key);
    const bad = await call(server, "POST", `/v1/applications/${app.id}/messages`, { key, body: { event_type: "user.signup", payload: { email: 5 } } });
    expect4xx(bad, 422, "schema_violation");
    expect(bad.body.error.details).toMatchObject({ event_type: "user.signup", errors: [expect.objectContaining({ path: "/email" })] });
    expect((await call(server, "POST", `/v1/applications/${app.id}/messages`, { key, body: { event_type: "user.signup", payload: { email: "a@b.c" } } })).status).toBe(202);
    // No event type of that name: any payload.
    expect((await call(server, "POST", `/v1/applications/${app.id}/messages`, { key, body: { event_type: "user.unknown", payload: [1, "x"] } })).status).toBe(202);
  });

  it("fans out to each active, unexpired endpoint whose filter_types admit the type, and to no other", async () => {
    const app = await createApp(server, key);
    const base = `${sink.url}/fan-${app.id.slice(-6)}`;
    await createEndpoint(server, key, app.id, { url: `${base}/orders`, filter_types: ["order.created"] });
    await createEndpoint(server, key, app.id, { url: `${base}/all` });
    await createEndpoint(server, key, app.id, { url: `${base}/other`, filter_types: ["user.deleted"] });
    await createEndpoint(server, key, app.id, { url: `${base}/disabled`, status: "disabled" });
    await createEndpoint(server, key, app.id, { url: `${base}/expired`, expires_at: new Date(Date.now() - 1000).toISOString() });
    const m = await sendMessage(server, key, app.id, { event_type: "order.created", payload: { id: 1 } });
    await delivered(app.id, m.id);
    const paths = sink.requests.filter((r) => r.path.startsWith(`/fan-${app.id.slice(-6)}`)).map((r) => r.path.split("/").pop());
    expect(paths.sort()).toEqual(["all", "orders"]);
    expect(await messageAttempts(server, key, app.id, m.id)).toHaveLength(2);

    const none = await createApp(server, key);
    await createEndpoint(server, key, none.id, { url: `${base}/x`, filter_types: ["x.y"] });
    expect((await sendMessage(server, key, none.id, { event_type: "order.created", payload: {} })).status).toBe("ignored");
  });

  it("refuses bad input with 4xx, never a 5xx", async () => {
    const app = await createApp(server, key);
    const url = `/v1/applications/${app.id}/messages`;
    const cases: [unknown, string][] = [
      [{ payload: {} }, "body.event_type"],
      [{ event_type: 5, payload: {} }, "body.event_type"],
      [{ event_type: "has space", payload: {} }, "body.event_type"],
      [{ event_type: "a.b" }, "body.payload"],
      [{ event_type: "a.b", payload: {}, id: "" }, "body.id"],
      [{ event_type: "a.b", payload: {}, id: "with space" }, "body.id"],
      [{ event_type: "a.b", payload: {}, id: 7 }, "body.id"],
    ];
    for (const [body, field] of cases) expect4xx(await call(server, "POST", url, { key, body }), 400, "validation_error", field);
    expect((await call(server, "POST", url, { key, body: "[not json" })).status).toBe(400);
    expect4xx(await call(server, "POST", "/v1/applications/missing-app/messages", { key, body: { event_type: "a", payload: {} } }), 404, "not_found");
    for (const q of ["limit=0", "limit=101", "cursor=%%%", "limit=x"]) expect((await call(server, "GET", `${url}?${q}`, { key })).status).toBe(400);
    expect4xx(await call(server, "GET", `${url}/0123456789abcdef0123456789abcdef`, { key }), 404, "not_found");
    expect4xx(await call(server, "GET", `${url}/no-such-key/attempts`, { key }), 404, "not_found");
  });
});

describe("GET /v1/applications/{appId}/messages", () => {
  it("pages newest first with a cursor, without repeats or gaps while messages arrive, filtered by event_type", async () => {
    const app = await createApp(server, key);
    const sent: { id: string; type: string }[] = [];
    for (let i = 0; i < 11; i++) {
      const type = i % 3 === 0 ? "odd.one" : "even.one";
      sent.push({ id: (await sendMessage(server, key, app.id, { event_type: type, payload: { i } })).id, type });
    }
    const walk = async (filter: string) => {
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const res: { status: number; body: any } = await call(server, "GET", `/v1/applications/${app.id}/messages?limit=4${filter}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`, { key });
        expect(res.status).toBe(200);
        expect(Object.keys(res.body).sort()).toEqual(["cursor", "messages"]);
        seen.push(...res.body.messages.map((m: { id: string }) => m.id));
        cursor = res.body.cursor;
        if (pages++ === 0) await sendMessage(server, key, app.id, { event_type: "odd.one", payload: { late: true } });
      } while (cursor);
      return seen;
    };
    expect(await walk("")).toEqual(sent.map((s) => s.id).reverse());
    const odd = await walk("&event_type=odd.one");
    // The late one arrived after the first page of this walk was read: newer than every page, so absent.
    expect(odd.slice(1)).toEqual(sent.filter((s) => s.type === "odd.one").map((s) => s.id).reverse());
  });
});

describe("attempts and resending", () => {
  it("lists a message's attempts with request and response, per endpoint on request, and those of an endpoint", async () => {
    const app = await createApp(server, key);
    const a = await createEndpoint(server, key, app.id, { url: `${sink.url}/att-a` });
    const b = await createEndpoint(server, key, app.id, { url: `${sink.url}/att-b` });
    const m = await sendMessage(server, key, app.id, { event_type: "t.x", payload: { ok: true } });
    await delivered(app.id, m.id);
    const all = await messageAttempts(server, key, app.id, m.id);
    expect(all).toHaveLength(2);
    expect(all[0]).toMatchObject({ event_id: `evt_${m.id}`, status: "success", response_status: 200, response_body: "ok", trigger_type: "initial", connection_id: null });
    expect(JSON.parse(all[0]!.request_headers)["webhook-id"]).toBe(m.id);
    const onlyA = await call(server, "GET", `/v1/applications/${app.id}/messages/${m.id}/attempts?endpoint_id=${a.id}`, { key });
    expect(onlyA.body.attempts.map((x: { destination_id: string }) => x.destination_id)).toEqual([`dst_${a.id}`]);
    const ofB = await call(server, "GET", `/v1/applications/${app.id}/endpoints/${b.id}/attempts`, { key });
    expect(ofB.status).toBe(200);
    expect(ofB.body).toEqual({ attempts: [expect.objectContaining({ event_id: `evt_${m.id}`, destination_id: `dst_${b.id}` })], cursor: null });
  });

  it("resends to one endpoint as a new chain (202), refuses a disabled endpoint (409) and an unknown one (404)", async () => {
    const app = await createApp(server, key);
    const a = await createEndpoint(server, key, app.id, { url: `${sink.url}/re-a` });
    const off = await createEndpoint(server, key, app.id, { url: `${sink.url}/re-off`, status: "disabled" });
    const m = await sendMessage(server, key, app.id, { event_type: "t.y", payload: { v: 1 } });
    await delivered(app.id, m.id);
    const res = await call(server, "POST", `/v1/applications/${app.id}/messages/${m.id}/resend`, { key, body: { endpoint_id: a.id } });
    expect(res.status).toBe(202);
    expect(res.body.attempt).toMatchObject({ destination_id: `dst_${a.id}`, trigger_type: "manual", attempt_number: 1, status: expect.stringMatching(/^(queued|delivering|success)$/) });
    await waitFor(async () => (sink.at("/re-a").length === 2 ? true : null));
    await delivered(app.id, m.id);
    expect(sink.at("/re-a")[1]!.headers["webhook-id"]).toBe(m.id);
    expect4xx(await call(server, "POST", `/v1/applications/${app.id}/messages/${m.id}/resend`, { key, body: { endpoint_id: off.id } }), 409, "conflict");
    expect4xx(await call(server, "POST", `/v1/applications/${app.id}/messages/${m.id}/resend`, { key, body: { endpoint_id: "0123456789abcdef0123456789abcdef" } }), 404, "not_found");
    expect4xx(await call(server, "POST", `/v1/applications/${app.id}/messages/${m.id}/resend`, { key, body: {} }), 400, "validation_error", "body.endpoint_id");
  });

  it("shows the message among the outbound source's events, which takes nothing over its ingest URL", async () => {
    const app = await createApp(server, key);
    const m = await sendMessage(server, key, app.id, { event_type: "t.z", payload: { e: 1 } });
    const event = await call(server, "GET", `/v1/events/evt_${m.id}`, { key });
    expect(event.status).toBe(200);
    const sources = await call(server, "GET", "/v1/sources?type=outbound", { key });
    expect(sources.body.sources).toHaveLength(1);
    expect(event.body.source_id).toBe(sources.body.sources[0].id);
    const ingest = await server.request(`/v1/ingest/${sources.body.sources[0].id}`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(ingest.status).toBe(403);
    expect4xx(await call(server, "DELETE", `/v1/sources/${sources.body.sources[0].id}`, { key }), 409, "conflict");
    expect4xx(await call(server, "POST", "/v1/sources", { key, body: { name: "fake", type: "outbound" } }), 400, "validation_error", "body.type");
  });
});
