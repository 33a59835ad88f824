import { createHash, randomBytes } from "node:crypto";
import { sign as githubSign } from "@octokit/webhooks-methods";
import { Webhook as StandardWebhook } from "standardwebhooks";
import Stripe from "stripe";
import { Webhook as SvixWebhook } from "svix";
import { beforeAll, describe, expect, it } from "vitest";
import { ACCEPTED_STATUS, createSource, getEvent, hmacB64, hmacHex, ingest, nowSeconds } from "../helpers/ingest";
import { call, type TestServer } from "../helpers/server";
import { useServer } from "../helpers/fixture";
import { eq } from "drizzle-orm";
import { sources } from "../../src/db/schema";

let server: TestServer, key: string;
useServer({}, (s) => ({ server, key } = s));

const stripe = new Stripe("sk_test_unused");

/** A failed signature: 401 signature_invalid, and the event is stored as failed/rejected with the reason. */
async function expectRejected(res: Awaited<ReturnType<typeof ingest>>, reason?: RegExp) {
  expect(res.status).toBe(401);
  expect(res.body.error.code).toBe("signature_invalid");
  const eventId = res.body.error.details.event_id;
  expect(eventId).toMatch(/^evt_[0-9a-f]{32}$/);
  const event = await getEvent(server, key, eventId);
  expect(event).toMatchObject({ verification_status: "failed", status: "rejected", dedup_status: "skipped" });
  if (reason) expect(event.verification_error).toMatch(reason);
  return event;
}

async function expectVerified(res: Awaited<ReturnType<typeof ingest>>) {
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body).toEqual({ success: true, event_id: expect.stringMatching(/^evt_[0-9a-f]{32}$/) });
  const event = await getEvent(server, key, res.body.event_id);
  expect(event).toMatchObject({ verification_status: "verified", status: expect.stringMatching(ACCEPTED_STATUS), verification_error: null });
  return event;
}

describe("GitHub template (signed with @octokit/webhooks-methods)", () => {
  const secret = "It's a Secret to Everybody";
  let id: string;
  beforeAll(async () => {
    id = (await createSource(server, key, { name: "github", template: "github", verification_secret: secret })).id;
  });

  it("verifies a signed push and stores it byte-exact with its event type", async () => {
    const body = JSON.stringify({ ref: "refs/heads/main", commits: [{ id: "abc" }] }, null, 2);
    const res = await ingest(server, id, { body, headers: { "x-hub-signature-256": await githubSign(secret, body), "x-github-event": "push", "x-github-delivery": "d-1" } });
    const event = await expectVerified(res);
    expect(event.body).toBe(body);
    expect(event.event_type).toBe("push");
  });

  it("rejects a wrong secret, an altered body, a missing header and a garbled signature", async () => {
    const body = '{"action":"opened"}';
    await expectRejected(await ingest(server, id, { body, headers: { "x-hub-signature-256": await githubSign("wrong", body) } }), /does not match/);
    await expectRejected(await ingest(server, id, { body: body + " ", headers: { "x-hub-signature-256": await githubSign(secret, body) } }));
    await expectRejected(await ingest(server, id, { body }), /missing signature header/);
    await expectRejected(await ingest(server, id, { body, headers: { "x-hub-signature-256": "sha256=zzzz" } }));
    await expectRejected(await ingest(server, id, { body, headers: { "x-hub-signature-256": "sha256=" } }));
  });

  it("does not deliver rejected events: they never get status pending", async () => {
    const list = await call(server, "GET", `/v1/events?source_id=${id}&verification_status=failed`, { key });
    expect(list.body.events.length).toBeGreaterThanOrEqual(5);
    expect(list.body.events.every((e: { status: string }) => e.status === "rejected")).toBe(true);
  });
});

describe("Stripe template (signed with stripe.webhooks.generateTestHeaderString)", () => {
  const secret = "whsec_test_" + randomBytes(12).toString("hex");
  let id: string;
  beforeAll(async () => {
    id = (await createSource(server, key, { name: "stripe", template: "stripe", verification_secret: secret })).id;
  });
  // A fresh event id each time: the template dedups by it.
  const newPayload = () => JSON.stringify({ id: "evt_" + randomBytes(8).toString("hex"), object: "event", type: "invoice.paid" });

  it("verifies a fresh signature", async () => {
    const payload = newPayload();
    const header = stripe.webhooks.generateTestHeaderString({ payload, secret });
    const event = await expectVerified(await ingest(server, id, { body: payload, headers: { "stripe-signature": header } }));
    expect(event.event_type).toBe("invoice.paid");
  });

  it("accepts any v1 entry (rotation) and ignores other schemes", async () => {
    const payload = newPayload();
    const good = stripe.webhooks.generateTestHeaderString({ payload, secret });
    const t = /t=(\d+)/.exec(good)![1];
    const v1 = /v1=([0-9a-f]+)/.exec(good)![1];
    const header = `t=${t},v1=${"0".repeat(64)},v0=abc,v1=${v1}`;
    await expectVerified(await ingest(server, id, { body: payload, headers: { "stripe-signature": header } }));
  });

  it("rejects stale and future timestamps beyond 300 s, and a wrong secret", async () => {
    const payload = newPayload();
    const stale = stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp: nowSeconds() - 301 });
    await expectRejected(await ingest(server, id, { body: payload, headers: { "stripe-signature": stale } }), /older than/);
    const future = stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp: nowSeconds() + 400 });
    await expectRejected(await ingest(server, id, { body: payload, headers: { "stripe-signature": future } }), /future/);
    const okOld = stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp: nowSeconds() - 250 });
    await expectVerified(await ingest(server, id, { body: payload, headers: { "stripe-signature": okOld } }));
    const wrong = stripe.webhooks.generateTestHeaderString({ payload, secret: "whsec_other" });
    await expectRejected(await ingest(server, id, { body: payload, headers: { "stripe-signature": wrong } }));
  });

  it("rejects a header without t= or v1=", async () => {
    const payload = newPayload();
    await expectRejected(await ingest(server, id, { body: payload, headers: { "stripe-signature": `v1=${"a".repeat(64)}` } }), /timestamp/);
    await expectRejected(await ingest(server, id, { body: payload, headers: { "stripe-signature": `t=${nowSeconds()}` } }), /no v1/);
  });
});

describe("Svix template (signed with svix)", () => {
  const secret = "whsec_" + randomBytes(24).toString("base64");
  let id: string;
  beforeAll(async () => {
    id = (await createSource(server, key, { name: "svix", template: "svix", verification_secret: secret })).id;
  });

  it("verifies svix-* headers and rejects an altered body", async () => {
    const payload = JSON.stringify({ type: "user.created", data: { id: 1 } });
    const msgId = "msg_" + randomBytes(8).toString("hex");
    const ts = new Date();
    const sig = new SvixWebhook(secret).sign(msgId, ts, payload);
    const headers = { "svix-id": msgId, "svix-timestamp": String(Math.floor(ts.getTime() / 1000)), "svix-signature": sig };
    await expectVerified(await ingest(server, id, { body: payload, headers }));
    await expectRejected(await ingest(server, id, { body: payload.replace("1", "2"), headers }));
  });
});

describe("Standard Webhooks (signed with standardwebhooks)", () => {
  const raw = randomBytes(32).toString("base64");
  const secret = "whsec_" + raw;
  let id: string;
  beforeAll(async () => {
    id = (await createSource(server, key, { name: "stdwh", verification_type: "standard-webhooks", verification_secret: secret })).id;
  });
  const payload = '{"type":"order.created","data":{"id":"o1"}}';
  const signed = (at: Date, secretToUse = secret, msgId = "msg_1") => ({
    "webhook-id": msgId,
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": new StandardWebhook(secretToUse).sign(msgId, at, payload),
  });

  it("is on by default when type and secret are given, and verifies", async () => {
    const s = (await call(server, "GET", `/v1/sources/${id}`, { key })).body.source;
    expect(s.verification_enabled).toBe(1);
    await expectVerified(await ingest(server, id, { body: payload, headers: signed(new Date()) }));
  });

  it("passes when any of several space-separated signatures matches (rotation)", async () => {
    const other = "whsec_" + randomBytes(32).toString("base64");
    const good = signed(new Date());
    const bad = signed(new Date(), other);
    const headers = { ...good, "webhook-signature": `${bad["webhook-signature"]} v2,abc ${good["webhook-signature"]}` };
    await expectVerified(await ingest(server, id, { body: payload, headers }));
    await expectRejected(await ingest(server, id, { body: payload, headers: { ...good, "webhook-signature": bad["webhook-signature"] } }));
  });

  it("rejects stale and future timestamps and each missing header", async () => {
    await expectRejected(await ingest(server, id, { body: payload, headers: signed(new Date(Date.now() - 301_000)) }), /older/);
    await expectRejected(await ingest(server, id, { body: payload, headers: signed(new Date(Date.now() + 301_000)) }), /future/);
    for (const missing of ["webhook-id", "webhook-timestamp", "webhook-signature"]) {
      const headers: Record<string, string> = signed(new Date());
      delete headers[missing];
      await expectRejected(await ingest(server, id, { body: payload, headers }), new RegExp(`missing header ${missing}`));
    }
    const headers = signed(new Date());
    await expectRejected(await ingest(server, id, { body: payload, headers: { ...headers, "webhook-id": "msg_other" } }));
    await expectRejected(await ingest(server, id, { body: payload, headers: { ...headers, "webhook-timestamp": "not-a-number" } }));
  });

  it("also takes the secret without the whsec_ prefix", async () => {
    const s = await createSource(server, key, { name: "stdwh-raw", verification_type: "standard-webhooks", verification_secret: raw });
    await expectVerified(await ingest(server, s.id, { body: payload, headers: signed(new Date()) }));
  });
});

describe("Shopify template (base64 HMAC, by hand)", () => {
  it("verifies and rejects", async () => {
    const secret = "shpss_" + randomBytes(8).toString("hex");
    const { id } = await createSource(server, key, { name: "shopify", template: "shopify", verification_secret: secret });
    const body = '{"id":820982911946154500,"email":"jon@example.com"}';
    await expectVerified(await ingest(server, id, { body, headers: { "x-shopify-hmac-sha256": hmacB64("sha256", secret, body), "x-shopify-topic": "orders/create" } }));
    await expectRejected(await ingest(server, id, { body, headers: { "x-shopify-hmac-sha256": hmacHex("sha256", secret, body) } }));
  });
});

describe("Slack template (v0 signature by hand, url_verification handshake)", () => {
  const secret = "8f742231b10e8888abcd99yyyzzz85a5";
  let id: string;
  beforeAll(async () => {
    id = (await createSource(server, key, { name: "slack", template: "slack", verification_secret: secret })).id;
  });
  const headersFor = (body: string, ts = nowSeconds()) => ({
    "x-slack-request-timestamp": String(ts),
    "x-slack-signature": "v0=" + hmacHex("sha256", secret, `v0:${ts}:${body}`),
  });

  it("answers url_verification with the challenge and stores nothing", async () => {
    const body = JSON.stringify({ token: "t", challenge: "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P", type: "url_verification" });
    const before = (await call(server, "GET", `/v1/sources/${id}`, { key })).body.source;
    const res = await ingest(server, id, { body, headers: headersFor(body) });
    expect(res).toMatchObject({ status: 200, body: { challenge: "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P" } });
    const after = (await call(server, "GET", `/v1/sources/${id}`, { key })).body.source;
    expect(after.event_count).toBe(before.event_count);
    expect(after.request_count).toBe(before.request_count + 1);
  });

  it("does not answer a handshake whose signature fails", async () => {
    const body = JSON.stringify({ challenge: "x", type: "url_verification" });
    await expectRejected(await ingest(server, id, { body, headers: { ...headersFor(body), "x-slack-signature": "v0=" + "0".repeat(64) } }));
  });

  it("verifies an event callback and rejects a stale or missing timestamp", async () => {
    const body = JSON.stringify({ type: "event_callback", event_id: "Ev1", event: { type: "app_mention" } });
    const event = await expectVerified(await ingest(server, id, { body, headers: headersFor(body) }));
    expect(event.event_type).toBe("app_mention");
    const old = nowSeconds() - 600;
    await expectRejected(await ingest(server, id, { body, headers: headersFor(body, old) }), /older/);
    const { "x-slack-request-timestamp": _, ...noTs } = headersFor(body);
    await expectRejected(await ingest(server, id, { body, headers: noTs }), /timestamp/);
  });
});

describe("Twilio template (URL + sorted params, HMAC-SHA1 base64, by hand)", () => {
  const authToken = "12345";
  let id: string;
  let url: string;
  beforeAll(async () => {
    const s = await createSource(server, key, { name: "twilio", template: "twilio", verification_secret: authToken });
    id = s.id;
    url = s.ingest_url;
  });
  const twilioSig = (signUrl: string, params: Record<string, string>) =>
    hmacB64("sha1", authToken, signUrl + Object.keys(params).sort().map((k) => k + params[k]).join(""));

  it("verifies a form POST and rejects a changed parameter", async () => {
    const params = { CallSid: "CA1234567890ABCDE", Caller: "+12349013030", Digits: "1234", From: "+12349013030", To: "+18005551212" };
    const body = new URLSearchParams(params).toString();
    const headers = { "content-type": "application/x-www-form-urlencoded", "x-twilio-signature": twilioSig(url + "?a=1", params) };
    await expectVerified(await ingest(server, id, { body, headers, path: "?a=1" }));
    await expectRejected(await ingest(server, id, { body: body.replace("1234&", "9999&"), headers, path: "?a=1" }));
  });

  it("verifies a JSON body through bodySHA256 and rejects a body that does not match it", async () => {
    const body = '{"hello":"world"}';
    const q = `?bodySHA256=${createHash("sha256").update(body).digest("hex")}`;
    const headers = { "x-twilio-signature": twilioSig(url + q, {}) };
    await expectVerified(await ingest(server, id, { body, headers, path: q }));
    await expectRejected(await ingest(server, id, { body: '{"hello":"there"}', headers, path: q }), /bodySHA256/);
  });
});

describe("GitLab template (token equality)", () => {
  it("verifies the token header and rejects a wrong or missing one", async () => {
    const { id } = await createSource(server, key, { name: "gitlab", template: "gitlab", verification_secret: "glt-secret" });
    const body = '{"object_kind":"push"}';
    const event = await expectVerified(await ingest(server, id, { body, headers: { "x-gitlab-token": "glt-secret", "x-gitlab-event": "Push Hook" } }));
    expect(event.event_type).toBe("Push Hook");
    await expectRejected(await ingest(server, id, { body, headers: { "x-gitlab-token": "glt-secreT" } }), /does not match/);
    await expectRejected(await ingest(server, id, { body }), /missing header/);
  });
});

describe("hmac-sha256 / hmac-sha1 as the spec describes them", () => {
  it("hmac-sha256: hex digest in the configured header, with or without sha256=", async () => {
    const { id } = await createSource(server, key, { name: "h256", verification_type: "hmac-sha256", verification_secret: "k", verification_header: "X-My-Sig" });
    const body = "plain text body";
    await expectVerified(await ingest(server, id, { body, headers: { "x-my-sig": hmacHex("sha256", "k", body) } }));
    await expectVerified(await ingest(server, id, { body, headers: { "x-my-sig": "sha256=" + hmacHex("sha256", "k", body) } }));
    await expectVerified(await ingest(server, id, { body, headers: { "x-my-sig": hmacHex("sha256", "k", body).toUpperCase() } }));
    await expectRejected(await ingest(server, id, { body, headers: { "x-my-sig": hmacHex("sha1", "k", body) } }));
  });

  it("hmac-sha1: strips sha1= as sha256 strips sha256=", async () => {
    const { id } = await createSource(server, key, { name: "h1", template: "generic-hmac-sha1", verification_secret: "k1" });
    const body = '{"a":1}';
    await expectVerified(await ingest(server, id, { body, headers: { "x-signature": "sha1=" + hmacHex("sha1", "k1", body) } }));
    await expectVerified(await ingest(server, id, { body, headers: { "x-signature": hmacHex("sha1", "k1", body) } }));
    await expectRejected(await ingest(server, id, { body, headers: { "x-signature": "sha1=" + hmacHex("sha1", "k2", body) } }));
  });

  it("verification_config parameterises the mechanism: base64, a custom prefix and a signed timestamp", async () => {
    const { id } = await createSource(server, key, {
      name: "custom",
      verification_type: "hmac-sha256",
      verification_secret: "ck",
      verification_header: "X-Sig",
      verification_config: { encoding: "base64", prefix: "v9=", timestamp_header: "X-Ts", signed_payload: "{timestamp}|{body}", tolerance_seconds: 60 },
    });
    const body = '{"n":1}';
    const ts = nowSeconds();
    await expectVerified(await ingest(server, id, { body, headers: { "x-sig": "v9=" + hmacB64("sha256", "ck", `${ts}|${body}`), "x-ts": String(ts) } }));
    await expectRejected(await ingest(server, id, { body, headers: { "x-sig": "v9=" + hmacB64("sha256", "ck", `${ts - 90}|${body}`), "x-ts": String(ts - 90) } }), /older/);
  });

  it("verifies a binary body over its exact bytes", async () => {
    const { id } = await createSource(server, key, { name: "bin", template: "generic-hmac-sha256", verification_secret: "bk" });
    const bytes = new Uint8Array([0xff, 0xfe, 0x00, 0x80, 0x81, 0xc3, 0x28]);
    const event = await expectVerified(await ingest(server, id, { body: bytes, headers: { "content-type": "application/octet-stream", "x-signature": hmacHex("sha256", "bk", Buffer.from(bytes)) } }));
    expect(event.body_encoding).toBe("base64");
    expect(Buffer.from(event.body, "base64")).toEqual(Buffer.from(bytes));
  });

  it("skips verification when it is off: verification_status skipped", async () => {
    const { id } = await createSource(server, key, { name: "off", template: "github" });
    const res = await ingest(server, id, { body: "{}" });
    expect(res.status).toBe(200);
    expect((await getEvent(server, key, res.body.event_id)).verification_status).toBe("skipped");
  });

  it("fails verification (not a 500) when the stored secret cannot be decrypted", async () => {
    const { id } = await createSource(server, key, { name: "undecryptable", template: "generic-hmac-sha256", verification_secret: "x" });
    await server.deps.db.update(sources).set({ verificationSecret: "enc:v1:AAAA" }).where(eq(sources.id, id));
    await expectRejected(await ingest(server, id, { body: "{}", headers: { "x-signature": hmacHex("sha256", "x", "{}") } }), /decrypt/);
  });
});
