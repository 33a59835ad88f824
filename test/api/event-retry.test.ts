import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { otherOrgKey } from "../helpers/rows";
import { call, startTestServer, type TestServer } from "../helpers/server";
import { startSink, type Sink } from "../helpers/sink";
import { createConnection, createDestination, listAttempts, pipeline, sendEvent, waitFor, waitForEventStatus } from "../helpers/delivery";

let server: TestServer;
let key: string;
let sink: Sink;

beforeAll(async () => {
  server = await startTestServer();
  key = await server.apiKey();
  sink = startSink();
});
afterAll(async () => {
  await server.close();
  sink.close();
});

const received = (eventId: string) => sink.requests.filter((r) => r.headers["x-hookrelay-event-id"] === eventId);
/** A sink path that fails until `fixed` is called. */
function breakPath(path: string) {
  let broken = true;
  const previous = sink.respond;
  sink.respond = (r, i) => (r.path === path && broken ? new Response("down", { status: 503 }) : previous(r, i));
  return () => (broken = false);
}
const waitForJob = (jobId: string) =>
  waitFor(
    async () => {
      const res = await call(server, "GET", `/v1/jobs/${jobId}`, { key });
      return res.body.status === "completed" ? res.body : null;
    },
    { what: `job ${jobId} to complete` },
  );

describe("POST /v1/events/{id}/retry", () => {
  it("queues one delivery per connected destination and reports it as the spec says", async () => {
    const p = await pipeline(server, key, { url: `${sink.url}/r1` });
    const eventId = await sendEvent(server, p.sourceId, { n: 1 });
    await waitForEventStatus(server, key, eventId, ["delivered"]);

    const res = await call(server, "POST", `/v1/events/${eventId}/retry`, { key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ retried: [{ destination_id: p.destinationId, connection_id: p.connectionId, attempt_id: expect.stringMatching(/^da_/), status: "queued" }], errors: [] });
    await waitFor(async () => received(eventId).length === 2, { what: "the retried delivery" });
    const attempts = await listAttempts(server, key, { event_id: eventId });
    await waitFor(async () => (await listAttempts(server, key, { event_id: eventId })).every((a) => a.status === "success"));
    expect(attempts.map((a) => a.trigger_type).sort()).toEqual(["initial", "manual"]);
    expect(await waitForEventStatus(server, key, eventId, ["delivered"])).toBe("delivered");
  });

  it("takes a DLQ'd delivery out of the DLQ and delivers it; the event becomes delivered", async () => {
    const p = await pipeline(server, key, { url: `${sink.url}/r2`, destination: { max_retries: 0 } });
    const fix = breakPath("/r2");
    const eventId = await sendEvent(server, p.sourceId, { n: 2 });
    await waitForEventStatus(server, key, eventId, ["failed"]);
    expect(await listAttempts(server, key, { event_id: eventId, is_dlq: "1" })).toHaveLength(1);
    fix();

    const res = await call(server, "POST", `/v1/events/${eventId.slice(4)}/retry`, { key });
    expect(res.body.retried).toHaveLength(1);
    await waitForEventStatus(server, key, eventId, ["delivered"]);
    expect(await listAttempts(server, key, { event_id: eventId, is_dlq: "1" })).toEqual([]);
    const failed = (await listAttempts(server, key, { event_id: eventId, status: "failed" }))[0];
    expect(failed.dlq_at).not.toBeNull(); // history kept
  });

  it("reports disabled connections and filters the event does not pass in errors, and never doubles an outstanding delivery", async () => {
    const p = await pipeline(server, key, { url: `${sink.url}/r3` });
    const off = await createDestination(server, key, { name: "Off", url: `${sink.url}/off` });
    const offConn = await createConnection(server, key, { source_id: p.sourceId, destination_id: off, enabled: false });
    const filtered = await createDestination(server, key, { name: "Filtered", url: `${sink.url}/filtered` });
    const filteredConn = await createConnection(server, key, { source_id: p.sourceId, destination_id: filtered, filter_rules: [{ field: "body.n", operator: "gt", value: 100 }] });

    const eventId = await sendEvent(server, p.sourceId, { n: 3 });
    await waitForEventStatus(server, key, eventId, ["delivered"]);
    // A paused destination keeps deliveries queued: the second retry finds the first still outstanding and reuses it.
    expect((await call(server, "PATCH", `/v1/destinations/${p.destinationId}`, { key, body: { status: "paused" } })).status).toBe(200);
    const first = await call(server, "POST", `/v1/events/${eventId}/retry`, { key });
    const second = await call(server, "POST", `/v1/events/${eventId}/retry`, { key });
    expect((await call(server, "PATCH", `/v1/destinations/${p.destinationId}`, { key, body: { status: "active" } })).status).toBe(200);
    expect(first.body.errors).toEqual([
      { destination_id: off, connection_id: offConn, code: "connection_disabled", message: expect.any(String) },
      { destination_id: filtered, connection_id: filteredConn, code: "filter_not_matched", message: expect.any(String) },
    ]);
    expect(second.body.retried[0].attempt_id).toBe(first.body.retried[0].attempt_id);
    await waitFor(async () => received(eventId).length === 2);
    expect(received(eventId).every((r) => r.path === "/r3")).toBe(true);
  });

  it("answers 404 for an unknown event and for another organization's event", async () => {
    const p = await pipeline(server, key, { url: `${sink.url}/r4` });
    const eventId = await sendEvent(server, p.sourceId, { n: 4 });
    for (const [id, k] of [["evt_" + "0".repeat(32), key], ["nope", key], [eventId, await otherOrgKey(server)]] as const) {
      const res = await call(server, "POST", `/v1/events/${id}/retry`, { key: k });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe("not_found");
    }
  });
});

describe("POST /v1/events/retry (bulk)", () => {
  it("retries every event the events list would show for the same filters, as a job", async () => {
    const p = await pipeline(server, key, { url: `${sink.url}/bulk`, destination: { max_retries: 0 } });
    const fix = breakPath("/bulk");
    const failedIds = [await sendEvent(server, p.sourceId, { n: 1 }), await sendEvent(server, p.sourceId, { n: 2 })];
    for (const id of failedIds) await waitForEventStatus(server, key, id, ["failed"]);
    fix();
    const okId = await sendEvent(server, p.sourceId, { n: 3 });
    await waitForEventStatus(server, key, okId, ["delivered"]);

    const res = await call(server, "POST", "/v1/events/retry", { key, body: { source_id: p.sourceId, status: "failed" } });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ job_id: expect.stringMatching(/^[0-9a-f]{32}$/), total: 2 });
    const job = await waitForJob(res.body.job_id);
    expect(job).toMatchObject({ kind: "bulk_retry", status: "completed", total: 2, processed: 2, succeeded: 2, failed: 0 });
    for (const id of failedIds) await waitForEventStatus(server, key, id, ["delivered"]);
    expect(received(okId)).toHaveLength(1);
    expect((await listAttempts(server, key, { trigger_type: "bulk_retry", destination_id: p.destinationId })).length).toBe(2);
  });

  it("takes the filters from the query string too, and validates them like the events list", async () => {
    const p = await pipeline(server, key, { url: `${sink.url}/bulk2` });
    const id = await sendEvent(server, p.sourceId, { n: 1 });
    await waitForEventStatus(server, key, id, ["delivered"]);
    const res = await call(server, "POST", `/v1/events/retry?source_id=${p.sourceId}`, { key });
    expect(res.status).toBe(202);
    expect(res.body.total).toBe(1);
    await waitForJob(res.body.job_id);
    await waitFor(async () => received(id).length === 2);

    const bad = await call(server, "POST", "/v1/events/retry", { key, body: { status: "bogus" } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("validation_error");
  });

  it("sees only the caller's organization", async () => {
    const res = await call(server, "POST", "/v1/events/retry", { key: await otherOrgKey(server), body: {} });
    expect(res.status).toBe(202);
    expect(res.body.total).toBe(0);
  });
});

describe("POST /v1/delivery-attempts/redrive", () => {
  it("re-queues the DLQ of a destination as a job; the events end delivered and the DLQ empty", async () => {
    const p = await pipeline(server, key, { url: `${sink.url}/dlq`, destination: { max_retries: 0 } });
    const fix = breakPath("/dlq");
    const ids = [await sendEvent(server, p.sourceId, { n: 1 }), await sendEvent(server, p.sourceId, { n: 2 }), await sendEvent(server, p.sourceId, { n: 3 })];
    for (const id of ids) await waitForEventStatus(server, key, id, ["failed"]);
    expect(await listAttempts(server, key, { is_dlq: "1", destination_id: p.destinationId })).toHaveLength(3);
    fix();

    const res = await call(server, "POST", "/v1/delivery-attempts/redrive", { key, body: { destination_id: p.destinationId } });
    expect(res.status).toBe(202);
    expect(res.body.total).toBe(3);
    expect(await waitForJob(res.body.job_id)).toMatchObject({ kind: "redrive", total: 3, processed: 3, succeeded: 3, failed: 0 });
    for (const id of ids) await waitForEventStatus(server, key, id, ["delivered"]);
    expect(await listAttempts(server, key, { is_dlq: "1", destination_id: p.destinationId })).toEqual([]);
    expect(await listAttempts(server, key, { trigger_type: "redrive", destination_id: p.destinationId })).toHaveLength(3);

    // Redriving again finds nothing: nothing is delivered twice.
    const again = await call(server, "POST", "/v1/delivery-attempts/redrive", { key, body: { connection_id: p.connectionId, destination_id: p.destinationId } });
    expect(again.body.total).toBe(0);
    expect((await waitForJob(again.body.job_id)).status).toBe("completed");
  });

  it("needs a destination_id or connection_id that exists", async () => {
    const none = await call(server, "POST", "/v1/delivery-attempts/redrive", { key, body: {} });
    expect(none.status).toBe(400);
    expect(none.body.error.code).toBe("validation_error");
    for (const body of [{ destination_id: "dst_" + "0".repeat(32) }, { connection_id: "0".repeat(32) }, { destination_id: "bogus" }]) {
      const res = await call(server, "POST", "/v1/delivery-attempts/redrive", { key, body });
      expect(res.status).toBe(404);
    }
  });

  it("answers 404 for an unknown job", async () => {
    const res = await call(server, "GET", `/v1/jobs/${"0".repeat(32)}`, { key });
    expect(res.status).toBe(404);
  });
});
