/**
 * Alert rules fired by real deliveries: a local sink fails or answers
 * slowly, the running worker records the outcomes, the alert task evaluates
 * the rules and notifies real channels (the same sink, a real SMTP server).
 * Time is a manual clock: windows, cooldowns and a rule's age move when the
 * test moves it. The evaluation interval is an hour, so a periodic rule is
 * evaluated only when a test asks (the bus's `alerts.evaluate`, as saving a
 * rule does); issue_opened and dlq fire from the delivery worker's messages.
 */
import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { iso, manualClock } from "../../src/core/clock";
import { createSourceId, pipeline, sendEvent, waitFor, waitForEventStatus, type Pipeline } from "../helpers/delivery";
import { call, type TestServer } from "../helpers/server";
import type { Sink, SinkRequest } from "../helpers/sink";
import { createChannel, createRule, getRule, mailSubject, mimeText, startSmtp, waitForHistory, type TestSmtp } from "./helpers";
import { scrapeMetrics } from "../helpers/metrics";
import { useServer } from "../helpers/fixture";

const clock = manualClock(new Date("2026-05-01T10:00:00.000Z"));
const MINUTE = 60_000;
let server: TestServer, key: string, sink: Sink;
let smtp: TestSmtp;
let webhookChannel: string;

beforeAll(async () => {
  smtp = await startSmtp("plain");
});
afterAll(() => smtp.close());
const env = () => ({ HOOKRELAY_ALERT_INTERVAL_SECONDS: "3600", HOOKRELAY_BASE_URL: "https://relay.example.com", HOOKRELAY_SMTP_URL: `smtp://127.0.0.1:${smtp.port}` });
useServer({ clock, env, sink: true }, (s) => ({ server, key, sink } = s));
beforeAll(async () => {
  sink.respond = async (req) => {
    const path = req.path.split("?")[0]!;
    if (path.startsWith("/fail")) return new Response("broken", { status: 502 });
    if (path.startsWith("/slow")) {
      await Bun.sleep(120);
      return new Response("ok");
    }
    if (path === "/chat-down") return new Response("no", { status: 500 });
    return new Response("ok");
  };
  webhookChannel = await createChannel(server, key, { name: "Ops webhook", channel_type: "webhook", config: { url: `${sink.url}/notify`, secret: "notify-secret" } });
});

/** Sends events and waits until each one's single try is recorded. */
async function deliver(p: Pipeline, n: number) {
  for (let i = 0; i < n; i++) {
    const id = await sendEvent(server, p.sourceId, { i });
    await waitForEventStatus(server, key, id, ["delivered", "failed"]);
  }
}

/**
 * Moves the clock a millisecond (so no pass that began earlier can answer)
 * and has every periodic rule evaluated; resolves once a pass at the new
 * time finished: whatever fired has claimed its trigger by then.
 */
async function evaluateNow() {
  clock.advance(1);
  const at = iso(clock.now());
  const done = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("no evaluation pass")), 10_000);
    const off = server.deps.bus.subscribe((m) => {
      if (m.type === "alerts.evaluated" && m.at >= at) {
        clearTimeout(timer);
        off();
        resolve();
      }
    });
  });
  server.deps.bus.publish({ type: "alerts.evaluate" });
  await done;
}

const notificationsFor = (ruleId: string, path = "/notify") => sink.requests.filter((r) => r.path === path && JSON.parse(r.body).alert_rule_id === ruleId);

function expectSigned(req: SinkRequest) {
  expect(req.headers["x-hookrelay-signature"]).toBe(`sha256=${createHmac("sha256", "notify-secret").update(req.body).digest("hex")}`);
}

describe("failure_rate", () => {
  it("fires when the share of failed attempts in the window reaches the threshold over at least min_attempts", async () => {
    const p = await pipeline(server, key, { url: `${sink.url}/fail-rate`, destination: { name: "Orders API", max_retries: 0 } });
    await deliver(p, 3);
    const tooFew = await createRule(server, key, { name: "Needs 10", rule_type: "failure_rate", rule_config: { threshold_percent: 50, min_attempts: 10 }, destination_id: p.destinationId });
    const ruleId = await createRule(server, key, {
      name: "Orders failing",
      rule_type: "failure_rate",
      rule_config: { threshold_percent: 50, window_minutes: 5, min_attempts: 3 },
      destination_id: p.destinationId,
      channel_ids: [webhookChannel],
      cooldown_minutes: 1,
    });
    const [entry] = await waitForHistory(server, key, ruleId);
    expect(entry.trigger_reason).toBe("100% of deliveries to Orders API failed in the last 5 minutes (3 of 3; threshold 50%)");
    expect(JSON.parse(entry.trigger_data)).toEqual({ failure_percent: 100, failed: 3, succeeded: 0, attempts: 3, threshold_percent: 50, min_attempts: 3, window_minutes: 5 });
    expect(JSON.parse(entry.channels_notified)).toEqual([{ channel_id: webhookChannel, channel_name: "Ops webhook", channel_type: "webhook", success: true, error: null, attempts: 1 }]);
    expect(entry).toMatchObject({ alert_rule_id: ruleId, created_at: iso(clock.now()) });

    const { alert_rule } = await getRule(server, key, ruleId);
    expect(alert_rule).toMatchObject({ trigger_count: 1, last_triggered_at: iso(clock.now()) });
    expect((await getRule(server, key, tooFew)).alert_rule.trigger_count).toBe(0);

    const [req] = notificationsFor(ruleId);
    expectSigned(req!);
    expect(JSON.parse(req!.body)).toEqual({
      type: "alert.triggered",
      alert_rule_id: ruleId,
      rule_name: "Orders failing",
      rule_type: "failure_rate",
      reason: entry.trigger_reason,
      data: JSON.parse(entry.trigger_data),
      triggered_at: entry.created_at,
      link: `https://relay.example.com/alert-rules/${ruleId}`,
    });

    // Out of its cooldown, the rule would fire again if old failures did not leave the window as the clock moves on.
    clock.advance(6 * MINUTE);
    await evaluateNow();
    expect((await getRule(server, key, ruleId)).alert_rule.trigger_count).toBe(1);
  });
});

describe("latency", () => {
  it("fires when the percentile of attempt durations in the window reaches threshold_ms", async () => {
    const p = await pipeline(server, key, { url: `${sink.url}/slow`, destination: { name: "Slow API", max_retries: 0 } });
    await deliver(p, 2);
    const relaxed = await createRule(server, key, { name: "Very slow", rule_type: "latency", rule_config: { threshold_ms: 60_000 }, destination_id: p.destinationId });
    const ruleId = await createRule(server, key, { name: "Slow", rule_type: "latency", rule_config: { threshold_ms: 100, percentile: 50 }, destination_id: p.destinationId, channel_ids: [webhookChannel] });
    const [entry] = await waitForHistory(server, key, ruleId);
    const data = JSON.parse(entry.trigger_data);
    expect(data).toMatchObject({ percentile: 50, threshold_ms: 100, samples: 2, window_minutes: 5 });
    expect(data.latency_ms).toBeGreaterThanOrEqual(100);
    expect(entry.trigger_reason).toBe(`p50 delivery latency to Slow API was ${data.latency_ms} ms over the last 5 minutes (2 attempts; threshold 100 ms)`);
    expect((await getRule(server, key, relaxed)).alert_rule.trigger_count).toBe(0);
  });
});

describe("dlq", () => {
  it("fires as a delivery lands in the DLQ, without waiting for the interval", async () => {
    const p = await pipeline(server, key, { url: `${sink.url}/fail-dlq`, destination: { name: "Billing", max_retries: 0 } });
    const ruleId = await createRule(server, key, { name: "DLQ", rule_type: "dlq", rule_config: { threshold: 1, window_minutes: 60 }, destination_id: p.destinationId, channel_ids: [webhookChannel] });
    await evaluateNow();
    expect((await getRule(server, key, ruleId)).alert_rule.trigger_count).toBe(0);
    await deliver(p, 1);
    const [entry] = await waitForHistory(server, key, ruleId);
    expect(entry.trigger_reason).toBe("1 delivery to Billing landed in the dead-letter queue in the last 60 minutes (threshold 1)");
    expect(JSON.parse(entry.trigger_data)).toEqual({ dlq_count: 1, threshold: 1, window_minutes: 60 });
    expect(notificationsFor(ruleId)).toHaveLength(1);
  });

  it("respects cooldown_minutes on the injected clock", async () => {
    const p = await pipeline(server, key, { url: `${sink.url}/fail-cooldown`, destination: { name: "Cool", max_retries: 0 } });
    const cooled = await createRule(server, key, { name: "Cooled", rule_type: "dlq", destination_id: p.destinationId, cooldown_minutes: 10 });
    // Fires at every evaluation: shows when the cooled rule was evaluated and held back.
    const eager = await createRule(server, key, { name: "Eager", rule_type: "dlq", destination_id: p.destinationId, cooldown_minutes: 0 });

    await deliver(p, 1);
    await waitForHistory(server, key, eager, 1);
    expect((await waitForHistory(server, key, cooled, 1))).toHaveLength(1);

    clock.advance(9 * MINUTE);
    await deliver(p, 1);
    // The eager rule fired at the new time: the cooled one, evaluated just before it, held back.
    const now = iso(clock.now());
    await waitFor(async () => (await getRule(server, key, eager)).alert_rule.last_triggered_at === now, { what: "the eager rule to fire again" });
    expect((await getRule(server, key, cooled)).alert_rule.trigger_count).toBe(1);

    clock.advance(MINUTE);
    await deliver(p, 1);
    const history = await waitForHistory(server, key, cooled, 2);
    // It counts only what it has not reported: the two entries that landed since its first trigger.
    expect(JSON.parse(history[0].trigger_data).dlq_count).toBe(2);
    expect((await getRule(server, key, cooled)).alert_rule).toMatchObject({ trigger_count: 2, last_triggered_at: iso(clock.now()) });
  });
});

describe("volume_drop", () => {
  it("fires when fewer than min_events arrived in the window, once the rule is older than the window", async () => {
    const quiet = await createSourceId(server, key, { name: "Quiet source" });
    const busy = await pipeline(server, key, { url: `${sink.url}/ok`, source: { name: "Busy source" } });
    const ruleId = await createRule(server, key, { name: "Quiet", rule_type: "volume_drop", rule_config: { min_events: 1, window_minutes: 60 }, source_id: quiet, channel_ids: [webhookChannel] });
    const busyRule = await createRule(server, key, { name: "Busy", rule_type: "volume_drop", rule_config: { min_events: 1, window_minutes: 60 }, source_id: busy.sourceId });

    // Younger than its window: an empty hour has not been watched yet.
    clock.advance(59 * MINUTE);
    await evaluateNow();
    expect((await getRule(server, key, ruleId)).alert_rule.trigger_count).toBe(0);

    await deliver(busy, 1);
    clock.advance(MINUTE);
    await evaluateNow();
    const [entry] = await waitForHistory(server, key, ruleId);
    expect(entry.trigger_reason).toBe("Only 0 events arrived from Quiet source in the last 60 minutes (expected at least 1)");
    expect(JSON.parse(entry.trigger_data)).toEqual({ events: 0, min_events: 1, window_minutes: 60 });
    expect((await getRule(server, key, busyRule)).alert_rule.trigger_count).toBe(0);
  });
});

describe("issue_opened", () => {
  it("fires as an issue opens and as a resolved one reopens, unless it is snoozed; other destinations' issues are not its concern", async () => {
    const p = await pipeline(server, key, { url: `${sink.url}/flip`, destination: { name: "Flip", max_retries: 0 } });
    const other = await pipeline(server, key, { url: `${sink.url}/fail-other`, destination: { name: "Other", max_retries: 0 } });
    const ruleId = await createRule(server, key, { name: "New issues", rule_type: "issue_opened", destination_id: p.destinationId, channel_ids: [webhookChannel], cooldown_minutes: 0 });
    let flipStatus = 503;
    const respond = sink.respond;
    sink.respond = (req, i) => (req.path === "/flip" ? new Response("flip", { status: flipStatus }) : respond(req, i));
    try {
      await deliver(other, 1);
      await deliver(p, 1);
      const [opened] = await waitForHistory(server, key, ruleId);
      const issue = (await call(server, "GET", `/v1/issues?destination_id=${p.destinationId}`, { key })).body.issues[0];
      expect(opened.trigger_reason).toBe("Issue opened at Flip: HTTP 503 responses (1 failed attempt): destination answered HTTP 503");
      expect(JSON.parse(opened.trigger_data)).toEqual({
        issue_id: issue.id,
        destination_id: p.destinationId,
        destination_name: "Flip",
        fingerprint: `${p.destinationId}:http_503`,
        title: "HTTP 503 responses",
        occurrence_count: 1,
        last_status_code: 503,
      });
      expect(JSON.parse(notificationsFor(ruleId)[0]!.body).link).toBe(`https://relay.example.com/issues/${issue.id}`);

      // Counting on an open issue opens nothing.
      await deliver(p, 1);
      // Resolved, then reopened: it fires again.
      flipStatus = 200;
      await deliver(p, 1);
      flipStatus = 503;
      await deliver(p, 1);
      const history = await waitForHistory(server, key, ruleId, 2);
      expect(history[0].trigger_reason).toContain("(3 failed attempts)");

      // Snoozed: resolved and reopened again, it stays quiet.
      await call(server, "PATCH", `/v1/issues/${issue.id}`, { key, body: { snoozed_until: iso(new Date(clock.now().getTime() + 60 * MINUTE)) } });
      flipStatus = 200;
      await deliver(p, 1);
      flipStatus = 503;
      await deliver(p, 1);
      // A new issue on the same destination shows the task handled the reopening before it.
      flipStatus = 504;
      await deliver(p, 1);
      const after = await waitForHistory(server, key, ruleId, 3);
      expect(after[0].trigger_reason).toContain("HTTP 504 responses");
      expect(after).toHaveLength(3);
      expect((await getRule(server, key, ruleId)).alert_rule.trigger_count).toBe(3);
    } finally {
      sink.respond = respond;
    }
  });
});

describe("a disabled rule", () => {
  it("never fires, periodic or immediate, until it is enabled again", async () => {
    const p = await pipeline(server, key, { url: `${sink.url}/fail-disabled`, destination: { name: "Disabled watch", max_retries: 0 } });
    const periodic = await createRule(server, key, { name: "Off rate", rule_type: "failure_rate", enabled: false, rule_config: { threshold_percent: 1, min_attempts: 1 }, destination_id: p.destinationId });
    const immediate = await createRule(server, key, { name: "Off issues", rule_type: "issue_opened", enabled: false, destination_id: p.destinationId });
    const witness = await createRule(server, key, { name: "On issues", rule_type: "issue_opened", destination_id: p.destinationId });
    await deliver(p, 1);
    await waitForHistory(server, key, witness);
    await evaluateNow();
    for (const id of [periodic, immediate]) {
      const { alert_rule, history } = await getRule(server, key, id);
      expect(alert_rule.trigger_count).toBe(0);
      expect(history).toEqual([]);
    }
    await call(server, "PATCH", `/v1/alert-rules/${periodic}`, { key, body: { enabled: true } });
    await waitForHistory(server, key, periodic);
  });
});

describe("notifying channels", () => {
  it("notifies every channel; a failing one is retried and recorded while the others succeed", async () => {
    const slackDown = await createChannel(server, key, { name: "Slack (down)", channel_type: "slack", config: { webhook_url: `${sink.url}/chat-down` } });
    const slack = await createChannel(server, key, { name: "Slack", channel_type: "slack", config: { webhook_url: `${sink.url}/slack/T1/B1/token` } });
    const discord = await createChannel(server, key, { name: "Discord", channel_type: "discord", config: { webhook_url: `${sink.url}/discord/123/token` } });
    const email = await createChannel(server, key, { name: "Mail", channel_type: "email", config: { to: "oncall@example.com", from: "Relay <relay@example.com>" } });
    const p = await pipeline(server, key, { url: `${sink.url}/fail-channels`, destination: { name: "Payments", max_retries: 0 } });
    const ruleId = await createRule(server, key, { name: "Payments DLQ", rule_type: "dlq", destination_id: p.destinationId, channel_ids: [slackDown, webhookChannel, slack, discord, email] });
    await deliver(p, 1);

    const [entry] = await waitForHistory(server, key, ruleId);
    const outcomes = JSON.parse(entry.channels_notified);
    expect(outcomes).toEqual([
      { channel_id: slackDown, channel_name: "Slack (down)", channel_type: "slack", success: false, error: "Slack answered HTTP 500: no", attempts: 3 },
      { channel_id: webhookChannel, channel_name: "Ops webhook", channel_type: "webhook", success: true, error: null, attempts: 1 },
      { channel_id: slack, channel_name: "Slack", channel_type: "slack", success: true, error: null, attempts: 1 },
      { channel_id: discord, channel_name: "Discord", channel_type: "discord", success: true, error: null, attempts: 1 },
      { channel_id: email, channel_name: "Mail", channel_type: "email", success: true, error: null, attempts: 1 },
    ]);
    expect(sink.requests.filter((r) => r.path === "/chat-down")).toHaveLength(3);
    const link = `https://relay.example.com/alert-rules/${ruleId}`;

    // Slack's incoming-webhook format: text for notifications and for blocks-less receivers, blocks for Slack.
    const slackBody = JSON.parse(sink.requests.find((r) => r.path === "/slack/T1/B1/token")!.body);
    expect(slackBody.text).toBe(`:rotating_light: Alert "Payments DLQ" fired: ${entry.trigger_reason}\n<${link}|Open in hookrelay>`);
    expect(slackBody.blocks[0]).toEqual({ type: "header", text: { type: "plain_text", text: "Alert: Payments DLQ" } });
    expect(JSON.stringify(slackBody.blocks)).toContain(`<${link}|Open in hookrelay>`);
    expect(JSON.stringify(slackBody.blocks)).toContain("*dlq count:* 1");

    // Discord's execute-webhook format: content plus one embed, mentions off.
    const discordBody = JSON.parse(sink.requests.find((r) => r.path === "/discord/123/token")!.body);
    expect(discordBody).toMatchObject({ username: "hookrelay", content: `🚨 Alert "Payments DLQ" fired: ${entry.trigger_reason}`, allowed_mentions: { parse: [] } });
    expect(discordBody.embeds[0]).toMatchObject({ title: "Payments DLQ", url: link, timestamp: entry.created_at, footer: { text: "hookrelay · dlq" } });
    expect(discordBody.embeds[0].fields).toContainEqual({ name: "dlq count", value: "1", inline: true });

    // Email: a text and an HTML part.
    const mail = smtp.mails.find((m) => m.to.includes("oncall@example.com"))!;
    expect(mail.from).toBe("relay@example.com");
    expect(mailSubject(mail.raw)).toBe(`[hookrelay] Alert "Payments DLQ" fired: ${entry.trigger_reason}`);
    expect(mail.raw).toContain("Content-Type: text/plain");
    expect(mail.raw).toContain("Content-Type: text/html");
    const text = mimeText(mail.raw);
    expect(text).toContain(entry.trigger_reason);
    expect(text).toContain(`Open in hookrelay: ${link}`);
    expect(text).toContain(`<a href="${link}">Open in hookrelay</a>`);
  });

  it("counts alerts, notifications and open issues in /metrics", async () => {
    const metrics = await scrapeMetrics(server);
    const value = (line: string) => Number(metrics.split("\n").find((l) => l.startsWith(line))?.slice(line.length + 1));
    expect(value('hookrelay_alerts_fired_total{rule_type="dlq"}')).toBeGreaterThanOrEqual(3);
    expect(value('hookrelay_alerts_fired_total{rule_type="failure_rate"}')).toBeGreaterThanOrEqual(1);
    expect(value('hookrelay_notifications_sent_total{channel_type="webhook"}')).toBeGreaterThanOrEqual(3);
    expect(value('hookrelay_notifications_sent_total{channel_type="email"}')).toBe(1);
    expect(value('hookrelay_notifications_failed_total{channel_type="slack"}')).toBe(1);
    const open = (await call(server, "GET", "/v1/issues?status=open&limit=1", { key })).body.pagination.total;
    expect(value("hookrelay_open_issues")).toBe(open);
  });
});
