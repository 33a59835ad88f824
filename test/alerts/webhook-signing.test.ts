/**
 * Webhook channels sign per Standard Webhooks (webhook-id, webhook-timestamp,
 * webhook-signature), checked with the `standardwebhooks` library a receiver
 * would use, and keep the body-only X-Hookrelay-Signature for existing
 * receivers. The library compares webhook-timestamp with the real time, so
 * this server's clock starts at the real time and is never moved.
 */
import { createHmac } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { beforeAll, describe, expect, it } from "vitest";
import { manualClock } from "../../src/core/clock";
import { pipeline, sendEvent, waitFor } from "../helpers/delivery";
import { call, type TestServer } from "../helpers/server";
import type { Sink, SinkRequest } from "../helpers/sink";
import { useServer } from "../helpers/fixture";
import { createChannel, createRule, waitForHistory } from "./helpers";

const clock = manualClock(new Date());
const PLAIN_SECRET = "notify-secret";
// A Standard Webhooks secret as its libraries make them: whsec_ and base64.
const WHSEC_SECRET = `whsec_${Buffer.from("0123456789abcdef0123456789abcdef").toString("base64")}`;
let server: TestServer, key: string, sink: Sink;

useServer({ clock, env: { HOOKRELAY_ALERT_INTERVAL_SECONDS: "3600" }, sink: true }, (s) => ({ server, key, sink } = s));
beforeAll(async () => {
  sink.respond = (req) => (req.path.startsWith("/fail") ? new Response("down", { status: 503 }) : new Response("ok"));
});

const received = (path: string) => waitFor(async () => sink.requests.find((r) => r.path === path), { timeoutMs: 30_000, what: `a request to ${path}` });

function expectBodySignature(req: SinkRequest, secret: string) {
  expect(req.headers["x-hookrelay-signature"]).toBe(`sha256=${createHmac("sha256", secret).update(req.body).digest("hex")}`);
}

describe("webhook channel signatures", () => {
  it("a rule's notification verifies with standardwebhooks' Webhook.verify, names its history entry, and keeps X-Hookrelay-Signature", async () => {
    const channel = await createChannel(server, key, { name: "Signed hook", channel_type: "webhook", config: { url: `${sink.url}/hook-plain`, secret: PLAIN_SECRET } });
    const p = await pipeline(server, key, { url: `${sink.url}/fail-sign`, destination: { name: "Signed dest", max_retries: 0 } });
    const ruleId = await createRule(server, key, { name: "Signed DLQ", rule_type: "dlq", destination_id: p.destinationId, channel_ids: [channel], cooldown_minutes: 0 });
    await sendEvent(server, p.sourceId, { sign: 1 });
    const [entry] = await waitForHistory(server, key, ruleId, 1, 30_000);
    const req = await received("/hook-plain");

    // Any secret is usable: its UTF-8 bytes are the key ("raw" for the library).
    const payload = new Webhook(Buffer.from(PLAIN_SECRET, "utf8"), { format: "raw" }).verify(req.body, req.headers);
    expect(payload).toMatchObject({ type: "alert.triggered", alert_rule_id: ruleId });
    expect(req.headers["webhook-id"]).toBe(entry.id);
    expect(Number(req.headers["webhook-timestamp"])).toBe(Math.floor(clock.now().getTime() / 1000));
    expect(req.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expectBodySignature(req, PLAIN_SECRET);

    // The signature covers the id and the time as well as the body: changing either is refused.
    const wh = new Webhook(Buffer.from(PLAIN_SECRET, "utf8"), { format: "raw" });
    expect(() => wh.verify(req.body, { ...req.headers, "webhook-id": `${entry.id}0` })).toThrow();
    expect(() => wh.verify(req.body, { ...req.headers, "webhook-timestamp": String(Number(req.headers["webhook-timestamp"]) - 1) })).toThrow();
    expect(() => wh.verify(req.body.replace("alert.triggered", "alert.triggerex"), req.headers)).toThrow();
    // The wrong secret is refused.
    expect(() => new Webhook(Buffer.from("another-secret", "utf8"), { format: "raw" }).verify(req.body, req.headers)).toThrow();
  });

  it("a whsec_ secret verifies with new Webhook(secret), as Standard Webhooks receivers are written; a test send is signed too", async () => {
    const channel = await createChannel(server, key, { name: "Whsec hook", channel_type: "webhook", config: { url: `${sink.url}/hook-whsec`, secret: WHSEC_SECRET } });
    const res = await call(server, "POST", `/v1/notification-channels/${channel}/test`, { key });
    expect(res.body).toEqual({ success: true, error: null });
    const req = await received("/hook-whsec");
    expect(new Webhook(WHSEC_SECRET).verify(req.body, req.headers)).toMatchObject({ type: "alert.test" });
    expect(req.headers["webhook-id"]).toMatch(/^[0-9a-f]{32}$/);
    expectBodySignature(req, WHSEC_SECRET);
  });

  it("a channel without a secret sends no signature headers", async () => {
    const channel = await createChannel(server, key, { name: "Open hook", channel_type: "webhook", config: { url: `${sink.url}/hook-open` } });
    expect((await call(server, "POST", `/v1/notification-channels/${channel}/test`, { key })).body.success).toBe(true);
    const req = await received("/hook-open");
    for (const h of ["x-hookrelay-signature", "webhook-id", "webhook-timestamp", "webhook-signature"]) expect(req.headers[h]).toBeUndefined();
  });
});
