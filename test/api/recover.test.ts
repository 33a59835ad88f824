import { describe, expect, it } from "vitest";
import { manualClock } from "../../src/core/clock";
import { call, type TestServer } from "../helpers/server";
import type { Sink, SinkRequest } from "../helpers/sink";
import { listAttempts, pipeline, sendEvent, waitFor, waitForEventStatus } from "../helpers/delivery";
import { useServer } from "../helpers/fixture";
import { joinAs } from "../helpers/members";
import { createApp, createEndpoint, getMessage, messageAttempts, sendMessage } from "../outbound/helpers";

/**
 * Recovery by time (docs/delivery.md, "Recovering an outage") and an
 * endpoint's DLQ redrive: a sink down for a window, then back. Retries hours
 * apart run in milliseconds by moving an injected clock.
 */
const clock = manualClock(new Date());
let server: TestServer, key: string, sink: Sink;

useServer({ clock, sink: true }, (s) => ({ server, key, sink } = s));

const at = () => clock.now().toISOString();
const tick = (ms: number) => {
  clock.advance(ms);
  server.deps.bus.publish({ type: "delivery.queued" });
};
/** The sink is down for `path` while `down` holds, except for bodies marked "ok" (deliveries that succeed during the outage). */
function outage(path: string) {
  const state = { down: true };
  const previous = sink.respond;
  sink.respond = (r, i) => (r.path === path && state.down && !r.body.includes('"ok"') ? new Response("down", { status: 503 }) : previous(r, i));
  return state;
}
const countBy = (reqs: SinkRequest[], header: string) => {
  const n = new Map<string, number>();
  for (const r of reqs) n.set(r.headers[header]!, (n.get(r.headers[header]!) ?? 0) + 1);
  return n;
};
const waitForJob = (jobId: string) =>
  waitFor(
    async () => {
      const res = await call(server, "GET", `/v1/jobs/${jobId}`, { key });
      return res.body.status === "completed" ? res.body : null;
    },
    { what: `job ${jobId} to complete` },
  );

describe("who may recover", () => {
  it("is for developers and up: a viewer gets 403, no credentials 401", async () => {
    const p = await pipeline(server, key, { url: `${sink.url}/roles` });
    const app = await createApp(server, key);
    const ep = await createEndpoint(server, key, app.id, { url: `${sink.url}/roles-ep` });
    const viewer = await joinAs(server, { key }, "viewer");
    const body = { since: new Date(clock.now().getTime() - 3600_000).toISOString() };
    for (const path of [`/v1/destinations/${p.destinationId}/recover`, `/v1/applications/${app.id}/endpoints/${ep.id}/recover`]) {
      const res = await call(server, "POST", path, { headers: viewer.session, body });
      expect(res.status, path).toBe(403);
      expect(res.body.error.code).toBe("forbidden");
      expect((await call(server, "POST", path, { body })).status).toBe(401);
    }
  });
});

describe("POST /v1/destinations/{id}/recover", () => {
  it("re-sends each event whose latest attempt failed in the window once, in received order; successes, chains still retrying and failures outside the window are left alone", async () => {
    const p = await pipeline(server, key, { url: `${sink.url}/d`, destination: { max_retries: 0 } });
    const down = outage("/d");
    const before = await sendEvent(server, p.sourceId, { n: "before" });
    await waitForEventStatus(server, key, before, ["failed"]);

    tick(60_000);
    const since = at();
    const inWindow: string[] = [];
    for (const n of [1, 2, 3]) {
      inWindow.push(await sendEvent(server, p.sourceId, { n }));
      await waitForEventStatus(server, key, inWindow[inWindow.length - 1]!, ["failed"]);
      tick(1000);
    }
    const fine = await sendEvent(server, p.sourceId, { ok: true });
    await waitForEventStatus(server, key, fine, ["delivered"]);
    // From here a failure retries once, an hour later: this chain is still retrying when the window is recovered.
    expect((await call(server, "PATCH", `/v1/destinations/${p.destinationId}`, { key, body: { max_retries: 1, retry_strategy: "linear", retry_interval_seconds: 3600 } })).status).toBe(200);
    const retrying = await sendEvent(server, p.sourceId, { n: "retrying" });
    await waitFor(async () => (await listAttempts(server, key, { event_id: retrying, status: "queued" })).length === 1, { what: "the retry queued" });
    tick(60_000);
    const until = at();
    tick(60_000);
    const after = await sendEvent(server, p.sourceId, { n: "after" });
    await waitFor(async () => (await listAttempts(server, key, { event_id: after, status: "failed" })).length === 1, { what: "the late failure" });
    down.down = false;
    tick(1000);

    const seen = sink.requests.length;
    const res = await call(server, "POST", `/v1/destinations/${p.destinationId}/recover`, { key, body: { since, until } });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ job_id: expect.any(String), total: 3, skipped: 0 });
    expect(await waitForJob(res.body.job_id)).toMatchObject({ kind: "recover", total: 3, processed: 3, succeeded: 3, failed: 0, skipped: 0 });
    for (const id of inWindow) await waitForEventStatus(server, key, id, ["delivered"]);

    const resent = countBy(sink.requests.slice(seen), "x-hookrelay-event-id");
    expect(Object.fromEntries(resent)).toEqual(Object.fromEntries(inWindow.map((id) => [id, 1])));
    // Queued in received order (attempt ids sort by creation).
    const recovered = await listAttempts(server, key, { destination_id: p.destinationId, trigger_type: "recover" });
    expect(recovered.sort((a, b) => (a.id < b.id ? -1 : 1)).map((a) => a.event_id)).toEqual(inWindow);
    expect(await listAttempts(server, key, { event_id: retrying, trigger_type: "recover" })).toEqual([]);
    for (const id of [before, after]) expect(await listAttempts(server, key, { event_id: id, trigger_type: "recover" })).toEqual([]);
    expect(await listAttempts(server, key, { event_id: before, is_dlq: "1" })).toHaveLength(1);

    // The window again: nothing is sent twice.
    const again = await call(server, "POST", `/v1/destinations/${p.destinationId}/recover`, { key, body: { since, until } });
    expect(again.body.total).toBe(0);
    expect(await waitForJob(again.body.job_id)).toMatchObject({ total: 0, processed: 0 });

    const audit = await call(server, "GET", `/v1/audit-log?action=recover&resource_id=${p.destinationId}`, { key });
    expect(audit.body.entries[0]).toMatchObject({ action: "recover", resource_type: "destination", resource_id: p.destinationId });
  });

  it("walks a large window in pages, each event once; a disabled destination's events count as failed", async () => {
    const p = await pipeline(server, key, { url: `${sink.url}/many`, destination: { max_retries: 0 } });
    const down = outage("/many");
    const since = at();
    tick(1000);
    // One clock instant for all of them: the walk's order and cursor fall back on the id.
    const ids = await Promise.all(Array.from({ length: 150 }, (_, n) => sendEvent(server, p.sourceId, { n })));
    const dlqSize = async () => (await call(server, "GET", `/v1/delivery-attempts?is_dlq=1&destination_id=${p.destinationId}&limit=1`, { key })).body.pagination.total;
    await waitFor(async () => (await dlqSize()) === 150, { what: "150 failures in the DLQ" });
    down.down = false;
    tick(1000);
    const seen = sink.requests.length;
    const res = await call(server, "POST", `/v1/destinations/${p.destinationId}/recover`, { key, body: { since } });
    expect(res.body).toMatchObject({ total: 150, skipped: 0 });
    expect(await waitForJob(res.body.job_id)).toMatchObject({ total: 150, processed: 150, succeeded: 150, failed: 0 });
    await waitFor(async () => (await dlqSize()) === 0 && sink.requests.length - seen >= 150, { what: "every event sent again" });
    const resent = countBy(sink.requests.slice(seen), "x-hookrelay-event-id");
    expect(resent.size).toBe(150);
    expect([...resent.values()].every((n) => n === 1)).toBe(true);
    expect(new Set(ids)).toEqual(new Set(resent.keys()));

    const off = await pipeline(server, key, { url: `${sink.url}/off`, destination: { max_retries: 0 } });
    const offDown = outage("/off");
    const failed = [await sendEvent(server, off.sourceId, { n: 1 }), await sendEvent(server, off.sourceId, { n: 2 })];
    for (const id of failed) await waitForEventStatus(server, key, id, ["failed"]);
    offDown.down = false;
    expect((await call(server, "PATCH", `/v1/destinations/${off.destinationId}`, { key, body: { status: "disabled" } })).status).toBe(200);
    tick(1000);
    const before = sink.requests.length;
    const none = await call(server, "POST", `/v1/destinations/${off.destinationId}/recover`, { key, body: { since } });
    expect(await waitForJob(none.body.job_id)).toMatchObject({ total: 2, processed: 2, succeeded: 0, failed: 2 });
    expect(sink.requests.length).toBe(before);
    for (const id of failed) expect(await listAttempts(server, key, { event_id: id, is_dlq: "1" })).toHaveLength(1);
  });

  it("answers 400 to a bad window and 404 to an unknown destination", async () => {
    const p = await pipeline(server, key, { url: `${sink.url}/bad` });
    const url = `/v1/destinations/${p.destinationId}/recover`;
    const hour = 3600_000;
    const now = clock.now().getTime();
    const iso = (ms: number) => new Date(ms).toISOString();
    for (const [body, field] of [
      [{}, "body.since"],
      [{ since: "yesterday" }, "body.since"],
      [{ since: iso(now - hour), until: "soon" }, "body.until"],
      [{ since: iso(now - hour), until: iso(now - 2 * hour) }, "body.until"],
      [{ since: iso(now - hour), until: iso(now - hour) }, "body.until"],
      [{ since: iso(now - 31 * 24 * hour) }, "body.since"],
      [{ since: iso(now + hour) }, "body.since"],
    ] as const) {
      const res = await call(server, "POST", url, { key, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe("validation_error");
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
    }
    const missing = await call(server, "POST", `/v1/destinations/dst_${"0".repeat(32)}/recover`, { key, body: { since: iso(now - hour) } });
    expect(missing.status).toBe(404);
  });
});

describe("application endpoints: POST …/endpoints/{id}/recover and DLQ redrive", () => {
  /** Moves the clock through every retry until each message has settled (its chain ended in the DLQ or delivered). */
  async function settle(appId: string, ids: string[]) {
    for (let round = 0; round < 30; round++) {
      const statuses = await Promise.all(ids.map(async (id) => (await getMessage(server, key, appId, id)).status));
      if (statuses.every((s) => s !== "pending")) return;
      // Wait for the due tries to be recorded, then jump past the next retry (at most about an hour and a quarter).
      await waitFor(async () => {
        for (const id of ids) {
          const rows = await messageAttempts(server, key, appId, id);
          if (rows.some((a) => a.status === "delivering" || (a.status === "queued" && a.scheduled_at <= at()))) return false;
        }
        return true;
      }, { what: "due tries recorded" });
      tick(2 * 3600_000);
    }
    throw new Error("messages did not settle");
  }

  it("recovers the window's failed messages once each, in order; redrive by dst_<endpoint id> delivers the rest of its DLQ", async () => {
    const app = await createApp(server, key);
    const ep = await createEndpoint(server, key, app.id, { url: `${sink.url}/ep` });
    const down = outage("/ep");
    const early = await sendMessage(server, key, app.id, { event_type: "a.b", payload: { n: "early" } });
    await settle(app.id, [early.id]);

    tick(3600_000);
    const since = at();
    const ok = await sendMessage(server, key, app.id, { event_type: "a.b", payload: { ok: true } });
    const failing = [];
    for (const n of [1, 2, 3]) failing.push((await sendMessage(server, key, app.id, { event_type: "a.b", payload: { n } })).id);
    await settle(app.id, [ok.id, ...failing]);
    expect((await getMessage(server, key, app.id, ok.id)).status).toBe("delivered");
    tick(1000);
    const until = at();
    tick(3600_000);
    const late = await sendMessage(server, key, app.id, { event_type: "a.b", payload: { n: "late" } });
    await settle(app.id, [late.id]);
    for (const id of [early.id, late.id, ...failing]) expect((await getMessage(server, key, app.id, id)).status).toBe("failed");
    down.down = false;

    const seen = sink.requests.length;
    const res = await call(server, "POST", `/v1/applications/${app.id}/endpoints/${ep.id}/recover`, { key, body: { since, until } });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ job_id: expect.any(String), total: 3, skipped: 0 });
    expect(await waitForJob(res.body.job_id)).toMatchObject({ kind: "recover", total: 3, processed: 3, succeeded: 3, failed: 0 });
    for (const id of failing) await waitFor(async () => (await getMessage(server, key, app.id, id)).status === "delivered", { what: `message ${id} delivered` });
    expect(Object.fromEntries(countBy(sink.requests.slice(seen), "webhook-id"))).toEqual(Object.fromEntries(failing.map((id) => [id, 1])));
    const recovered = await listAttempts(server, key, { destination_id: `dst_${ep.id}`, trigger_type: "recover" });
    const messageOf = new Map(await Promise.all(failing.map(async (id) => [(await messageAttempts(server, key, app.id, id))[0]!.event_id, id] as const)));
    expect(recovered.sort((a, b) => (a.id < b.id ? -1 : 1)).map((a) => messageOf.get(a.event_id))).toEqual(failing);

    const audit = await call(server, "GET", `/v1/audit-log?action=recover&resource_id=${ep.id}`, { key });
    expect(audit.body.entries[0]).toMatchObject({ action: "recover", resource_type: "endpoint", resource_id: ep.id });

    // What stayed in the endpoint's DLQ (failures outside the window) is redriven by its destination id.
    const before = sink.requests.length;
    const redrive = await call(server, "POST", "/v1/delivery-attempts/redrive", { key, body: { destination_id: `dst_${ep.id}` } });
    expect(redrive.status).toBe(202);
    expect(redrive.body).toMatchObject({ total: 2, skipped: 0 });
    expect(await waitForJob(redrive.body.job_id)).toMatchObject({ kind: "redrive", processed: 2, succeeded: 2, failed: 0 });
    for (const id of [early.id, late.id]) await waitFor(async () => (await getMessage(server, key, app.id, id)).status === "delivered", { what: `message ${id} delivered` });
    expect(Object.fromEntries(countBy(sink.requests.slice(before), "webhook-id"))).toEqual({ [early.id]: 1, [late.id]: 1 });
    expect(await listAttempts(server, key, { is_dlq: "1", destination_id: `dst_${ep.id}` })).toEqual([]);
  });

  it("answers 404 to an unknown endpoint and 400 to a bad window", async () => {
    const app = await createApp(server, key);
    const ep = await createEndpoint(server, key, app.id, { url: `${sink.url}/ep-bad` });
    const since = new Date(clock.now().getTime() - 3600_000).toISOString();
    expect((await call(server, "POST", `/v1/applications/${app.id}/endpoints/${"0".repeat(32)}/recover`, { key, body: { since } })).status).toBe(404);
    const bad = await call(server, "POST", `/v1/applications/${app.id}/endpoints/${ep.id}/recover`, { key, body: { since, until: since } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.map((d: { field: string }) => d.field)).toContain("body.until");
  });
});
