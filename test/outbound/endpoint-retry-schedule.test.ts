import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { manualClock } from "../../src/core/clock";
import { waitFor } from "../helpers/delivery";
import { call, type TestServer } from "../helpers/server";
import { useServer } from "../helpers/fixture";
import { createApp, createEndpoint, getMessage, messageAttempts, outboundSink, sendMessage } from "./helpers";

/** An application endpoint's retry_schedule, and an endpoint that answers 410 Gone (Standard Webhooks: stop sending). */
const clock = manualClock(new Date());
let server: TestServer, key: string;
const sink = outboundSink();

useServer({ clock }, (s) => ({ server, key } = s));
beforeAll(() => {
  sink.respond = (req) => (req.path === "/gone" ? new Response("gone", { status: 410 }) : req.path === "/down" ? new Response("down", { status: 500 }) : new Response("ok"));
});
afterAll(() => sink.close());

const wake = () => server.deps.bus.publish({ type: "delivery.queued" });
const endpointOf = async (appId: string, id: string) => (await call(server, "GET", `/v1/applications/${appId}/endpoints/${id}`, { key })).body.endpoint;

async function failures(appId: string, messageId: string, n: number) {
  return waitFor(async () => {
    const failed = (await messageAttempts(server, key, appId, messageId)).filter((a) => a.status === "failed");
    return failed.length >= n ? failed.sort((a, b) => b.attempt_number - a.attempt_number)[0]! : null;
  }, { what: `${n} failed attempts` });
}

describe("an endpoint's retry_schedule", () => {
  it("is set on create and PATCH, shown by GET, and its steps time the message's retries until the DLQ", async () => {
    const app = await createApp(server, key);
    const e = await createEndpoint(server, key, app.id, { url: `${sink.url}/down`, retry_schedule: ["10s", "1h"] });
    expect(e.retry_schedule).toBe('["10s","1h"]');
    const m = await sendMessage(server, key, app.id, { event_type: "s.x", payload: {} });

    for (const [n, step] of [[1, 10], [2, 3600]] as const) {
      const failed = await failures(app.id, m.id, n);
      const delay = Date.parse(failed.next_retry_at) - clock.now().getTime();
      expect(delay).toBeGreaterThanOrEqual(step * 1000);
      expect(delay).toBeLessThanOrEqual(step * 1200);
      clock.advance(delay);
      wake();
    }
    const last = await failures(app.id, m.id, 3);
    expect(last).toMatchObject({ attempt_number: 3, is_dlq: 1, next_retry_at: null });
    await waitFor(async () => ((await getMessage(server, key, app.id, m.id)).status === "failed" ? true : null), { what: "message failed" });

    const patched = await call(server, "PATCH", `/v1/applications/${app.id}/endpoints/${e.id}`, { key, body: { retry_schedule: null } });
    expect(patched.body.endpoint.retry_schedule).toBeNull();
    const trail = await call(server, "GET", `/v1/audit-log?resource_type=endpoint&resource_id=${e.id}`, { key });
    const changes = trail.body.entries.map((x: { changes: string | null }) => (x.changes ? JSON.parse(x.changes) : {}));
    expect(changes).toContainEqual(expect.objectContaining({ retry_schedule: { before: '["10s","1h"]', after: null } }));
  });

  it.each([[[]], [Array(21).fill("1s")], [["0s"]], [["abc"]], [["30d"]]])("refuses %j with 400", async (schedule) => {
    const app = await createApp(server, key);
    const res = await call(server, "POST", `/v1/applications/${app.id}/endpoints`, { key, body: { url: `${sink.url}/x`, retry_schedule: schedule } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("validation_error");
  });
});

describe("an endpoint answering 410 Gone", () => {
  it("is disabled at once, its delivery goes to the DLQ without a retry, and an issue opens", async () => {
    const app = await createApp(server, key, { name: "Gone Co" });
    const e = await createEndpoint(server, key, app.id, { url: `${sink.url}/gone` });
    const m = await sendMessage(server, key, app.id, { event_type: "g.x", payload: {} });
    const failed = await failures(app.id, m.id, 1);
    expect(failed).toMatchObject({ response_status: 410, error: "http_410", is_dlq: 1, next_retry_at: null });
    await waitFor(async () => ((await endpointOf(app.id, e.id)).status === "disabled" ? true : null), { what: "endpoint disabled" });

    const issues = (await call(server, "GET", `/v1/issues?destination_id=dst_${e.id}`, { key })).body.issues as Record<string, any>[];
    expect(issues.find((i) => i.fingerprint === `dst_${e.id}:endpoint_disabled`)).toMatchObject({ status: "open", title: "Endpoint disabled", last_attempt_id: failed.id });
    expect(sink.at("/gone")).toHaveLength(1);
  });
});
