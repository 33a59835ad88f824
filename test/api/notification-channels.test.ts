import { createHmac, timingSafeEqual } from "node:crypto";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { notificationChannels } from "../../src/db/schema";
import { closedPort, createChannel, createRule, startSmtp, type TestSmtp } from "../alerts/helpers";
import { otherOrgKey } from "../helpers/rows";
import { call, startTestServer, type TestServer } from "../helpers/server";
import type { Sink } from "../helpers/sink";
import { useServer } from "../helpers/fixture";

let server: TestServer, key: string, sink: Sink;
let smtp: TestSmtp;

beforeAll(async () => {
  smtp = await startSmtp("plain");
});
afterAll(() => smtp.close());
const env = () => ({ HOOKRELAY_SMTP_URL: `smtp://127.0.0.1:${smtp.port}`, HOOKRELAY_BASE_URL: "https://relay.example.com" });
useServer({ env, sink: true }, (s) => ({ server, key, sink } = s));

const post = (path: string, body: unknown, k = key) => call(server, "POST", path, { key: k, body });
const get = (path: string, k = key) => call(server, "GET", path, { key: k });
const patch = (path: string, body: unknown) => call(server, "PATCH", path, { key, body });
const del = (path: string, k = key) => call(server, "DELETE", path, { key: k });
const storedConfig = async (id: string) => (await server.deps.db.select().from(notificationChannels).where(eq(notificationChannels.id, id)))[0]!.config;

function expectValidation(res: { status: number; body: any }, field: string) {
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe("validation_error");
  expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
}

describe("POST /v1/notification-channels", () => {
  it("creates a channel of each type, answering the spec's shape with `type` and masked secrets", async () => {
    const webhook = await post("/v1/notification-channels", { name: "Ops hook", channel_type: "webhook", config: { url: `${sink.url}/alerts`, secret: "s3cret-value" } });
    expect(webhook.status).toBe(201);
    expect(webhook.body).toEqual({ id: expect.stringMatching(/^nc_[0-9a-f]{32}$/), name: "Ops hook", type: "webhook", config: { url: `${sink.url}/alerts`, secret: "********" }, created_at: expect.any(String) });

    const slack = await post("/v1/notification-channels", { name: "Slack", channel_type: "slack", config: { webhook_url: "https://hooks.slack.com/services/T0001/B0001/AbCdEfGhIjKl" } });
    expect(slack.body).toMatchObject({ type: "slack", config: { webhook_url: "https://hooks.slack.com/services/T0001/B0001/********" } });

    const discord = await post("/v1/notification-channels", { name: "Discord", channel_type: "discord", config: { webhook_url: "https://discord.com/api/webhooks/123/tok-en_value" } });
    expect(discord.body).toMatchObject({ type: "discord", config: { webhook_url: "https://discord.com/api/webhooks/123/********" } });

    const email = await post("/v1/notification-channels", {
      name: "Mail",
      channel_type: "email",
      config: { to: "ops@example.com, oncall@example.com", from: "Relay <relay@example.com>", smtp_url: "smtp://alerts:hunter2@mail.example.com:587" },
    });
    expect(email.status).toBe(201);
    expect(email.body.config).toEqual({ to: "ops@example.com, oncall@example.com", from: "Relay <relay@example.com>", smtp_url: "smtp://alerts:********@mail.example.com:587" });

    // Encrypted at rest: neither the secret nor the password nor the chat token is in the row.
    for (const [id, plain] of [
      [webhook.body.id, "s3cret-value"],
      [email.body.id, "hunter2"],
      [slack.body.id, "AbCdEfGhIjKl"],
      [discord.body.id, "tok-en_value"],
    ]) {
      const stored = await storedConfig(id);
      expect(stored).toMatch(/^enc:v2:/);
      expect(stored).not.toContain(plain);
    }
  });

  it("validates config per type and names the field: 400, never 5xx", async () => {
    const cases: [unknown, string][] = [
      [{ name: "x", channel_type: "webhook", config: {} }, "body.config.url"],
      [{ name: "x", channel_type: "webhook", config: { url: "ftp://example.com" } }, "body.config.url"],
      [{ name: "x", channel_type: "webhook", config: { url: "https://example.com", secret: "" } }, "body.config.secret"],
      [{ name: "x", channel_type: "slack", config: { url: "https://hooks.slack.com/x" } }, "body.config.webhook_url"],
      [{ name: "x", channel_type: "discord", config: { webhook_url: "not a url" } }, "body.config.webhook_url"],
      [{ name: "x", channel_type: "email", config: { to: "nobody" } }, "body.config.to"],
      [{ name: "x", channel_type: "email", config: { to: ["a@example.com", "b"] } }, "body.config.to.1"],
      [{ name: "x", channel_type: "email", config: { to: "a@example.com", from: "me" } }, "body.config.from"],
      [{ name: "x", channel_type: "email", config: { to: "a@example.com", smtp_url: "http://mail.example.com" } }, "body.config.smtp_url"],
      [{ name: "x", channel_type: "pager", config: {} }, "body.channel_type"],
      [{ name: "x", channel_type: "webhook" }, "body.config"],
      [{ channel_type: "webhook", config: { url: "https://example.com" } }, "body.name"],
      [{ name: "x", channel_type: "webhook", config: "https://example.com" }, "body.config"],
    ];
    for (const [body, field] of cases) expectValidation(await post("/v1/notification-channels", body), field);
    for (const body of ["{", "null", "[]"]) expect((await post("/v1/notification-channels", body)).status).toBe(400);
  });

  it("refuses an email channel without an SMTP server when the server has none", async () => {
    const bare = await startTestServer();
    try {
      const k = await bare.apiKey();
      const res = await call(bare, "POST", "/v1/notification-channels", { key: k, body: { name: "Mail", channel_type: "email", config: { to: "ops@example.com" } } });
      expectValidation(res, "body.config.smtp_url");
    } finally {
      await bare.close();
    }
  });
});

describe("GET /v1/notification-channels", () => {
  it("lists {channels: [{id, name, type, config, created_at}]} newest first, scoped to the caller", async () => {
    const id = await createChannel(server, key, { name: "Newest", channel_type: "webhook", config: { url: "https://example.com/hook" } });
    const res = await get("/v1/notification-channels");
    expect(res.status).toBe(200);
    expect(res.body.channels[0]).toEqual({ id, name: "Newest", type: "webhook", config: { url: "https://example.com/hook" }, created_at: expect.any(String) });
    expect(res.body.channels.length).toBeGreaterThan(1);
    expect((await get("/v1/notification-channels", await otherOrgKey(server))).body).toEqual({ channels: [] });
  });
});

describe("GET /v1/notification-channels/{id}", () => {
  it("returns {id, name, type, config, created_at, updated_at}, with or without the nc_ prefix; 404 otherwise", async () => {
    const id = await createChannel(server, key, { name: "One", channel_type: "slack", config: { webhook_url: "https://hooks.slack.com/services/A/B/C" } });
    const res = await get(`/v1/notification-channels/${id}`);
    expect(res.body).toEqual({ id, name: "One", type: "slack", config: { webhook_url: "https://hooks.slack.com/services/A/B/********" }, created_at: expect.any(String), updated_at: expect.any(String) });
    expect((await get(`/v1/notification-channels/${id.slice(3)}`)).body.id).toBe(id);
    expect((await get("/v1/notification-channels/nc_0123456789abcdef0123456789abcdef")).status).toBe(404);
    expect((await get("/v1/notification-channels/whatever")).status).toBe(404);
    expect((await get(`/v1/notification-channels/${id}`, await otherOrgKey(server))).status).toBe(404);
  });
});

describe("PATCH /v1/notification-channels/{id}", () => {
  it("renames and changes config, answering {id, name, type, updated_at}; a masked secret sent back is kept", async () => {
    const id = await createChannel(server, key, { name: "Hook", channel_type: "webhook", config: { url: `${sink.url}/a`, secret: "keep-me" } });
    const res = await patch(`/v1/notification-channels/${id}`, { name: "Renamed", config: { url: `${sink.url}/b`, secret: "********" } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id, name: "Renamed", type: "webhook", updated_at: expect.any(String) });
    expect((await get(`/v1/notification-channels/${id}`)).body).toMatchObject({ name: "Renamed", config: { url: `${sink.url}/b`, secret: "********" } });

    // The kept secret still signs.
    sink.requests.length = 0;
    expect((await post(`/v1/notification-channels/${id}/test`, undefined)).body).toEqual({ success: true, error: null });
    const [req] = sink.requests;
    expect(req!.path).toBe("/b");
    expect(req!.headers["x-hookrelay-signature"]).toBe(`sha256=${createHmac("sha256", "keep-me").update(req!.body).digest("hex")}`);

    // Fields left out keep their value; null removes the secret.
    await patch(`/v1/notification-channels/${id}`, { config: { secret: null } });
    expect((await get(`/v1/notification-channels/${id}`)).body.config).toEqual({ url: `${sink.url}/b` });
  });

  it("validates the merged config against the channel's type; 404 for an unknown channel", async () => {
    const id = await createChannel(server, key, { name: "Chat", channel_type: "discord", config: { webhook_url: "https://discord.com/api/webhooks/1/abc" } });
    expectValidation(await patch(`/v1/notification-channels/${id}`, { config: { webhook_url: "nope" } }), "body.config.webhook_url");
    expectValidation(await patch(`/v1/notification-channels/${id}`, { config: { webhook_url: null } }), "body.config.webhook_url");
    expectValidation(await patch(`/v1/notification-channels/${id}`, { name: "" }), "body.name");
    expect((await patch("/v1/notification-channels/nc_0123456789abcdef0123456789abcdef", { name: "x" })).status).toBe(404);
  });
});

describe("DELETE /v1/notification-channels/{id}", () => {
  it("answers {deleted: true}, and 409 conflict while an alert rule references the channel", async () => {
    const id = await createChannel(server, key, { name: "Used", channel_type: "webhook", config: { url: "https://example.com/x" } });
    const ruleId = await createRule(server, key, { name: "Uses it", rule_type: "issue_opened", channel_ids: [id] });
    const refused = await del(`/v1/notification-channels/${id}`);
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe("conflict");
    expect(refused.body.error.details).toEqual([{ alert_rule_id: ruleId, name: "Uses it" }]);
    expect((await get(`/v1/notification-channels/${id}`)).status).toBe(200);

    await call(server, "PATCH", `/v1/alert-rules/${ruleId}`, { key, body: { channel_ids: [] } });
    expect((await del(`/v1/notification-channels/${id}`)).body).toEqual({ deleted: true });
    expect((await get(`/v1/notification-channels/${id}`)).status).toBe(404);
    expect((await del(`/v1/notification-channels/${id}`)).status).toBe(404);
  });
});

describe("POST /v1/notification-channels/{id}/test", () => {
  it("sends the webhook body of docs/decisions.md D9, signed with X-Hookrelay-Signature when a secret is set", async () => {
    const id = await createChannel(server, key, { name: "Signed", channel_type: "webhook", config: { url: `${sink.url}/signed`, secret: "whsec-test" } });
    sink.requests.length = 0;
    const res = await post(`/v1/notification-channels/${id}/test`, undefined);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, error: null });
    const [req] = sink.requests;
    expect(req!.method).toBe("POST");
    expect(req!.headers["content-type"]).toBe("application/json");
    const expected = Buffer.from(`sha256=${createHmac("sha256", "whsec-test").update(req!.body).digest("hex")}`);
    expect(timingSafeEqual(Buffer.from(req!.headers["x-hookrelay-signature"]!), expected)).toBe(true);
    const body = JSON.parse(req!.body);
    expect(body).toEqual({
      type: "alert.test",
      alert_rule_id: null,
      rule_name: "Test notification",
      rule_type: "test",
      reason: expect.stringContaining('"Signed"'),
      data: { channel_id: id, channel_name: "Signed" },
      triggered_at: expect.any(String),
      link: `https://relay.example.com/notification-channels/${id}`,
    });

    const unsigned = await createChannel(server, key, { name: "Unsigned", channel_type: "webhook", config: { url: `${sink.url}/unsigned` } });
    sink.requests.length = 0;
    await post(`/v1/notification-channels/${unsigned}/test`, undefined);
    expect(sink.requests[0]!.headers["x-hookrelay-signature"]).toBeUndefined();
  });

  it("answers success false with the error when the send fails: an error status, a closed port, a refused address", async () => {
    sink.respond = (req) => (req.path === "/down" ? new Response("maintenance", { status: 503 }) : new Response("ok"));
    const down = await createChannel(server, key, { name: "Down", channel_type: "webhook", config: { url: `${sink.url}/down` } });
    expect((await post(`/v1/notification-channels/${down}/test`, undefined)).body).toEqual({ success: false, error: "the webhook answered HTTP 503: maintenance" });
    sink.respond = () => new Response("ok");

    const closed = await createChannel(server, key, { name: "Closed", channel_type: "slack", config: { webhook_url: `http://127.0.0.1:${closedPort()}/hook` } });
    const res = await post(`/v1/notification-channels/${closed}/test`, undefined);
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(false);
    expect(res.body.error).toMatch(/^Slack: /);

    // The destinations' SSRF guard: cloud metadata is never contacted.
    const metadata = await createChannel(server, key, { name: "Metadata", channel_type: "webhook", config: { url: "http://169.254.169.254/latest/meta-data" } });
    const refused = await post(`/v1/notification-channels/${metadata}/test`, undefined);
    expect(refused.body).toEqual({ success: false, error: expect.stringContaining("refused: 169.254.169.254 is a link-local (cloud metadata) address") });

    expect((await post("/v1/notification-channels/nc_0123456789abcdef0123456789abcdef/test", undefined)).status).toBe(404);
  });

  it("sends an email through HOOKRELAY_SMTP_URL when the channel names no server", async () => {
    const id = await createChannel(server, key, { name: "Mail", channel_type: "email", config: { to: ["ops@example.com"] } });
    const res = await post(`/v1/notification-channels/${id}/test`, undefined);
    expect(res.body).toEqual({ success: true, error: null });
    const mail = smtp.mails.at(-1)!;
    expect(mail.to).toEqual(["ops@example.com"]);
    expect(mail.from).toBe("hookrelay@relay.example.com");
  });

  it("is refused for a read-only key", async () => {
    const id = await createChannel(server, key, { name: "RO", channel_type: "webhook", config: { url: `${sink.url}/ro` } });
    expect((await post(`/v1/notification-channels/${id}/test`, undefined, await server.apiKey("read"))).status).toBe(403);
  });
});
