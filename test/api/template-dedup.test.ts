import { randomBytes } from "node:crypto";
import { sign as githubSign } from "@octokit/webhooks-methods";
import { Webhook as StandardWebhook } from "standardwebhooks";
import Stripe from "stripe";
import { Webhook as SvixWebhook } from "svix";
import { describe, expect, it } from "vitest";
import { createSource, hmacB64, hmacHex, ingest, nowSeconds } from "../helpers/ingest";
import { call, type TestServer } from "../helpers/server";
import type { Sink } from "../helpers/sink";
import { useServer } from "../helpers/fixture";

let server: TestServer, key: string, sink: Sink;
useServer({ sink: true }, (s) => ({ server, key, sink } = s));

/** The first copy is stored as unique, the redelivery answers duplicate: true pointing at it. */
async function expectStoredOnce(first: Awaited<ReturnType<typeof ingest>>, again: Awaited<ReturnType<typeof ingest>>, sourceId: string) {
  expect(first.status, JSON.stringify(first.body)).toBe(200);
  expect(first.body.duplicate).toBeUndefined();
  expect(again.status, JSON.stringify(again.body)).toBe(200);
  expect(again.body).toMatchObject({ success: true, duplicate: true, original_event_id: first.body.event_id });
  const unique = await call(server, "GET", `/v1/events?source_id=${sourceId}&dedup_status=unique`, { key });
  expect(unique.body.events.map((e: { id: string }) => e.id)).toEqual([first.body.event_id]);
}

describe("sources created from a provider template dedup by the provider's delivery id", () => {
  it("turn dedup on with the template's header or body-field key; body-hash templates stay off", async () => {
    const { templates } = (await call(server, "GET", "/v1/sources/templates", { key })).body;
    for (const t of templates as { id: string; dedup_strategy: string | null; dedup_field: string | null }[]) {
      const s = await createSource(server, key, { name: `t-${t.id}`, template: t.id });
      const keyed = t.dedup_strategy === "header" || t.dedup_strategy === "field";
      expect(s, t.id).toMatchObject({ dedup_enabled: keyed ? 1 : 0, dedup_strategy: t.dedup_strategy, dedup_field: t.dedup_field });
    }
    const byId = Object.fromEntries(templates.map((t: { id: string }) => [t.id, t]));
    expect(byId.github).toMatchObject({ dedup_strategy: "header", dedup_field: "X-GitHub-Delivery" });
    expect(byId.stripe).toMatchObject({ dedup_strategy: "field", dedup_field: "id" });
    expect(byId.shopify).toMatchObject({ dedup_strategy: "header", dedup_field: "X-Shopify-Webhook-Id" });
    expect(byId.svix).toMatchObject({ dedup_strategy: "header", dedup_field: "svix-id" });
    expect(byId["standard-webhooks"]).toMatchObject({ dedup_strategy: "header", dedup_field: "webhook-id" });
    expect(byId.slack).toMatchObject({ dedup_strategy: "field", dedup_field: "event_id" });
    expect(byId.twilio).toMatchObject({ dedup_strategy: "header", dedup_field: "I-Twilio-Idempotency-Token" });
  });

  it("stores and delivers a GitHub redelivery (same X-GitHub-Delivery) once", async () => {
    const secret = "gh-" + randomBytes(8).toString("hex");
    const source = await createSource(server, key, { name: "gh", template: "github", verification_secret: secret });
    const dest = await call(server, "POST", "/v1/destinations", { key, body: { name: "gh-sink", url: `${sink.url}/github` } });
    expect((await call(server, "POST", "/v1/connections", { key, body: { name: "gh", source_id: source.id, destination_id: dest.body.destination.id } })).status).toBe(201);
    const body = JSON.stringify({ action: "opened", number: 7 });
    const headers = { "x-hub-signature-256": await githubSign(secret, body), "x-github-event": "pull_request", "x-github-delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958" };
    const first = await ingest(server, source.id, { body, headers });
    const again = await ingest(server, source.id, { body, headers });
    await expectStoredOnce(first, again, source.id);
    await sink.waitFor(1);
    // The copy is never routed: it is ignored and has no delivery attempts.
    const copy = await call(server, "GET", `/v1/events/${again.body.event_id}`, { key });
    expect(copy.body).toMatchObject({ status: "ignored", dedup_status: "duplicate", delivery_attempts: [] });
    expect(sink.requests.filter((r) => r.path === "/github")).toHaveLength(1);
  });

  it("stores a Stripe redelivery (same event id, new timestamp and signature) once", async () => {
    const secret = "whsec_" + randomBytes(12).toString("hex");
    const source = await createSource(server, key, { name: "stripe", template: "stripe", verification_secret: secret });
    const stripe = new Stripe("sk_test_unused");
    const payload = JSON.stringify({ id: "evt_1Redelivered", object: "event", type: "invoice.paid" });
    const first = await ingest(server, source.id, { body: payload, headers: { "stripe-signature": stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp: nowSeconds() - 60 }) } });
    const again = await ingest(server, source.id, { body: payload, headers: { "stripe-signature": stripe.webhooks.generateTestHeaderString({ payload, secret }) } });
    await expectStoredOnce(first, again, source.id);
  });

  it("stores a Standard Webhooks and a Svix redelivery (same message id) once", async () => {
    const secret = "whsec_" + randomBytes(32).toString("base64");
    const payload = '{"type":"order.created","data":{"id":"o1"}}';
    const std = await createSource(server, key, { name: "std", template: "standard-webhooks", verification_secret: secret });
    const stdHeaders = (at: Date) => ({ "webhook-id": "msg_2x", "webhook-timestamp": String(Math.floor(at.getTime() / 1000)), "webhook-signature": new StandardWebhook(secret).sign("msg_2x", at, payload) });
    await expectStoredOnce(await ingest(server, std.id, { body: payload, headers: stdHeaders(new Date(Date.now() - 30_000)) }), await ingest(server, std.id, { body: payload, headers: stdHeaders(new Date()) }), std.id);

    const svix = await createSource(server, key, { name: "svix", template: "svix", verification_secret: secret });
    const svixHeaders = (at: Date) => ({ "svix-id": "msg_3y", "svix-timestamp": String(Math.floor(at.getTime() / 1000)), "svix-signature": new SvixWebhook(secret).sign("msg_3y", at, payload) });
    await expectStoredOnce(await ingest(server, svix.id, { body: payload, headers: svixHeaders(new Date(Date.now() - 30_000)) }), await ingest(server, svix.id, { body: payload, headers: svixHeaders(new Date()) }), svix.id);
  });

  it("stores a Shopify and a Slack redelivery once", async () => {
    const secret = "shpss_" + randomBytes(8).toString("hex");
    const shop = await createSource(server, key, { name: "shop", template: "shopify", verification_secret: secret });
    const body = '{"id":820982911946154500}';
    const headers = { "x-shopify-hmac-sha256": hmacB64("sha256", secret, body), "x-shopify-topic": "orders/create", "x-shopify-webhook-id": "b54557e4-bdd9-4b37-8a5f-bf7d70bcd043" };
    await expectStoredOnce(await ingest(server, shop.id, { body, headers }), await ingest(server, shop.id, { body, headers }), shop.id);

    const slackSecret = randomBytes(16).toString("hex");
    const slack = await createSource(server, key, { name: "slack", template: "slack", verification_secret: slackSecret });
    const event = JSON.stringify({ type: "event_callback", event_id: "Ev0PV52K21", event: { type: "app_mention" } });
    const signed = (ts: number) => ({ "x-slack-request-timestamp": String(ts), "x-slack-signature": "v0=" + hmacHex("sha256", slackSecret, `v0:${ts}:${event}`), "x-slack-retry-num": "1" });
    await expectStoredOnce(await ingest(server, slack.id, { body: event, headers: signed(nowSeconds() - 5) }), await ingest(server, slack.id, { body: event, headers: signed(nowSeconds()) }), slack.id);
  });

  it("leaves dedup off, or keys it differently, when the request says so", async () => {
    const off = await createSource(server, key, { name: "gh-off", template: "github", dedup_enabled: false });
    expect(off.dedup_enabled).toBe(0);
    const headers = { "x-github-delivery": "same" };
    const a = await ingest(server, off.id, { body: "{}", headers });
    const b = await ingest(server, off.id, { body: "{}", headers });
    expect([a.body.duplicate, b.body.duplicate]).toEqual([undefined, undefined]);

    const ownKey = await createSource(server, key, { name: "gh-body", template: "github", dedup_strategy: "body_hash" });
    expect(ownKey).toMatchObject({ dedup_enabled: 1, dedup_strategy: "body_hash", dedup_field: null });
  });
});
