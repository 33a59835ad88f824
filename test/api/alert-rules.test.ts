import { beforeAll, describe, expect, it } from "vitest";
import { closedPort, createChannel } from "../alerts/helpers";
import { createDestination, createSourceId } from "../helpers/delivery";
import { otherOrgKey } from "../helpers/rows";
import { call, type TestServer } from "../helpers/server";
import { useServer } from "../helpers/fixture";

let server: TestServer, key: string;
let channelA: string;
let channelB: string;

useServer({}, (s) => ({ server, key } = s));
beforeAll(async () => {
  channelA = await createChannel(server, key, { name: "A", channel_type: "webhook", config: { url: "https://example.com/a" } });
  channelB = await createChannel(server, key, { name: "B", channel_type: "slack", config: { webhook_url: "https://hooks.slack.com/services/A/B/C" } });
});

const post = (body: unknown, k = key) => call(server, "POST", "/v1/alert-rules", { key: k, body });
const get = (path: string, k = key) => call(server, "GET", path, { key: k });
const patch = (id: string, body: unknown) => call(server, "PATCH", `/v1/alert-rules/${id}`, { key, body });

function expectValidation(res: { status: number; body: any }, field: string) {
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe("validation_error");
  expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
}

describe("POST /v1/alert-rules", () => {
  it("creates a rule, answering 201 {alert_rule} with JSON fields as strings and defaults filled in", async () => {
    const sourceId = await createSourceId(server, key);
    const destinationId = await createDestination(server, key, { url: "https://example.com/in" });
    const res = await post({
      name: "Orders failing",
      description: "Tell ops when orders fail",
      rule_type: "failure_rate",
      rule_config: { threshold_percent: 25 },
      source_id: sourceId,
      destination_id: destinationId.slice(4),
      channel_ids: [channelA, channelB.slice(3)],
      cooldown_minutes: 30,
    });
    expect(res.status).toBe(201);
    const rule = res.body.alert_rule;
    expect(rule).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{32}$/),
      org_id: expect.any(String),
      env_id: expect.any(String),
      name: "Orders failing",
      description: "Tell ops when orders fail",
      enabled: 1,
      rule_type: "failure_rate",
      rule_config: JSON.stringify({ threshold_percent: 25, window_minutes: 5, min_attempts: 10 }),
      source_id: sourceId,
      destination_id: destinationId,
      channel_ids: JSON.stringify([channelA, channelB]),
      cooldown_minutes: 30,
      last_triggered_at: null,
      trigger_count: 0,
      created_at: expect.any(String),
      updated_at: rule.created_at,
    });
  });

  it("fills each type's defaults, accepts rule_config as JSON text, and defaults to enabled, no channels, a 15 minute cooldown", async () => {
    const shapes: [string, unknown, unknown][] = [
      ["latency", { threshold_ms: 2000 }, { threshold_ms: 2000, percentile: 95, window_minutes: 5 }],
      ["dlq", {}, { threshold: 1, window_minutes: 60 }],
      ["volume_drop", JSON.stringify({ min_events: 10, window_minutes: 30, extra: true }), { min_events: 10, window_minutes: 30 }],
      ["issue_opened", undefined, {}],
    ];
    for (const [rule_type, rule_config, stored] of shapes) {
      const res = await post({ name: rule_type, rule_type, rule_config });
      expect(res.status, rule_type).toBe(201);
      expect(JSON.parse(res.body.alert_rule.rule_config)).toEqual(stored);
      expect(res.body.alert_rule).toMatchObject({ enabled: 1, channel_ids: "[]", cooldown_minutes: 15, source_id: null, destination_id: null });
    }
    expect((await post({ name: "off", rule_type: "dlq", enabled: false })).body.alert_rule.enabled).toBe(0);
  });

  it("answers 400 naming the bad rule_config field for each rule type", async () => {
    const cases: [string, unknown, string][] = [
      ["failure_rate", {}, "body.rule_config.threshold_percent"],
      ["failure_rate", { threshold_percent: 0 }, "body.rule_config.threshold_percent"],
      ["failure_rate", { threshold_percent: 101 }, "body.rule_config.threshold_percent"],
      ["failure_rate", { threshold_percent: 50, window_minutes: 0 }, "body.rule_config.window_minutes"],
      ["failure_rate", { threshold_percent: 50, min_attempts: 1.5 }, "body.rule_config.min_attempts"],
      ["latency", { threshold_ms: "slow" }, "body.rule_config.threshold_ms"],
      ["latency", { threshold_ms: 100, percentile: 0 }, "body.rule_config.percentile"],
      ["dlq", { threshold: -1 }, "body.rule_config.threshold"],
      ["volume_drop", { window_minutes: 10 }, "body.rule_config.min_events"],
      ["volume_drop", { min_events: 1, window_minutes: 20000 }, "body.rule_config.window_minutes"],
    ];
    for (const [rule_type, rule_config, field] of cases) expectValidation(await post({ name: "bad", rule_type, rule_config }), field);
    expectValidation(await post({ name: "bad", rule_type: "failure_rate", rule_config: "not json" }), "body.rule_config");
    expectValidation(await post({ name: "bad", rule_type: "sometimes" }), "body.rule_type");
    expectValidation(await post({ rule_type: "dlq" }), "body.name");
    expectValidation(await post({ name: "bad", rule_type: "dlq", cooldown_minutes: -5 }), "body.cooldown_minutes");
    expectValidation(await post({ name: "bad", rule_type: "dlq", channel_ids: "nc_x" }), "body.channel_ids");
  });

  it("answers 400 for channel ids that name no channel of the caller", async () => {
    const other = await otherOrgKey(server);
    const foreign = await createChannel(server, other, { name: "Theirs", channel_type: "webhook", config: { url: "https://example.com/t" } });
    const res = await post({ name: "bad", rule_type: "dlq", channel_ids: [channelA, "nc_0123456789abcdef0123456789abcdef", "garbage", foreign] });
    expectValidation(res, "body.channel_ids.1");
    expect(res.body.error.details.map((d: any) => d.field)).toEqual(["body.channel_ids.1", "body.channel_ids.2", "body.channel_ids.3"]);
  });

  it("answers 404 for a source or destination scope that does not exist", async () => {
    const src = await post({ name: "bad", rule_type: "volume_drop", rule_config: { min_events: 1 }, source_id: "src_0123456789abcdef0123456789abcdef" });
    expect(src.status).toBe(404);
    expect(src.body.error).toMatchObject({ code: "not_found", message: "Source not found" });
    const dst = await post({ name: "bad", rule_type: "dlq", destination_id: "nope" });
    expect(dst.status).toBe(404);
    expect(dst.body.error.message).toBe("Destination not found");
    const theirs = await createDestination(server, await otherOrgKey(server), { url: "https://example.com/theirs" });
    expect((await post({ name: "bad", rule_type: "dlq", destination_id: theirs })).status).toBe(404);
  });
});

describe("GET /v1/alert-rules", () => {
  it("lists {alert_rules} newest first, filtered by rule_type and enabled, scoped to the caller", async () => {
    const res = await get("/v1/alert-rules");
    expect(res.status).toBe(200);
    const times = res.body.alert_rules.map((r: any) => r.created_at);
    expect(times).toEqual([...times].sort().reverse());
    const dlq = await get("/v1/alert-rules?rule_type=dlq");
    expect(dlq.body.alert_rules.length).toBeGreaterThan(0);
    expect(dlq.body.alert_rules.every((r: any) => r.rule_type === "dlq")).toBe(true);
    const off = await get("/v1/alert-rules?enabled=0");
    expect(off.body.alert_rules.map((r: any) => r.name)).toEqual(["off"]);
    expect((await get("/v1/alert-rules?rule_type=nope")).status).toBe(400);
    expect((await get("/v1/alert-rules", await otherOrgKey(server))).body).toEqual({ alert_rules: [] });
  });
});

describe("GET /v1/alert-rules/{id}", () => {
  it("returns {alert_rule, history}; 404 for an unknown id or another organization's rule", async () => {
    const created = (await post({ name: "Detail", rule_type: "issue_opened", channel_ids: [channelA] })).body.alert_rule;
    const res = await get(`/v1/alert-rules/${created.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ alert_rule: created, history: [] });
    const history = await get(`/v1/alert-rules/${created.id}/history`);
    expect(history.body).toEqual({ history: [], pagination: { total: 0, limit: 50, offset: 0, has_more: false, next_cursor: null, prev_cursor: null } });
    expect((await get("/v1/alert-rules/0123456789abcdef0123456789abcdef")).status).toBe(404);
    expect((await get("/v1/alert-rules/xyz/history")).status).toBe(404);
    expect((await get(`/v1/alert-rules/${created.id}`, await otherOrgKey(server))).status).toBe(404);
  });
});

describe("PATCH /v1/alert-rules/{id}", () => {
  it("updates fields, re-checks rule_config against a new rule_type, and keeps counters", async () => {
    const created = (await post({ name: "Change me", rule_type: "dlq", rule_config: { threshold: 3 } })).body.alert_rule;
    let res = await patch(created.id, { name: "Changed", enabled: false, cooldown_minutes: 0, channel_ids: [channelB], description: null });
    expect(res.status).toBe(200);
    expect(res.body.alert_rule).toMatchObject({ name: "Changed", enabled: 0, cooldown_minutes: 0, channel_ids: JSON.stringify([channelB]), rule_config: JSON.stringify({ threshold: 3, window_minutes: 60 }) });
    expect(res.body.alert_rule.updated_at >= created.updated_at).toBe(true);

    // A new type with no config: the stored one must fit it.
    expectValidation(await patch(created.id, { rule_type: "latency" }), "body.rule_config.threshold_ms");
    res = await patch(created.id, { rule_type: "latency", rule_config: { threshold_ms: 500 } });
    expect(res.body.alert_rule).toMatchObject({ rule_type: "latency", rule_config: JSON.stringify({ threshold_ms: 500, percentile: 95, window_minutes: 5 }) });
    res = await patch(created.id, { rule_type: "issue_opened" });
    expect(res.body.alert_rule.rule_config).toBe("{}");

    const destinationId = await createDestination(server, key, { url: "https://example.com/scoped" });
    res = await patch(created.id, { destination_id: destinationId });
    expect(res.body.alert_rule.destination_id).toBe(destinationId);
    res = await patch(created.id, { destination_id: null });
    expect(res.body.alert_rule.destination_id).toBeNull();

    expect((await get(`/v1/alert-rules/${created.id}`)).body.alert_rule).toEqual(res.body.alert_rule);
  });

  it("answers 400 for bad input, 404 for unknown rules and scopes, never 5xx", async () => {
    const created = (await post({ name: "Strict", rule_type: "dlq" })).body.alert_rule;
    expectValidation(await patch(created.id, { rule_config: { threshold: "many" } }), "body.rule_config.threshold");
    expectValidation(await patch(created.id, { channel_ids: ["nc_0123456789abcdef0123456789abcdef"] }), "body.channel_ids.0");
    expectValidation(await patch(created.id, { enabled: "yes" }), "body.enabled");
    expect((await patch(created.id, { source_id: "src_0123456789abcdef0123456789abcdef" })).status).toBe(404);
    expect((await patch("0123456789abcdef0123456789abcdef", { name: "x" })).status).toBe(404);
    for (const body of ["{", "[]", "null"]) expect((await patch(created.id, body)).status).toBe(400);
  });
});

describe("DELETE /v1/alert-rules/{id}", () => {
  it("deletes the rule, freeing its channels for deletion", async () => {
    const channel = await createChannel(server, key, { name: "Freed", channel_type: "webhook", config: { url: "https://example.com/f" } });
    const created = (await post({ name: "Doomed", rule_type: "dlq", channel_ids: [channel] })).body.alert_rule;
    expect((await call(server, "DELETE", `/v1/notification-channels/${channel}`, { key })).status).toBe(409);
    const res = await call(server, "DELETE", `/v1/alert-rules/${created.id}`, { key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true });
    expect((await get(`/v1/alert-rules/${created.id}`)).status).toBe(404);
    expect((await call(server, "DELETE", `/v1/alert-rules/${created.id}`, { key })).status).toBe(404);
    expect((await call(server, "DELETE", `/v1/notification-channels/${channel}`, { key })).body).toEqual({ deleted: true });
  });

  it("goes with the destination it is scoped to", async () => {
    const destinationId = await createDestination(server, key, { url: "https://example.com/going" });
    const created = (await post({ name: "Scoped", rule_type: "dlq", destination_id: destinationId })).body.alert_rule;
    await call(server, "DELETE", `/v1/destinations/${destinationId}`, { key });
    expect((await get(`/v1/alert-rules/${created.id}`)).status).toBe(404);
  });
});

describe("the OpenAPI document", () => {
  it("covers every issue, alert rule and notification channel route", async () => {
    const doc = (await get("/v1/openapi.json")).body;
    const ops = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`));
    expect(ops).toEqual(
      expect.arrayContaining([
        "GET /issues",
        "GET /issues/{id}",
        "PATCH /issues/{id}",
        "GET /alert-rules",
        "POST /alert-rules",
        "GET /alert-rules/{id}",
        "GET /alert-rules/{id}/history",
        "PATCH /alert-rules/{id}",
        "DELETE /alert-rules/{id}",
        "GET /notification-channels",
        "POST /notification-channels",
        "GET /notification-channels/{id}",
        "PATCH /notification-channels/{id}",
        "DELETE /notification-channels/{id}",
        "POST /notification-channels/{id}/test",
      ]),
    );
  });
});

describe("bad input to the issue, alert rule and channel routes", () => {
  it("never answers 5xx", async () => {
    // Nothing listens there: the test sends below reach no one.
    const channel = await createChannel(server, key, { name: "Fuzz", channel_type: "webhook", config: { url: `http://127.0.0.1:${closedPort()}/fuzz` } });
    const rule = (await post({ name: "Fuzz", rule_type: "dlq" })).body.alert_rule.id;
    const ids = ["x", "%00", "a".repeat(3000), "0123456789abcdef0123456789abcdef", "nc_", channel, rule, "../x"];
    const bodies = ["{", "null", "[]", '"x"', "1", JSON.stringify({ name: 5 }), JSON.stringify({ config: null, rule_config: [], channel_ids: [1], status: null, snoozed_until: "2026-99-99" }), JSON.stringify({ rule_type: "latency", rule_config: { threshold_ms: 1e308, percentile: "NaN" } }), JSON.stringify({ channel_type: "email", name: "m", config: { to: ["a@b.c"], smtp_url: "smtp://" } })];
    const queries = ["?limit=0", "?limit=x", "?offset=-1", "?cursor=%%%", "?status[]=open", "?destination_id=" + "d".repeat(500), "?enabled=maybe", "?direction=up"];
    const paths: [string, string][] = [["POST", "/v1/alert-rules"], ["POST", "/v1/notification-channels"]];
    for (const id of ids) {
      paths.push(["GET", `/v1/issues/${id}`], ["PATCH", `/v1/issues/${id}`], ["GET", `/v1/alert-rules/${id}`], ["GET", `/v1/alert-rules/${id}/history`], ["PATCH", `/v1/alert-rules/${id}`]);
      paths.push(["GET", `/v1/notification-channels/${id}`], ["PATCH", `/v1/notification-channels/${id}`], ["POST", `/v1/notification-channels/${id}/test`]);
    }
    for (const [method, path] of paths) {
      for (const body of method === "GET" ? [undefined] : bodies) {
        const res = await call(server, method, path, { key, body });
        expect(res.status, `${method} ${path} ${body}`).toBeLessThan(500);
      }
    }
    for (const q of queries) {
      for (const path of ["/v1/issues", "/v1/alert-rules", `/v1/alert-rules/${rule}/history`, "/v1/notification-channels"]) {
        const res = await get(path + q);
        expect(res.status, path + q).toBeLessThan(500);
      }
    }
    for (const id of ids.slice(0, 5)) {
      expect((await call(server, "DELETE", `/v1/alert-rules/${id}`, { key })).status).toBe(404);
      expect((await call(server, "DELETE", `/v1/notification-channels/${id}`, { key })).status).toBe(404);
    }
  });
});
