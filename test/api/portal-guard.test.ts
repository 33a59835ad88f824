/**
 * What a consumer portal link can reach (docs/outbound.md, "What a portal
 * link can reach"): on a server with the homelab default (private
 * destinations allowed), endpoints a portal link sets are still held to the
 * private-address block, at create, at update and at every send, unless the
 * operator opts the application in; the portal sees a generic delivery
 * error; an application's endpoints are capped; portal resends are limited;
 * links can be revoked.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { manualClock } from "../../src/core/clock";
import { PORTAL_UNREACHABLE_DETAIL } from "../../src/domain/deliveryAttempts";
import { closedPort } from "../alerts/helpers";
import { startClockedServer } from "../helpers/clockedServer";
import { describeOnly } from "../helpers/database";
import { waitFor } from "../helpers/delivery";
import { call, startTestServer, tempDir, type TestServer } from "../helpers/server";
import { useServer } from "../helpers/fixture";
import { createApp, createEndpoint, getMessage, messageAttempts, outboundSink, sendMessage } from "../outbound/helpers";

let server: TestServer, key: string;
const sink = outboundSink();

useServer({}, (s) => ({ server, key } = s));
beforeAll(async () => {
  expect(server.deps.settings.blockPrivateDestinations).toBe(false);
});
afterAll(async () => {
  sink.close();
});

async function portalToken(s: TestServer, k: string, appId: string): Promise<string> {
  const res = await call(s, "POST", `/v1/applications/${appId}/portal`, { key: k });
  if (res.status !== 200) throw new Error(`portal link: ${res.status} ${JSON.stringify(res.body)}`);
  return new URL(res.body.url).hash.replace(/^#token=/, "");
}
const asPortal = (token: string) => ({ authorization: `Bearer ${token}` });

/** Every spelling of the operator's own machine (and its neighbours) a portal user might try. */
const port = sink.url.split(":").pop();
const ATTACKS = [
  `http://127.0.0.1:${port}/internal`,
  `http://0.0.0.0:${port}/`,
  `http://2130706433:${port}/`,
  `http://0177.0.0.1:${port}/`,
  `http://0x7f.1:${port}/`,
  `http://[::ffff:127.0.0.1]:${port}/`,
  `http://[::127.0.0.1]:${port}/`,
  `http://[64:ff9b::7f00:1]:${port}/`,
  `http://[::1]:${port}/`,
  `http://localhost:${port}/`,
  `http://localhost.:${port}/`,
  `http://127.0.0.1.:${port}/`,
  "http://10.0.0.1/",
  "http://192.168.1.1/",
  "http://100.64.0.1/",
  "http://169.254.169.254/latest/meta-data/",
  "http://[fd00::1]/",
  "http://[64:ff9b::a9fe:a9fe]/",
];

describe("endpoints a portal link sets, on a server that allows private destinations", () => {
  it("are refused at create and at update for every private spelling (400 naming body.url); the operator's own are not", async () => {
    const app = await createApp(server, key);
    const h = asPortal(await portalToken(server, key, app.id));
    const base = `/v1/applications/${app.id}/endpoints`;
    // A name is not resolved at create (it is checked at each send): a public-looking one is accepted.
    const own = await call(server, "POST", base, { headers: h, body: { url: "https://hooks.customer.example/in" } });
    expect(own.status).toBe(201);
    for (const url of ATTACKS) {
      const created = await call(server, "POST", base, { headers: h, body: { url } });
      expect(created.status, url).toBe(400);
      expect(created.body.error.code, url).toBe("validation_error");
      expect(created.body.error.details.map((d: { field: string }) => d.field), url).toContain("body.url");
      const patched = await call(server, "PATCH", `${base}/${own.body.endpoint.id}`, { headers: h, body: { url } });
      expect(patched.status, url).toBe(400);
    }
    const endpoints = await call(server, "GET", base, { headers: h });
    expect(endpoints.body.endpoints.map((e: { url: string }) => e.url)).toEqual(["https://hooks.customer.example/in"]);

    // The operator (an API key) keeps the homelab default, and sees where a numeric host points.
    const operator = await call(server, "POST", base, { key, body: { url: `http://2130706433:${port}/x` } });
    expect(operator.status).toBe(201);
    expect(operator.body.endpoint.url).toBe(`http://127.0.0.1:${port}/x`);
  });

  it("are held to the block at every send: a message to one is refused without a connection, and the portal sees a generic error", async () => {
    // Opted in, the portal adds an endpoint on the local receiver and it is delivered to.
    const app = await createApp(server, key, { allow_private_endpoints: true });
    expect(app.allow_private_endpoints).toBe(1);
    const h = asPortal(await portalToken(server, key, app.id));
    const created = await call(server, "POST", `/v1/applications/${app.id}/endpoints`, { headers: h, body: { url: `${sink.url}/held` } });
    expect(created.status).toBe(201);
    expect(created.body.endpoint.portal_held).toBe(1);
    const endpointId = created.body.endpoint.id;
    const first = await sendMessage(server, key, app.id, { event_type: "held.test", payload: { n: 1 } });
    await waitFor(async () => ((await getMessage(server, key, app.id, first.id)).status === "delivered" ? true : null), { timeoutMs: 20_000, what: "the opted-in delivery" });
    expect(sink.at("/held")).toHaveLength(1);

    // The operator withdraws the opt-in: the endpoint's URL (set by the portal) is held again, checked at the send.
    expect((await call(server, "PATCH", `/v1/applications/${app.id}`, { key, body: { allow_private_endpoints: false } })).body.application.allow_private_endpoints).toBe(0);
    const second = await sendMessage(server, key, app.id, { event_type: "held.test", payload: { n: 2 } });
    await waitFor(async () => ((await getMessage(server, key, app.id, second.id)).status === "failed" ? true : null), { timeoutMs: 20_000, what: "the held delivery to fail" });
    expect(sink.at("/held")).toHaveLength(1);
    const [operatorView] = await messageAttempts(server, key, app.id, second.id);
    expect(operatorView).toMatchObject({ status: "failed", error: "ssrf_blocked", is_dlq: 1, response_status: null });
    expect(operatorView!.error_detail).toMatch(/127\.0\.0\.1 is a loopback address/);
    const portalView = await call(server, "GET", `/v1/applications/${app.id}/messages/${second.id}/attempts`, { headers: h });
    expect(portalView.body.attempts[0]).toMatchObject({ error: "ssrf_blocked", error_detail: PORTAL_UNREACHABLE_DETAIL });
    const byEndpoint = await call(server, "GET", `/v1/applications/${app.id}/endpoints/${endpointId}/attempts`, { headers: h });
    expect(JSON.stringify(byEndpoint.body)).not.toContain("127.0.0.1 is");

    // The operator setting the URL takes it over: no longer held, a resend arrives.
    const takenOver = await call(server, "PATCH", `/v1/applications/${app.id}/endpoints/${endpointId}`, { key, body: { url: `${sink.url}/held` } });
    expect(takenOver.body.endpoint.portal_held).toBe(0);
    // Counted before the resend: its delivery may land before the resend's own answer is read.
    const received = sink.requests.length;
    expect((await call(server, "POST", `/v1/applications/${app.id}/messages/${second.id}/resend`, { key, body: { endpoint_id: endpointId } })).status).toBe(202);
    await sink.waitFor(received + 1, 20_000);
    expect(sink.at("/held").map((r) => JSON.parse(r.body))).toEqual([{ n: 1 }, { n: 2 }]);
  });

  it("shows the portal no network detail when a target is unreachable", async () => {
    const app = await createApp(server, key, { allow_private_endpoints: true });
    const h = asPortal(await portalToken(server, key, app.id));
    const created = await call(server, "POST", `/v1/applications/${app.id}/endpoints`, { headers: h, body: { url: `http://127.0.0.1:${closedPort()}/gone` } });
    expect(created.status).toBe(201);
    const m = await sendMessage(server, key, app.id, { event_type: "gone.test", payload: {} });
    const [failed] = await waitFor(async () => {
      const attempts = await messageAttempts(server, key, app.id, m.id);
      return attempts.some((a) => a.error === "connection_error") ? attempts : null;
    }, { timeoutMs: 20_000, what: "a connection error" });
    expect(failed!.error_detail).not.toBe(PORTAL_UNREACHABLE_DETAIL);
    const portalView = await call(server, "GET", `/v1/applications/${app.id}/messages/${m.id}/attempts`, { headers: h });
    const shown = portalView.body.attempts.find((a: { error: string }) => a.error === "connection_error");
    expect(shown.error_detail).toBe(PORTAL_UNREACHABLE_DETAIL);
    await call(server, "DELETE", `/v1/applications/${app.id}/endpoints/${created.body.endpoint.id}`, { key });
  });

  it("opt-in is the operator's: a portal link cannot change the application", async () => {
    const app = await createApp(server, key);
    const h = asPortal(await portalToken(server, key, app.id));
    const res = await call(server, "PATCH", `/v1/applications/${app.id}`, { headers: h, body: { allow_private_endpoints: true } });
    expect(res.status).toBe(403);
    expect((await call(server, "GET", `/v1/applications/${app.id}`, { key })).body.application.allow_private_endpoints).toBe(0);
  });
});

describe("an application's endpoint cap", () => {
  it("refuses an endpoint past HOOKRELAY_MAX_ENDPOINTS_PER_APP (409), through a portal link or a key, until one is deleted", async () => {
    const capped = await startTestServer({ HOOKRELAY_MAX_ENDPOINTS_PER_APP: "3" });
    try {
      const k = await capped.apiKey();
      const app = await createApp(capped, k);
      const h = asPortal(await portalToken(capped, k, app.id));
      const base = `/v1/applications/${app.id}/endpoints`;
      const made = [];
      for (let i = 0; i < 3; i++) made.push(await createEndpoint(capped, k, app.id, { url: `https://e${i}.customer.example/` }));
      const portal = await call(capped, "POST", base, { headers: h, body: { url: "https://more.customer.example/" } });
      expect(portal.status).toBe(409);
      expect(portal.body.error).toMatchObject({ code: "conflict", details: { max_endpoints: 3 } });
      expect((await call(capped, "POST", base, { key: k, body: { url: "https://more.customer.example/" } })).status).toBe(409);
      // Many at once cannot overshoot it either.
      await call(capped, "DELETE", `${base}/${made[0]!.id}`, { key: k });
      const race = await Promise.all(Array.from({ length: 5 }, (_, i) => call(capped, "POST", base, { headers: h, body: { url: `https://race${i}.customer.example/` } })));
      expect(race.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409]);
      expect((await call(capped, "GET", base, { key: k })).body.endpoints).toHaveLength(3);
    } finally {
      await capped.close();
    }
  });

  it("is 20 by default", () => {
    expect(server.deps.settings.maxEndpointsPerApp).toBe(20);
  });
});

describe("portal resends", () => {
  it("are limited per application and minute (429 with Retry-After); the operator's are not; the next minute they work again", async () => {
    const clock = manualClock(new Date());
    const { server: s, key: k } = await startClockedServer(clock, { HOOKRELAY_PORTAL_RESENDS_PER_MINUTE: "2" });
    try {
      const app = await createApp(s, k);
      const endpoint = await createEndpoint(s, k, app.id, { url: `${sink.url}/resend` });
      const m = await sendMessage(s, k, app.id, { event_type: "resend.test", payload: {} });
      const h = asPortal(await portalToken(s, k, app.id));
      const resend = (auth: { headers?: Record<string, string>; key?: string }) => call(s, "POST", `/v1/applications/${app.id}/messages/${m.id}/resend`, { ...auth, body: { endpoint_id: endpoint.id } });
      expect((await resend({ headers: h })).status).toBe(202);
      expect((await resend({ headers: h })).status).toBe(202);
      const refused = await resend({ headers: h });
      expect(refused.status).toBe(429);
      expect(refused.body.error.code).toBe("rate_limited");
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(Number(refused.headers.get("retry-after"))).toBeLessThanOrEqual(60);
      expect((await resend({ key: k })).status).toBe(202);
      // A second link to the same application shares the count.
      expect((await resend({ headers: asPortal(await portalToken(s, k, app.id)) })).status).toBe(429);
      clock.advance(59_000);
      expect((await resend({ headers: h })).status).toBe(429);
      clock.advance(1_000);
      expect((await resend({ headers: h })).status).toBe(202);
    } finally {
      await s.close();
    }
  });
});

describe("revoking portal links", () => {
  it("POST …/portal/revoke makes every link issued so far answer 401 at once; a link minted afterwards works", async () => {
    const app = await createApp(server, key);
    const [a, b] = [await portalToken(server, key, app.id), await portalToken(server, key, app.id)];
    expect((await call(server, "GET", "/v1/portal/session", { headers: asPortal(a) })).status).toBe(200);
    // Not the portal's to call, nor a read key's.
    expect((await call(server, "POST", `/v1/applications/${app.id}/portal/revoke`, { headers: asPortal(a) })).status).toBe(403);
    expect((await call(server, "POST", `/v1/applications/${app.id}/portal/revoke`, { key: await server.apiKey("read") })).status).toBe(403);
    expect((await call(server, "POST", "/v1/applications/nobody/portal/revoke", { key })).status).toBe(404);

    const revoked = await call(server, "POST", `/v1/applications/${app.uid}/portal/revoke`, { key });
    expect(revoked).toMatchObject({ status: 200, body: { success: true } });
    for (const token of [a, b]) {
      const res = await call(server, "GET", `/v1/applications/${app.id}/endpoints`, { headers: asPortal(token) });
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe("unauthorized");
    }
    const fresh = await portalToken(server, key, app.id);
    expect((await call(server, "GET", `/v1/applications/${app.id}/endpoints`, { headers: asPortal(fresh) })).status).toBe(200);
    expect((await call(server, "GET", "/v1/portal/session", { headers: asPortal(a) })).status).toBe(401);
  });

  it("disabling the application revokes its links; enabling it again does not bring them back", async () => {
    const app = await createApp(server, key);
    const before = await portalToken(server, key, app.id);
    expect((await call(server, "PATCH", `/v1/applications/${app.id}`, { key, body: { status: "disabled" } })).status).toBe(200);
    expect((await call(server, "GET", "/v1/portal/session", { headers: asPortal(before) })).status).toBe(401);
    // A disabled application has no portal.
    expect((await call(server, "POST", `/v1/applications/${app.id}/portal`, { key })).status).toBe(409);
    expect((await call(server, "PATCH", `/v1/applications/${app.id}`, { key, body: { status: "active" } })).status).toBe(200);
    expect((await call(server, "GET", "/v1/portal/session", { headers: asPortal(before) })).status).toBe(401);
    expect((await call(server, "GET", "/v1/portal/session", { headers: asPortal(await portalToken(server, key, app.id)) })).status).toBe(200);
  });
});

describeOnly("postgres", "revoking portal links on two nodes", "several serve nodes share one PostgreSQL database", () => {
  let a: TestServer;
  let b: TestServer;
  let k: string;
  beforeAll(async () => {
    a = await startTestServer();
    b = await startTestServer({ HOOKRELAY_DATABASE_URL: a.storeEnv.HOOKRELAY_DATABASE_URL!, HOOKRELAY_SECRET_KEY: a.storeEnv.HOOKRELAY_SECRET_KEY! }, tempDir());
    k = await a.apiKey();
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it("a link revoked or disabled through one node answers 401 on the other at once", async () => {
    const app = await createApp(a, k);
    const token = await portalToken(a, k, app.id);
    expect((await call(b, "GET", "/v1/portal/session", { headers: asPortal(token) })).status).toBe(200);
    expect((await call(a, "POST", `/v1/applications/${app.id}/portal/revoke`, { key: k })).status).toBe(200);
    expect((await call(b, "GET", "/v1/portal/session", { headers: asPortal(token) })).status).toBe(401);

    const second = await portalToken(a, k, app.id);
    expect((await call(a, "GET", "/v1/portal/session", { headers: asPortal(second) })).status).toBe(200);
    expect((await call(b, "PATCH", `/v1/applications/${app.id}`, { key: k, body: { status: "disabled" } })).status).toBe(200);
    expect((await call(a, "GET", "/v1/portal/session", { headers: asPortal(second) })).status).toBe(401);
  });
});
