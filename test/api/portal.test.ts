import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { manualClock } from "../../src/core/clock";
import { startClockedServer } from "../helpers/clockedServer";
import { waitFor } from "../helpers/delivery";
import { call, type TestServer } from "../helpers/server";
import { useServer } from "../helpers/fixture";
import { createApp, createEndpoint, getMessage, outboundSink, sendMessage } from "../outbound/helpers";

let server: TestServer, key: string;
const sink = outboundSink();
let app: { id: string; uid: string };
let otherApp: { id: string; uid: string };

useServer({}, (s) => ({ server, key } = s));
beforeAll(async () => {
  // Opted in: the portal adds endpoints on the test's local receiver (docs/outbound.md, "What a portal link can reach").
  app = await createApp(server, key, { uid: "portal-app", name: "Portal customer", allow_private_endpoints: true });
  otherApp = await createApp(server, key, { uid: "portal-other" });
});
afterAll(async () => {
  sink.close();
});

async function portalToken(appId: string, body?: unknown, s: TestServer = server, k = key): Promise<{ token: string; url: string; expires_at: string }> {
  const res = await call(s, "POST", `/v1/applications/${appId}/portal`, { key: k, body });
  if (res.status !== 200) throw new Error(`portal link: ${res.status} ${JSON.stringify(res.body)}`);
  const token = new URL(res.body.url).hash.replace(/^#token=/, "");
  return { ...res.body, token };
}

const asPortal = (token: string) => ({ authorization: `Bearer ${token}` });

describe("POST /v1/applications/{appId}/portal", () => {
  it("answers {url, expires_at}: a link to the portal page with the token in its fragment, for an hour by default", async () => {
    const before = Date.now();
    const res = await call(server, "POST", "/v1/applications/portal-app/portal", { key });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(["expires_at", "url"]);
    expect(res.body.url).toMatch(new RegExp(`^${server.deps.settings.baseUrl}/portal#token=hrp_[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$`));
    const ttl = Date.parse(res.body.expires_at) - before;
    expect(ttl).toBeGreaterThan(3600_000 - 5000);
    expect(ttl).toBeLessThanOrEqual(3600_000 + 1000);
  });

  it("takes expires_in (60 s to 7 days) and refuses other values, an unknown application, and a read-only key", async () => {
    const link = await portalToken(app.id, { expires_in: 120 });
    expect(Date.parse(link.expires_at) - Date.now()).toBeLessThanOrEqual(121_000);
    for (const expires_in of [59, 7 * 86400 + 1, "60", 1.5]) expect((await call(server, "POST", `/v1/applications/${app.id}/portal`, { key, body: { expires_in } })).status).toBe(400);
    expect((await call(server, "POST", "/v1/applications/nobody/portal", { key })).status).toBe(404);
    expect((await call(server, "POST", `/v1/applications/${app.id}/portal`, { key: await server.apiKey("read") })).status).toBe(403);
  });
});

describe("a portal link's token", () => {
  it("reads its endpoints' Ed25519 public keys, so the customer can verify v1a signatures", async () => {
    const { token } = await portalToken(app.uid);
    const h = asPortal(token);
    const made = await call(server, "POST", `/v1/applications/${app.id}/endpoints`, { headers: h, body: { url: `${sink.url}/portal-ed`, signing_algorithm: "ed25519" } });
    expect(made.status).toBe(201);
    const read = await call(server, "GET", `/v1/applications/${app.id}/endpoints/${made.body.endpoint.id}/public-key`, { headers: h });
    expect(read.status).toBe(200);
    expect(read.body).toEqual({ public_key: expect.stringMatching(/^whpk_[A-Za-z0-9+/]{43}=$/), algorithm: "ed25519" });
    const other = await createEndpoint(server, key, otherApp.id, { url: "https://other.example.com/", signing_algorithm: "ed25519" });
    expect((await call(server, "GET", `/v1/applications/${otherApp.id}/endpoints/${other.id}/public-key`, { headers: h })).status).toBe(404);
  });

  it("manages the application's endpoints and messages without any login: endpoints, secret reveal and rotation, event types, attempts, resend", async () => {
    const { token } = await portalToken(app.uid);
    const h = asPortal(token);
    const session = await call(server, "GET", "/v1/portal/session", { headers: h });
    expect(session.status).toBe(200);
    expect(session.body.application).toMatchObject({ id: app.id, uid: "portal-app", name: "Portal customer" });
    expect(session.body.expires_at).toMatch(/Z$/);

    await call(server, "POST", "/v1/event-types", { key, body: { name: "portal.event" } });
    const types = await call(server, "GET", `/v1/applications/${app.id}/event-types`, { headers: h });
    expect(types.body.event_types.map((t: { name: string }) => t.name)).toContain("portal.event");

    const created = await call(server, "POST", `/v1/applications/${app.id}/endpoints`, { headers: h, body: { url: `${sink.url}/portal`, filter_types: ["portal.event"] } });
    expect(created.status).toBe(201);
    const endpointId = created.body.endpoint.id;
    expect((await call(server, "PATCH", `/v1/applications/${app.uid}/endpoints/${endpointId}`, { headers: h, body: { description: "mine" } })).body.endpoint.description).toBe("mine");
    const secret = await call(server, "GET", `/v1/applications/${app.id}/endpoints/${endpointId}/secret`, { headers: h });
    expect(secret.body.secret).toMatch(/^whsec_/);
    const rotated = await call(server, "POST", `/v1/applications/${app.id}/endpoints/${endpointId}/secret/rotate`, { headers: h });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).not.toBe(secret.body.secret);

    const m = await sendMessage(server, key, app.id, { event_type: "portal.event", payload: { hello: "portal" } });
    await waitFor(async () => ((await getMessage(server, key, app.id, m.id)).status === "delivered" ? true : null));
    const list = await call(server, "GET", `/v1/applications/${app.id}/messages`, { headers: h });
    expect(list.body.messages.map((x: { id: string }) => x.id)).toContain(m.id);
    const attempts = await call(server, "GET", `/v1/applications/${app.id}/messages/${m.id}/attempts`, { headers: h });
    expect(attempts.body.attempts[0]).toMatchObject({ status: "success", response_status: 200 });
    expect((await call(server, "POST", `/v1/applications/${app.id}/messages/${m.id}/resend`, { headers: h, body: { endpoint_id: endpointId } })).status).toBe(202);
    expect((await call(server, "GET", `/v1/applications/${app.id}/endpoints/${endpointId}/attempts`, { headers: h })).status).toBe(200);
    // X-API-Key carries it as well as Authorization: Bearer.
    expect((await call(server, "GET", `/v1/applications/${app.id}`, { headers: { "x-api-key": token } })).status).toBe(200);
    expect((await call(server, "DELETE", `/v1/applications/${app.id}/endpoints/${endpointId}`, { headers: h })).body).toEqual({ success: true });
  });

  it("is refused (403) by every route /v1/openapi.json does not list it for, and finds no other application (404) on those it is listed for", async () => {
    const { token } = await portalToken(app.id);
    const h = asPortal(token);
    const spec = (await call(server, "GET", "/v1/openapi.json", { key })).body as { paths: Record<string, Record<string, { security?: Record<string, unknown>[] }>> };
    const endpoint = await createEndpoint(server, key, app.id, { url: `${sink.url}/scope`, status: "disabled" });
    const message = await sendMessage(server, key, app.id, { event_type: "scope.check", payload: {} });
    const hex = "0123456789abcdef0123456789abcdef";
    let refused = 0;
    let granted = 0;
    for (const [path, ops] of Object.entries(spec.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        if (!["get", "post", "patch", "put", "delete"].includes(method)) continue;
        // Public routes (login, ingest) answer without credentials: the token plays no part there.
        if (path === "/auth/login" || (op.security && op.security.length === 0)) continue;
        const forPortal = (op.security ?? []).some((s) => "portal" in s);
        const fill = (appRef: string) =>
          "/v1" +
          path
            .replace("{appId}", appRef)
            .replace(/\/endpoints\/\{id\}/, `/endpoints/${endpoint.id}`)
            .replace(/\/messages\/\{id\}/, `/messages/${message.id}`)
            .replace(/\{[^}]+\}/g, hex);
        // Valid bodies, so that what answers is the route's scope and not its validation.
        const bodies: Record<string, unknown> = {
          "post /applications/{appId}/endpoints": { url: "https://portal.example.com/" },
          "patch /applications/{appId}/endpoints/{id}": { description: "x" },
          "post /applications/{appId}/messages/{id}/resend": { endpoint_id: endpoint.id },
        };
        const body = method === "get" || method === "delete" ? undefined : (bodies[`${method} ${path}`] ?? {});
        const own = await call(server, method.toUpperCase(), fill(app.id), { headers: h, body });
        const label = `${method.toUpperCase()} ${path}`;
        if (forPortal) {
          granted++;
          expect([401, 403], label).not.toContain(own.status);
          expect(own.status, label).toBeLessThan(500);
          if (path.includes("{appId}")) {
            const other = await call(server, method.toUpperCase(), fill(otherApp.id), { headers: h, body });
            expect(other.status, `${label} for another application`).toBe(404);
          }
        } else {
          refused++;
          expect(own.status, label).toBe(403);
          expect(own.body.error.code, label).toBe("forbidden");
        }
      }
    }
    expect(granted).toBe(16);
    expect(refused).toBeGreaterThan(50);
    // The same token, a step outside: listing applications, sending a message, minting another link.
    expect((await call(server, "GET", "/v1/applications", { headers: h })).status).toBe(403);
    expect((await call(server, "POST", `/v1/applications/${app.id}/messages`, { headers: h, body: { event_type: "a", payload: {} } })).status).toBe(403);
    expect((await call(server, "POST", `/v1/applications/${app.id}/portal`, { headers: h })).status).toBe(403);
    // An API key or a session gets no portal session.
    expect((await call(server, "GET", "/v1/portal/session", { key })).status).toBe(403);
  });

  it("is refused once tampered with, once its application is deleted, and after it expires", async () => {
    const { token } = await portalToken(otherApp.id);
    const [body, mac] = token.split(".");
    const claims = JSON.parse(Buffer.from(body!.slice(4), "base64url").toString());
    const forged = `hrp_${Buffer.from(JSON.stringify({ ...claims, app: app.id })).toString("base64url")}.${mac}`;
    expect((await call(server, "GET", `/v1/applications/${app.id}`, { headers: asPortal(forged) })).status).toBe(401);
    expect((await call(server, "GET", `/v1/applications/${app.id}`, { headers: asPortal("hrp_garbage") })).status).toBe(401);

    const doomed = await createApp(server, key);
    const link = await portalToken(doomed.id);
    await call(server, "DELETE", `/v1/applications/${doomed.id}`, { key });
    expect((await call(server, "GET", `/v1/applications/${doomed.id}/endpoints`, { headers: asPortal(link.token) })).status).toBe(404);
    expect((await call(server, "GET", "/v1/portal/session", { headers: asPortal(link.token) })).status).toBe(404);

    const clock = manualClock(new Date());
    // A server with another secret key (as another data dir's key file would be, on SQLite).
    const clocked = await startClockedServer(clock, { HOOKRELAY_SECRET_KEY: "another-secret-key-for-the-clocked-server" });
    try {
      const a = await createApp(clocked.server, clocked.key);
      const short = await portalToken(a.id, { expires_in: 60 }, clocked.server, clocked.key);
      expect((await call(clocked.server, "GET", `/v1/applications/${a.id}`, { headers: asPortal(short.token) })).status).toBe(200);
      clock.advance(60_000);
      const expired = await call(clocked.server, "GET", `/v1/applications/${a.id}`, { headers: asPortal(short.token) });
      expect(expired.status).toBe(401);
      expect(expired.body.error.code).toBe("unauthorized");
      // Another secret key signs differently: the clocked server's token means nothing here.
      expect((await call(server, "GET", `/v1/applications/${a.id}`, { headers: asPortal(short.token) })).status).toBe(401);
    } finally {
      await clocked.server.close();
    }
  });
});
