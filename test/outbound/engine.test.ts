import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { manualClock } from "../../src/core/clock";
import { createChannel, createRule, waitForHistory } from "../alerts/helpers";
import { waitFor } from "../helpers/delivery";
import { call, type TestServer } from "../helpers/server";
import { useServer } from "../helpers/fixture";
import { createApp, createEndpoint, getMessage, messageAttempts, outboundSink, sendMessage } from "./helpers";

/**
 * Outbound deliveries through the shared engine: retries, the DLQ, issues,
 * alert rules, pacing. The clock is the test's: days pass when it moves it,
 * and a bus wake-up has the worker look at the queue again.
 */
const DAY = 86_400_000;
const clock = manualClock(new Date());
let server: TestServer, key: string;
const sink = outboundSink();
let failing = new Set<string>();

useServer({ clock, env: { HOOKRELAY_ALERT_INTERVAL_SECONDS: "3600" } }, (s) => ({ server, key } = s));
beforeAll(async () => {
  sink.respond = (req) => (failing.has(req.path) ? new Response("down", { status: 500 }) : new Response("ok"));
});
afterAll(async () => {
  sink.close();
});

const wake = () => server.deps.bus.publish({ type: "delivery.queued" });

/** Waits until the message has `n` failed attempts; answers the newest. */
async function failures(appId: string, messageId: string, n: number) {
  return waitFor(
    async () => {
      const failed = (await messageAttempts(server, key, appId, messageId)).filter((a) => a.status === "failed");
      return failed.length >= n ? failed.sort((a, b) => b.attempt_number - a.attempt_number)[0]! : null;
    },
    { what: `${n} failed attempts` },
  );
}

async function endpointStatus(appId: string, endpointId: string) {
  return (await call(server, "GET", `/v1/applications/${appId}/endpoints/${endpointId}`, { key })).body.endpoint.status as string;
}

describe("a failing endpoint", () => {
  it("is retried on the engine's schedule, then its delivery lands in the DLQ and the message is failed, with an issue for the endpoint", async () => {
    failing = new Set(["/retry"]);
    const app = await createApp(server, key);
    const e = await createEndpoint(server, key, app.id, { url: `${sink.url}/retry` });
    const m = await sendMessage(server, key, app.id, { event_type: "r.x", payload: { n: 1 } });
    // Nine tries: the first and max_retries (8) more, each when the one before set it due.
    for (let n = 1; n <= 8; n++) {
      const last = await failures(app.id, m.id, n);
      expect(last.next_retry_at).not.toBeNull();
      expect((await getMessage(server, key, app.id, m.id)).status).toBe("pending");
      clock.set(new Date(last.next_retry_at));
      wake();
    }
    const final = await failures(app.id, m.id, 9);
    expect(final).toMatchObject({ attempt_number: 9, is_dlq: 1, error: "http_500", next_retry_at: null, trigger_type: "retry" });
    await waitFor(async () => ((await getMessage(server, key, app.id, m.id)).status === "failed" ? true : null), { what: "message failed" });
    expect(sink.at("/retry")).toHaveLength(9);
    expect(new Set(sink.at("/retry").map((r) => r.headers["webhook-id"]))).toEqual(new Set([m.id]));

    const dlq = await call(server, "GET", `/v1/delivery-attempts?is_dlq=1&destination_id=dst_${e.id}`, { key });
    expect(dlq.body.delivery_attempts.map((a: { id: string }) => a.id)).toEqual([final.id]);
    const issues = await call(server, "GET", `/v1/issues?destination_id=dst_${e.id}`, { key });
    expect(issues.body.issues).toEqual([expect.objectContaining({ fingerprint: `dst_${e.id}:http_500`, status: "open", occurrence_count: 9 })]);

    // Resent once it works again: out of the DLQ, delivered.
    failing = new Set();
    expect((await call(server, "POST", `/v1/applications/${app.id}/messages/${m.id}/resend`, { key, body: { endpoint_id: e.id } })).status).toBe(202);
    await waitFor(async () => ((await getMessage(server, key, app.id, m.id)).status === "delivered" ? true : null), { what: "message delivered" });
    expect((await call(server, "GET", `/v1/delivery-attempts?is_dlq=1&destination_id=dst_${e.id}`, { key })).body.delivery_attempts).toEqual([]);
  });

  it("is disabled once it has failed for HOOKRELAY_ENDPOINT_DISABLE_AFTER (5 days) without a success: an issue opens and issue_opened rules fire", async () => {
    failing = new Set(["/dying"]);
    const app = await createApp(server, key, { name: "Dying Co" });
    const e = await createEndpoint(server, key, app.id, { url: `${sink.url}/dying` });
    const channel = await createChannel(server, key, { name: "ops", channel_type: "webhook", config: { url: `${sink.url}/notify` } });
    const rule = await createRule(server, key, { name: "Endpoint trouble", rule_type: "issue_opened", destination_id: `dst_${e.id}`, channel_ids: [channel], cooldown_minutes: 0 });

    const m = await sendMessage(server, key, app.id, { event_type: "d.x", payload: {} });
    const first = await failures(app.id, m.id, 1);
    // Four days and more of failures: still active.
    clock.advance(4 * DAY);
    wake();
    await failures(app.id, m.id, 2);
    expect(await endpointStatus(app.id, e.id)).toBe("active");

    // The next failure comes five days after the first: disabled.
    clock.set(new Date(Date.parse(first.sent_at) + 5 * DAY));
    wake();
    const third = await failures(app.id, m.id, 3);
    await waitFor(async () => ((await endpointStatus(app.id, e.id)) === "disabled" ? true : null), { what: "endpoint disabled" });
    const issues = (await call(server, "GET", `/v1/issues?destination_id=dst_${e.id}`, { key })).body.issues as Record<string, any>[];
    const disabled = issues.find((i) => i.fingerprint === `dst_${e.id}:endpoint_disabled`);
    expect(disabled).toMatchObject({ status: "open", title: "Endpoint disabled", last_attempt_id: third.id, destination_name: `Dying Co: ${sink.url}/dying` });
    const history = await waitForHistory(server, key, rule, 2);
    expect(history.map((h: { trigger_reason: string }) => h.trigger_reason).join("\n")).toContain("Endpoint disabled");

    // Disabled, it receives nothing: its queued retry ends in the DLQ, new messages skip it.
    clock.set(new Date(third.next_retry_at));
    wake();
    await waitFor(async () => ((await getMessage(server, key, app.id, m.id)).status === "failed" ? true : null), { what: "message failed" });
    const attempts = await messageAttempts(server, key, app.id, m.id);
    expect(attempts[0]).toMatchObject({ error: "destination_disabled", is_dlq: 1 });
    expect((await sendMessage(server, key, app.id, { event_type: "d.y", payload: {} })).status).toBe("ignored");
    expect(sink.at("/dying")).toHaveLength(3);
  });

  it("starts its failure clock again after a success", async () => {
    failing = new Set(["/flaky"]);
    const app = await createApp(server, key);
    const e = await createEndpoint(server, key, app.id, { url: `${sink.url}/flaky` });
    const m1 = await sendMessage(server, key, app.id, { event_type: "f.x", payload: { n: 1 } });
    await failures(app.id, m1.id, 1);
    clock.advance(3 * DAY);
    failing = new Set();
    const m2 = await sendMessage(server, key, app.id, { event_type: "f.x", payload: { n: 2 } });
    await waitFor(async () => ((await getMessage(server, key, app.id, m2.id)).status === "delivered" ? true : null));
    failing = new Set(["/flaky"]);
    clock.advance(2 * DAY + 60_000);
    const m3 = await sendMessage(server, key, app.id, { event_type: "f.x", payload: { n: 3 } });
    await failures(app.id, m3.id, 1);
    // Five days after the first failure, but not after the last success.
    expect(await endpointStatus(app.id, e.id)).toBe("active");
  });
});

describe("an application's rate_limit", () => {
  it("paces deliveries across all its endpoints together", async () => {
    failing = new Set();
    const app = await createApp(server, key, { rate_limit: 2 });
    for (const p of ["/paced-a", "/paced-b", "/paced-c"]) await createEndpoint(server, key, app.id, { url: `${sink.url}${p}` });
    const paced = () => sink.requests.filter((r) => r.path.startsWith("/paced-")).length;
    await sendMessage(server, key, app.id, { event_type: "p.x", payload: {} });
    await sendMessage(server, key, app.id, { event_type: "p.x", payload: {} });
    await waitFor(async () => (paced() === 1 ? true : null));
    // Two a second: the next slot is half a second later on the server's clock, whichever endpoint it is for.
    for (let sent = 2; sent <= 6; sent++) {
      clock.advance(499);
      wake();
      await Bun.sleep(30);
      expect(paced()).toBe(sent - 1);
      clock.advance(1);
      wake();
      await waitFor(async () => (paced() === sent ? true : null), { what: `delivery ${sent}` });
    }
  });
});
