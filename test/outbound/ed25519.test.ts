import { createPublicKey, verify } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { manualClock } from "../../src/core/clock";
import { auditLog } from "../../src/db/schema";
import { createApiKey } from "../../src/domain/apiKeys";
import { defaultScope } from "../../src/domain/bootstrap";
import { createLogger } from "../../src/observability/logger";
import { pipeline, sendEvent, waitFor } from "../helpers/delivery";
import { call, startTestServer, tempDir, type TestServer } from "../helpers/server";
import type { SinkRequest } from "../helpers/sink";
import { createApp, createEndpoint, outboundSink, sendMessage, verifiesWith } from "./helpers";

/**
 * Ed25519 signatures (Standard Webhooks `v1a`, docs/outbound.md
 * "Signatures"): every request is checked the way a receiver holding only
 * the public key would, with node:crypto's Ed25519 verify and the key that
 * GET …/public-key answers to a read key. The server's clock is the test's,
 * so a rotation's overlap passes in a moment. Every log line is kept, to
 * show that no private key is ever written to one.
 *
 * The `standardwebhooks` library (1.1.1, the devDependency) verifies `v1`
 * (HMAC) only: it has no `v1a` support, so it cannot check these requests;
 * the test shows that it finds no `v1` signature among them rather than
 * accepting them.
 */
const clock = manualClock(new Date());
const logLines: string[] = [];
let server: TestServer, key: string, readKey: string;
const sink = outboundSink();

beforeAll(async () => {
  server = await startTestServer({}, tempDir(), clock, createLogger({ level: "debug", format: "json", out: (line) => logLines.push(line) }));
  const scope = await defaultScope(server.deps.db);
  if (!scope) throw new Error("no default scope");
  const caller = { ...scope, userId: null, via: "local" as const, role: "owner" as const };
  ({ key } = await createApiKey(server.deps, { ...caller, scopes: "*" }, { name: "full" }));
  ({ key: readKey } = await createApiKey(server.deps, { ...caller, scopes: "*" }, { name: "read", scopes: "read" }));
});
afterAll(async () => {
  sink.close();
  await server.close();
});

/** `whpk_<base64 of 32 bytes>` as a node:crypto key: the SPKI DER prefix of Ed25519 (RFC 8410) and the raw key. */
function publicKeyObject(whpk: string) {
  expect(whpk).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/);
  return createPublicKey({ key: Buffer.concat([Buffer.from("302a300506032b6570032100", "hex"), Buffer.from(whpk.slice(5), "base64")]), format: "der", type: "spki" });
}

/** Which of the request's `v1a` signatures the public key verifies (one boolean per entry, in order). */
function v1aVerified(whpk: string, req: Pick<SinkRequest, "headers" | "body">): boolean[] {
  const signed = Buffer.from(`${req.headers["webhook-id"]}.${req.headers["webhook-timestamp"]}.${req.body}`);
  return req.headers["webhook-signature"]!.split(" ")
    .filter((entry) => entry.startsWith("v1a,"))
    .map((entry) => verify(null, signed, publicKeyObject(whpk), Buffer.from(entry.slice(4), "base64")));
}

async function receive(path: string, count: number) {
  return waitFor(async () => (sink.at(path).length >= count ? sink.at(path) : null), { what: `${count} requests at ${path}` });
}

async function publicKey(path: string): Promise<string> {
  const res = await call(server, "GET", `${path}/public-key`, { key: readKey });
  expect(res.status).toBe(200);
  expect(res.body).toEqual({ public_key: expect.stringMatching(/^whpk_/), algorithm: "ed25519" });
  return res.body.public_key;
}

/** The private key, read the one way it may be: the secret route with a full key. */
async function privateKey(path: string): Promise<string> {
  const res = await call(server, "GET", `${path}/secret`, { key });
  expect(res.status).toBe(200);
  expect(res.body.secret).toMatch(/^whsk_[A-Za-z0-9+/]{43}=$/);
  return res.body.secret;
}

/** Neither the key nor its base64 part appears in any GET body given, any log line or any audit entry. */
async function nowhere(whsk: string, bodies: unknown[]) {
  const needles = [whsk, whsk.slice("whsk_".length)];
  const audit = JSON.stringify(await server.deps.db.select().from(auditLog));
  const auditApi = await call(server, "GET", "/v1/audit-log?limit=100", { key });
  expect(auditApi.status).toBe(200);
  for (const needle of needles) {
    for (const body of bodies) expect(JSON.stringify(body)).not.toContain(needle);
    expect(logLines.join("\n")).not.toContain(needle);
    expect(audit).not.toContain(needle);
    expect(JSON.stringify(auditApi.body)).not.toContain(needle);
  }
}

describe("an ed25519 endpoint (outbound messages)", () => {
  it("signs v1a, verified with the public key a read key reads, and never shows the private key", async () => {
    const app = await createApp(server, key);
    const e = await createEndpoint(server, key, app.id, { url: `${sink.url}/ed`, signing_algorithm: "ed25519" });
    expect(e.signing_algorithm).toBe("ed25519");
    const path = `/v1/applications/${app.id}/endpoints/${e.id}`;
    const whpk = await publicKey(path);

    // The read key cannot read the private key.
    const refused = await call(server, "GET", `${path}/secret`, { key: readKey });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe("forbidden");

    const payloads = [{ a: 1 }, { text: "grüße ✓ 日本" }, [1, "two"], null];
    const sent = [];
    for (const payload of payloads) sent.push(await sendMessage(server, key, app.id, { event_type: "ed.check", payload }));
    const requests = await receive("/ed", payloads.length);
    for (const req of requests) {
      expect(req.headers["webhook-signature"]).toMatch(/^v1a,[A-Za-z0-9+/]{86}==$/);
      expect(v1aVerified(whpk, req)).toEqual([true]);
      // No v1 entry: the HMAC library finds nothing it can check.
      expect(() => new StandardWebhook(`whsec_${Buffer.alloc(32, 1).toString("base64")}`).verify(req.body, req.headers)).toThrow();
    }
    expect(requests.map((r) => r.headers["webhook-id"]).sort()).toEqual(sent.map((m) => m.id).sort());
    // A changed body does not verify.
    expect(v1aVerified(whpk, { ...requests[0]!, body: `${requests[0]!.body} ` })).toEqual([false]);

    const whsk = await privateKey(path);
    const bodies = [(await call(server, "GET", path, { key })).body, (await call(server, "GET", `/v1/applications/${app.id}/endpoints`, { key })).body, (await call(server, "GET", path, { key: readKey })).body];
    await nowhere(whsk, bodies);
  });

  it("sends both signatures during a rotation's overlap, the new key's alone after it", async () => {
    const app = await createApp(server, key);
    const e = await createEndpoint(server, key, app.id, { url: `${sink.url}/ed-rotating`, signing_algorithm: "ed25519" });
    const path = `/v1/applications/${app.id}/endpoints/${e.id}`;
    const oldKey = await publicKey(path);
    const rotated = await call(server, "POST", `${path}/secret/rotate`, { key });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsk_/);
    const newKey = await publicKey(path);
    expect(newKey).not.toBe(oldKey);
    const rotatedAt = clock.now().getTime();

    await sendMessage(server, key, app.id, { event_type: "rot.a", payload: { n: 1 } });
    let [req] = await receive("/ed-rotating", 1);
    // `v1a,<new> v1a,<old>`
    expect(req!.headers["webhook-signature"]!.split(" ")).toHaveLength(2);
    expect(v1aVerified(newKey, req!)).toEqual([true, false]);
    expect(v1aVerified(oldKey, req!)).toEqual([false, true]);

    clock.set(new Date(rotatedAt + 24 * 3600_000 - 60_000));
    await sendMessage(server, key, app.id, { event_type: "rot.b", payload: { n: 2 } });
    req = (await receive("/ed-rotating", 2))[1];
    expect(v1aVerified(newKey, req!)).toEqual([true, false]);
    expect(v1aVerified(oldKey, req!)).toEqual([false, true]);

    clock.set(new Date(rotatedAt + 24 * 3600_000));
    await sendMessage(server, key, app.id, { event_type: "rot.c", payload: { n: 3 } });
    req = (await receive("/ed-rotating", 3))[2];
    expect(v1aVerified(newKey, req!)).toEqual([true]);
    expect(v1aVerified(oldKey, req!)).toEqual([false]);

    // The rotation's audit entry names the rotation, never the keys.
    await nowhere(rotated.body.secret, []);
  });

  it("switching from hmac-sha256 makes a key pair, and the HMAC secret keeps signing (v1) through the overlap", async () => {
    const app = await createApp(server, key);
    const e = await createEndpoint(server, key, app.id, { url: `${sink.url}/ed-switch` });
    const path = `/v1/applications/${app.id}/endpoints/${e.id}`;
    const hmac = await call(server, "GET", `${path}/secret`, { key });
    const noKey = await call(server, "GET", `${path}/public-key`, { key: readKey });
    expect(noKey.status).toBe(409);
    expect(noKey.body.error.code).toBe("conflict");

    const patched = await call(server, "PATCH", path, { key, body: { signing_algorithm: "ed25519" } });
    expect(patched.status).toBe(200);
    expect(patched.body.endpoint.signing_algorithm).toBe("ed25519");
    const whpk = await publicKey(path);
    await sendMessage(server, key, app.id, { event_type: "sw.a", payload: { n: 1 } });
    const [req] = await receive("/ed-switch", 1);
    const [v1a, v1] = req!.headers["webhook-signature"]!.split(" ");
    expect(v1a).toMatch(/^v1a,/);
    expect(v1).toMatch(/^v1,/);
    expect(v1aVerified(whpk, req!)).toEqual([true]);
    expect(verifiesWith(hmac.body.secret, req!, clock.now())).toEqual({ standardwebhooks: true, svix: true });
  });

  it("refuses a key of the other kind, and an unknown algorithm", async () => {
    const app = await createApp(server, key);
    const base = `/v1/applications/${app.id}/endpoints`;
    const whsec = `whsec_${Buffer.alloc(32, 2).toString("base64")}`;
    const mismatch = await call(server, "POST", base, { key, body: { url: `${sink.url}/x`, signing_algorithm: "ed25519", secret: whsec } });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error.details.map((d: { field: string }) => d.field)).toContain("body.secret");
    const short = await call(server, "POST", base, { key, body: { url: `${sink.url}/x`, secret: `whsk_${Buffer.alloc(16).toString("base64")}` } });
    expect(short.status).toBe(400);
    // A given whsk_ key alone chooses ed25519.
    const given = await call(server, "POST", base, { key, body: { url: `${sink.url}/x`, secret: `whsk_${Buffer.alloc(32, 3).toString("base64")}` } });
    expect(given.status).toBe(201);
    expect(given.body.endpoint.signing_algorithm).toBe("ed25519");
  });
});

describe("an ed25519 destination (relayed events)", () => {
  it("signs v1a, verified with the public key a read key reads; switching back to hmac-sha256 ends the public key", async () => {
    const { sourceId, destinationId } = await pipeline(server, key, { url: `${sink.url}/relay`, destination: { signing_algorithm: "ed25519" } });
    const path = `/v1/destinations/${destinationId}`;
    const got = await call(server, "GET", path, { key: readKey });
    expect(got.body.destination.signing_algorithm).toBe("ed25519");
    const whpk = await publicKey(path);
    expect((await call(server, "GET", `${path}/secret`, { key: readKey })).status).toBe(403);

    const eventId = await sendEvent(server, sourceId, { order: 1, note: "ünïcode" });
    const [req] = await receive("/relay", 1);
    expect(req!.headers["webhook-id"]).toBe(eventId);
    expect(v1aVerified(whpk, req!)).toEqual([true]);

    const whsk = await privateKey(path);
    await nowhere(whsk, [got.body, (await call(server, "GET", "/v1/destinations", { key })).body, (await call(server, "GET", path, { key })).body]);

    // A new key given by PATCH signs from then on.
    const given = `whsk_${Buffer.alloc(32, 7).toString("base64")}`;
    expect((await call(server, "PATCH", path, { key, body: { signing_secret: given } })).status).toBe(200);
    const givenPublic = await publicKey(path);
    expect(givenPublic).not.toBe(whpk);
    await waitFor(async () => {
      const before = sink.at("/relay").length;
      await sendEvent(server, sourceId, { order: 2 });
      const [last] = (await receive("/relay", before + 1)).slice(-1);
      return v1aVerified(givenPublic, last!)[0];
    }, { what: "the given key signing (the destination cache refreshed)" });
    await nowhere(given, []);

    const back = await call(server, "PATCH", path, { key, body: { signing_algorithm: "hmac-sha256" } });
    expect(back.body.destination.signing_algorithm).toBe("hmac-sha256");
    expect((await call(server, "GET", `${path}/public-key`, { key: readKey })).status).toBe(409);
    expect((await call(server, "GET", `${path}/secret`, { key })).body.secret).toMatch(/^whsec_/);
  });
});
