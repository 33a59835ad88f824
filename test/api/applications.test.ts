import { beforeAll, describe, expect, it } from "vitest";
import { otherOrgKey, scopeOf, type TestScope } from "../helpers/rows";
import { call, type TestServer } from "../helpers/server";
import { useServer } from "../helpers/fixture";
import { createApp, createEndpoint, sendMessage } from "../outbound/helpers";

let server: TestServer, key: string;
let scope: TestScope;

useServer({}, (s) => ({ server, key } = s));
beforeAll(async () => {
  scope = await scopeOf(server, key);
});

function expect4xx(res: { status: number; body: any }, status: number, code: string, field?: string) {
  expect(res.status).toBe(status);
  expect(res.body.error.code).toBe(code);
  if (field) expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
}

describe("POST /v1/applications", () => {
  it("creates an application with the spec's fields, metadata as a JSON string", async () => {
    const res = await call(server, "POST", "/v1/applications", { key, body: { name: "Acme Corp", uid: "acme", description: "a customer", metadata: { plan: "pro" }, rate_limit: 50 } });
    expect(res.status).toBe(201);
    const a = res.body.application;
    expect(a).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{32}$/),
      org_id: scope.orgId,
      env_id: scope.envId,
      name: "Acme Corp",
      uid: "acme",
      description: "a customer",
      metadata: JSON.stringify({ plan: "pro" }),
      status: "active",
      rate_limit: 50,
      allow_private_endpoints: 0,
      created_at: a.created_at,
      updated_at: a.created_at,
    });
  });

  it("gives an application without a uid its id as uid", async () => {
    const a = await createApp(server, key);
    expect(a.uid).toBe(a.id);
    expect((await call(server, "GET", `/v1/applications/${a.uid}`, { key })).status).toBe(200);
  });

  it("answers 409 for a uid already used in the environment, and allows it in another organization", async () => {
    await createApp(server, key, { uid: "dup-uid" });
    expect4xx(await call(server, "POST", "/v1/applications", { key, body: { name: "x", uid: "dup-uid" } }), 409, "conflict", "body.uid");
    const other = await otherOrgKey(server);
    expect((await call(server, "POST", "/v1/applications", { key: other, body: { name: "x", uid: "dup-uid" } })).status).toBe(201);
  });

  it("refuses bad input with 400 naming the field, never a 5xx", async () => {
    const cases: [unknown, string][] = [
      [{}, "body.name"],
      [{ name: 5 }, "body.name"],
      [{ name: "x", uid: "has space" }, "body.uid"],
      [{ name: "x", uid: "0123456789abcdef0123456789abcdef" }, "body.uid"],
      [{ name: "x", metadata: [1, 2] }, "body.metadata"],
      [{ name: "x", metadata: "not json" }, "body.metadata"],
      [{ name: "x", rate_limit: 0 }, "body.rate_limit"],
      [{ name: "x", rate_limit: "5" }, "body.rate_limit"],
      [{ name: "x", status: "paused" }, "body.status"],
    ];
    for (const [body, field] of cases) expect4xx(await call(server, "POST", "/v1/applications", { key, body }), 400, "validation_error", field);
    expect((await call(server, "POST", "/v1/applications", { key, body: "{not json" })).status).toBe(400);
    expect4xx(await call(server, "POST", "/v1/applications", { key, body: { name: "x", env_id: "elsewhere" } }), 404, "not_found");
  });
});

describe("GET /v1/applications", () => {
  it("pages newest first with a cursor, without repeats or gaps while applications are added", async () => {
    const prefix = `page-${Date.now()}`;
    const made: string[] = [];
    for (let i = 0; i < 7; i++) made.push((await createApp(server, key, { name: `${prefix} ${i}`, uid: `${prefix}-${i}` })).id);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const qs: string = `search=${prefix}&limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
      const res = await call(server, "GET", `/v1/applications?${qs}`, { key });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(["applications", "cursor"]);
      seen.push(...res.body.applications.map((a: { id: string }) => a.id));
      cursor = res.body.cursor;
      // An application added mid-walk is newer than every page: it neither repeats nor shifts them.
      if (pages === 0) await createApp(server, key, { name: `${prefix} late`, uid: `${prefix}-late` });
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([...made].reverse());
  });

  it("lists endpoint_count and message_count, and finds by part of the name or the uid", async () => {
    const a = await createApp(server, key, { name: "Counted Co", uid: "counted-co" });
    await createEndpoint(server, key, a.id, { url: "http://127.0.0.1:9/a", status: "disabled" });
    await createEndpoint(server, key, a.id, { url: "http://127.0.0.1:9/b", status: "disabled" });
    await sendMessage(server, key, a.id, { event_type: "x.y", payload: {} });
    for (const search of ["Counted", "counted-c", "COUNTED co"]) {
      const res = await call(server, "GET", `/v1/applications?search=${encodeURIComponent(search)}`, { key });
      expect(res.body.applications).toEqual([expect.objectContaining({ id: a.id, endpoint_count: 2, message_count: 1 })]);
    }
    const none = await call(server, "GET", "/v1/applications?search=%25", { key });
    expect(none.body.applications.some((x: { id: string }) => x.id === a.id)).toBe(false);
  });

  it("refuses limit outside 1..100 and a cursor it did not make", async () => {
    for (const q of ["limit=0", "limit=101", "limit=abc", "cursor=nonsense"]) expect((await call(server, "GET", `/v1/applications?${q}`, { key })).status).toBe(400);
    expect((await call(server, "GET", "/v1/applications?limit=100", { key })).status).toBe(200);
  });

  it("shows another organization nothing", async () => {
    const a = await createApp(server, key, { uid: "private-app" });
    const other = await otherOrgKey(server);
    const res = await call(server, "GET", "/v1/applications", { key: other });
    expect(res.body.applications.some((x: { id: string }) => x.id === a.id)).toBe(false);
    expect((await call(server, "GET", `/v1/applications/${a.id}`, { key: other })).status).toBe(404);
    expect((await call(server, "GET", "/v1/applications/private-app", { key: other })).status).toBe(404);
  });
});

describe("GET/PATCH/DELETE /v1/applications/{appId}", () => {
  it("accepts the id or the uid in every path, and 404 for an unknown one", async () => {
    const a = await createApp(server, key, { uid: "either-way" });
    for (const ref of [a.id, "either-way"]) {
      const res = await call(server, "GET", `/v1/applications/${ref}`, { key });
      expect(res.status).toBe(200);
      expect(res.body.application.id).toBe(a.id);
      expect((await call(server, "GET", `/v1/applications/${ref}/endpoints`, { key })).status).toBe(200);
      expect((await call(server, "GET", `/v1/applications/${ref}/messages`, { key })).status).toBe(200);
    }
    for (const ref of ["nope", "0123456789abcdef0123456789abcdef"]) {
      expect4xx(await call(server, "GET", `/v1/applications/${ref}`, { key }), 404, "not_found");
      expect4xx(await call(server, "POST", `/v1/applications/${ref}/messages`, { key, body: { event_type: "a", payload: {} } }), 404, "not_found");
    }
  });

  it("takes the uid wherever /v1/openapi.json has {appId}, answering as it does for the id", async () => {
    const a = await createApp(server, key, { uid: "every-path" });
    // ed25519: its GET …/public-key answers 200 like the others (an HMAC endpoint's is a 409).
    const e = await createEndpoint(server, key, a.id, { url: "http://127.0.0.1:9/p", status: "disabled", signing_algorithm: "ed25519" });
    const m = await sendMessage(server, key, a.id, { event_type: "p.q", payload: {} });
    const spec = (await call(server, "GET", "/v1/openapi.json", { key })).body as { paths: Record<string, Record<string, unknown>> };
    const routes = Object.entries(spec.paths).filter(([path, ops]) => path.includes("{appId}") && "get" in ops);
    expect(routes.length).toBeGreaterThanOrEqual(9);
    for (const [path] of routes) {
      const fill = (ref: string) =>
        "/v1" +
        path
          .replace("{appId}", ref)
          .replace(/\/endpoints\/\{id\}/, `/endpoints/${e.id}`)
          .replace(/\/messages\/\{id\}/, `/messages/${m.id}`);
      const byId = await call(server, "GET", fill(a.id), { key });
      const byUid = await call(server, "GET", fill("every-path"), { key });
      expect(byId.status, path).toBe(200);
      expect(byUid.status, path).toBe(200);
      expect(JSON.stringify(byUid.body), path).toBe(JSON.stringify(byId.body));
    }
  });

  it("updates the given fields, refuses a taken uid with 409, and deletes with its endpoints and messages", async () => {
    const a = await createApp(server, key, { uid: "to-change" });
    await createApp(server, key, { uid: "taken" });
    const res = await call(server, "PATCH", "/v1/applications/to-change", { key, body: { name: "Renamed", metadata: JSON.stringify({ a: 1 }), rate_limit: null } });
    expect(res.status).toBe(200);
    expect(res.body.application).toMatchObject({ id: a.id, name: "Renamed", uid: "to-change", metadata: '{"a":1}', rate_limit: null });
    expect4xx(await call(server, "PATCH", `/v1/applications/${a.id}`, { key, body: { uid: "taken" } }), 409, "conflict");
    expect4xx(await call(server, "PATCH", `/v1/applications/${a.id}`, { key, body: { name: "" } }), 400, "validation_error", "body.name");

    const e = await createEndpoint(server, key, a.id, { url: "http://127.0.0.1:9/x", status: "disabled" });
    const m = await sendMessage(server, key, a.id, { event_type: "a.b", payload: { n: 1 } });
    expect((await call(server, "DELETE", `/v1/applications/${a.id}`, { key })).body).toEqual({ success: true });
    expect((await call(server, "GET", `/v1/applications/${a.id}`, { key })).status).toBe(404);
    expect((await call(server, "GET", `/v1/events/evt_${m.id}`, { key })).status).toBe(404);
    expect((await call(server, "GET", `/v1/issues?destination_id=dst_${e.id}`, { key })).body.issues).toEqual([]);
    expect((await call(server, "DELETE", `/v1/applications/${a.id}`, { key })).status).toBe(404);
  });

  it("refuses messages while disabled (409) and sends again once active", async () => {
    const a = await createApp(server, key, { status: "disabled" });
    expect4xx(await call(server, "POST", `/v1/applications/${a.id}/messages`, { key, body: { event_type: "a", payload: {} } }), 409, "conflict");
    await call(server, "PATCH", `/v1/applications/${a.id}`, { key, body: { status: "active" } });
    expect((await call(server, "POST", `/v1/applications/${a.id}/messages`, { key, body: { event_type: "a", payload: {} } })).status).toBe(202);
  });

  it("keeps application endpoints out of the destinations API", async () => {
    const a = await createApp(server, key);
    const e = await createEndpoint(server, key, a.id, { url: "http://127.0.0.1:9/hidden", status: "disabled" });
    const list = await call(server, "GET", "/v1/destinations", { key });
    expect(list.body.destinations.some((d: { id: string }) => d.id === `dst_${e.id}`)).toBe(false);
    expect((await call(server, "GET", `/v1/destinations/dst_${e.id}`, { key })).status).toBe(404);
    expect((await call(server, "DELETE", `/v1/destinations/dst_${e.id}`, { key })).status).toBe(404);
  });
});
