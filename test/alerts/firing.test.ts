/**
 * A rule reports each thing once: a DLQ entry, a failed or slow attempt, a
 * quiet window triggers it at most once however often it is evaluated; a
 * condition that goes on re-notifies only with something new and after the
 * cooldown; a firing rule whose condition clears sends one resolved
 * notification to the same channels, and its history shows both.
 * Real deliveries to a local sink, the running alert task, a manual clock;
 * the evaluation interval is an hour, so a pass runs only when the test asks.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { iso, manualClock } from "../../src/core/clock";
import { createSourceId, pipeline, sendEvent, waitForEventStatus, type Pipeline } from "../helpers/delivery";
import type { TestServer } from "../helpers/server";
import type { Sink } from "../helpers/sink";
import { useServer } from "../helpers/fixture";
import { createChannel, createRule, getRule, waitForHistory } from "./helpers";

const clock = manualClock(new Date("2026-05-01T10:00:00.000Z"));
const MINUTE = 60_000;
const WAIT = 30_000;
let server: TestServer, key: string, sink: Sink;
let hook: string;
let slack: string;
const flip = { status: 503 };

useServer({ clock, env: { HOOKRELAY_ALERT_INTERVAL_SECONDS: "3600", HOOKRELAY_BASE_URL: "https://relay.example.com" }, sink: true }, (s) => ({ server, key, sink } = s));
beforeAll(async () => {
  sink.respond = async (req) => {
    const path = req.path.split("?")[0]!;
    if (path.startsWith("/fail")) return new Response("broken", { status: 502 });
    if (path.startsWith("/flip")) return new Response("flip", { status: flip.status });
    if (path.startsWith("/slow")) {
      await Bun.sleep(120);
      return new Response("ok");
    }
    return new Response("ok");
  };
  hook = await createChannel(server, key, { name: "Hook", channel_type: "webhook", config: { url: `${sink.url}/notify` } });
  slack = await createChannel(server, key, { name: "Chat", channel_type: "slack", config: { webhook_url: `${sink.url}/chat/T1/B1/token` } });
});

/** Sends events and waits until each one's single try is recorded. */
async function deliver(p: Pipeline, n: number) {
  for (let i = 0; i < n; i++) {
    const id = await sendEvent(server, p.sourceId, { i });
    await waitForEventStatus(server, key, id, ["delivered", "failed"], WAIT);
  }
}

/**
 * Moves the clock (a millisecond unless told) and has every periodic rule
 * evaluated; resolves once a pass at the new time finished: whatever fired
 * or resolved has claimed it by then.
 */
async function evaluateNow(advanceMs = 1) {
  clock.advance(advanceMs);
  const at = iso(clock.now());
  const done = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("no evaluation pass")), WAIT);
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

const triggers = async (ruleId: string) => (await getRule(server, key, ruleId)).alert_rule.trigger_count as number;
const hookBodies = (ruleId: string) => sink.requests.filter((r) => r.path === "/notify").map((r) => JSON.parse(r.body)).filter((b) => b.alert_rule_id === ruleId);

describe("what a rule counts", () => {
  it("dlq, cooldown 0: the same dead-letter entries trigger it once however often it is evaluated; each new entry once", async () => {
    const p = await pipeline(server, key, { url: `${sink.url}/fail-dlq`, destination: { name: "Billing", max_retries: 0 } });
    await deliver(p, 4);
    const ruleId = await createRule(server, key, { name: "DLQ once", rule_type: "dlq", destination_id: p.destinationId, channel_ids: [hook], cooldown_minutes: 0 });
    const [first] = await waitForHistory(server, key, ruleId, 1, WAIT);
    expect(first.trigger_reason).toBe("4 deliveries to Billing landed in the dead-letter queue in the last 60 minutes (threshold 1)");
    expect(first.status).toBe("triggered");

    for (let i = 0; i < 6; i++) await evaluateNow(10_000);
    expect(await triggers(ruleId)).toBe(1);

    clock.advance(1000);
    await deliver(p, 1);
    const history = await waitForHistory(server, key, ruleId, 2, WAIT);
    expect(history[0].trigger_reason).toBe("1 delivery to Billing landed in the dead-letter queue in the last 60 minutes (threshold 1)");
    for (let i = 0; i < 4; i++) await evaluateNow(10_000);
    expect(await triggers(ruleId)).toBe(2);
    expect((await getRule(server, key, ruleId)).history.map((h) => JSON.parse(h.trigger_data).dlq_count)).toEqual([1, 4]);
  });

  it("failure_rate, cooldown 0: failed attempts trigger it once; new ones that meet the threshold by themselves trigger it again", async () => {
    const p = await pipeline(server, key, { url: `${sink.url}/fail-rate`, destination: { name: "Orders", max_retries: 0 } });
    await deliver(p, 3);
    const ruleId = await createRule(server, key, {
      name: "Rate once",
      rule_type: "failure_rate",
      rule_config: { threshold_percent: 50, window_minutes: 5, min_attempts: 3 },
      destination_id: p.destinationId,
      channel_ids: [hook],
      cooldown_minutes: 0,
    });
    await waitForHistory(server, key, ruleId, 1, WAIT);
    for (let i = 0; i < 5; i++) await evaluateNow(1000);
    expect(await triggers(ruleId)).toBe(1);

    // Two new failures: fewer than min_attempts of their own, so nothing new to report yet.
    clock.advance(1000);
    await deliver(p, 2);
    await evaluateNow();
    expect(await triggers(ruleId)).toBe(1);
    clock.advance(1000);
    await deliver(p, 1);
    await evaluateNow();
    expect(await triggers(ruleId)).toBe(2);
    const [second] = await waitForHistory(server, key, ruleId, 2, WAIT);
    expect(JSON.parse(second.trigger_data)).toMatchObject({ failed: 3, attempts: 3 });
    for (let i = 0; i < 3; i++) await evaluateNow(1000);
    expect(await triggers(ruleId)).toBe(2);
  });

  it("latency, cooldown 0: slow attempts trigger it once", async () => {
    const p = await pipeline(server, key, { url: `${sink.url}/slow`, destination: { name: "Slow API", max_retries: 0 } });
    await deliver(p, 2);
    const ruleId = await createRule(server, key, { name: "Slow once", rule_type: "latency", rule_config: { threshold_ms: 100, percentile: 50 }, destination_id: p.destinationId, channel_ids: [hook], cooldown_minutes: 0 });
    await waitForHistory(server, key, ruleId, 1, WAIT);
    for (let i = 0; i < 5; i++) await evaluateNow(1000);
    expect(await triggers(ruleId)).toBe(1);
    clock.advance(1000);
    await deliver(p, 1);
    await evaluateNow();
    expect(await triggers(ruleId)).toBe(2);
    expect(JSON.parse((await waitForHistory(server, key, ruleId, 2, WAIT))[0].trigger_data).samples).toBe(1);
  });

  it("volume_drop: a quiet window is reported once; a drop that goes on re-notifies once a whole new window passed, and not within the cooldown", async () => {
    const quiet = await createSourceId(server, key, { name: "Quiet" });
    const eager = await createRule(server, key, { name: "Quiet, cooldown 0", rule_type: "volume_drop", rule_config: { min_events: 1, window_minutes: 10 }, source_id: quiet, cooldown_minutes: 0 });
    const cooled = await createRule(server, key, { name: "Quiet, cooldown 15", rule_type: "volume_drop", rule_config: { min_events: 1, window_minutes: 10 }, source_id: quiet, cooldown_minutes: 15 });
    await evaluateNow(10 * MINUTE);
    expect([await triggers(eager), await triggers(cooled)]).toEqual([1, 1]);
    await evaluateNow(5 * MINUTE);
    expect([await triggers(eager), await triggers(cooled)]).toEqual([1, 1]);
    // +10 minutes: a new quiet window; the cooled rule is still in its cooldown.
    await evaluateNow(5 * MINUTE);
    expect([await triggers(eager), await triggers(cooled)]).toEqual([2, 1]);
    await evaluateNow(5 * MINUTE);
    expect([await triggers(eager), await triggers(cooled)]).toEqual([2, 2]);
  });
});

describe("a condition that goes on", () => {
  it("re-notifies only after the cooldown, reporting what came meanwhile", async () => {
    const p = await pipeline(server, key, { url: `${sink.url}/fail-cool`, destination: { name: "Cool", max_retries: 0 } });
    const ruleId = await createRule(server, key, { name: "Cooled DLQ", rule_type: "dlq", destination_id: p.destinationId, channel_ids: [hook], cooldown_minutes: 10 });
    await deliver(p, 1);
    await waitForHistory(server, key, ruleId, 1, WAIT);
    clock.advance(MINUTE);
    await deliver(p, 1);
    await evaluateNow();
    await evaluateNow(8 * MINUTE);
    expect(await triggers(ruleId)).toBe(1);
    await evaluateNow(MINUTE);
    expect(await triggers(ruleId)).toBe(2);
    const history = await waitForHistory(server, key, ruleId, 2, WAIT);
    expect(JSON.parse(history[0].trigger_data).dlq_count).toBe(1);
    await evaluateNow(MINUTE);
    expect(await triggers(ruleId)).toBe(2);
  });
});

describe("resolved", () => {
  it("dlq: once its entries left the window, one resolved notification to the same channels; history shows both; trigger_count unchanged", async () => {
    const p = await pipeline(server, key, { url: `${sink.url}/fail-resolve`, destination: { name: "Payments", max_retries: 0 } });
    const ruleId = await createRule(server, key, { name: "Payments DLQ", rule_type: "dlq", rule_config: { window_minutes: 30 }, destination_id: p.destinationId, channel_ids: [hook, slack], cooldown_minutes: 0 });
    await deliver(p, 1);
    const [fired] = await waitForHistory(server, key, ruleId, 1, WAIT);
    await evaluateNow(10 * MINUTE);
    expect((await getRule(server, key, ruleId)).history).toHaveLength(1);

    // Over 30 minutes after it landed, the entry is out of the window: the condition cleared.
    await evaluateNow(20 * MINUTE + 1);
    const [resolved, triggered] = await waitForHistory(server, key, ruleId, 2, WAIT);
    expect(triggered).toEqual(fired);
    expect(resolved).toMatchObject({ status: "resolved", alert_rule_id: ruleId, created_at: iso(clock.now()) });
    expect(resolved.trigger_reason).toBe("Resolved: 0 deliveries to Payments from the last 30 minutes still in the dead-letter queue (threshold 1)");
    expect(JSON.parse(resolved.trigger_data)).toEqual({ dlq_count: 0, threshold: 1, window_minutes: 30, firing_since: fired.created_at });
    expect(JSON.parse(resolved.channels_notified).map((c: { channel_id: string; success: boolean }) => [c.channel_id, c.success])).toEqual([
      [hook, true],
      [slack, true],
    ]);
    expect((await getRule(server, key, ruleId)).alert_rule.trigger_count).toBe(1);

    const bodies = hookBodies(ruleId);
    expect(bodies.map((b) => b.type)).toEqual(["alert.triggered", "alert.resolved"]);
    expect(bodies[1]).toMatchObject({ reason: resolved.trigger_reason, triggered_at: fired.created_at, resolved_at: resolved.created_at, link: `https://relay.example.com/alert-rules/${ruleId}` });
    const chat = sink.requests.filter((r) => r.path === "/chat/T1/B1/token").map((r) => JSON.parse(r.body).text as string);
    expect(chat.some((t) => t.startsWith(`:white_check_mark: Alert "Payments DLQ": Resolved: `))).toBe(true);

    // Resolved once: more passes send nothing; a new entry fires it again.
    await evaluateNow(MINUTE);
    await evaluateNow(MINUTE);
    clock.advance(1000);
    await deliver(p, 1);
    const after = await waitForHistory(server, key, ruleId, 3, WAIT);
    expect(after.map((h) => h.status)).toEqual(["triggered", "resolved", "triggered"]);
    expect(hookBodies(ruleId).map((b) => b.type)).toEqual(["alert.triggered", "alert.resolved", "alert.triggered"]);
  });

  it("failure_rate: when deliveries recover the rule resolves; it stays quiet until it fires again", async () => {
    flip.status = 503;
    const p = await pipeline(server, key, { url: `${sink.url}/flip`, destination: { name: "Flip", max_retries: 0 } });
    await deliver(p, 3);
    const ruleId = await createRule(server, key, {
      name: "Flip failing",
      rule_type: "failure_rate",
      rule_config: { threshold_percent: 50, window_minutes: 5, min_attempts: 3 },
      destination_id: p.destinationId,
      channel_ids: [hook],
      cooldown_minutes: 0,
    });
    await waitForHistory(server, key, ruleId, 1, WAIT);
    flip.status = 200;
    clock.advance(1000);
    await deliver(p, 4);
    await evaluateNow();
    const [resolved] = await waitForHistory(server, key, ruleId, 2, WAIT);
    expect(resolved.status).toBe("resolved");
    expect(resolved.trigger_reason).toBe("Resolved: 42.9% of deliveries to Flip failed in the last 5 minutes (3 of 7; threshold 50%)");
    await evaluateNow(1000);
    await evaluateNow(1000);
    expect((await getRule(server, key, ruleId)).alert_rule.trigger_count).toBe(1);

    // Failing again: new failures fire it, and a barrier shows no second resolution was sent meanwhile.
    flip.status = 503;
    clock.advance(1000);
    await deliver(p, 5);
    await evaluateNow();
    const history = await waitForHistory(server, key, ruleId, 3, WAIT);
    expect(history.map((h) => h.status)).toEqual(["triggered", "resolved", "triggered"]);
  });
});
