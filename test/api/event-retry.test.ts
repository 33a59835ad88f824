import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createSource, ingest } from "../helpers/ingest";
import { otherOrgKey } from "../helpers/rows";
import { call, type TestServer } from "../helpers/server";
import type { Sink } from "../helpers/sink";
import { createConnection, createDestination, eventStatus, listAttempts, pipeline, sendEvent, waitFor, waitForEventStatus } from "../helpers/delivery";
import { useServer } from "../helpers/fixture";

let server: TestServer, key: string, sink: Sink;

useServer({ sink: true }, (s) => ({ server, key, sink } = s));

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
    expect(res.body).toEqual({ job_id: expect.stringMatching(/^[0-9a-f]{32}$/), total: 2, skipped: 0 });
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
    expect(res.body).toEqual({ job_id: null, total: 0, skipped: 0 });
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

describe("rejected events are never delivered by a retry, bulk retry or redrive", () => {
  /** A GitHub source connected to the sink, and a forged webhook (no valid signature) stored `rejected`. */
  async function forgedEvent(path: string, destination: Record<string, unknown> = {}) {
    const source = await createSource(server, key, { name: `gh ${path}`, template: "github", verification_secret: "real secret" });
    const destinationId = await createDestination(server, key, { url: `${sink.url}${path}`, ...destination });
    const connectionId = await createConnection(server, key, { source_id: source.id, destination_id: destinationId });
    const res = await ingest(server, source.id, { body: '{"forged":true}', headers: { "x-hub-signature-256": "sha256=" + "0".repeat(64) } });
    expect(res.status).toBe(401);
    const eventId = res.body.error.details.event_id as string;
    expect(await eventStatus(server, key, eventId)).toBe("rejected");
    return { sourceId: source.id, destinationId, connectionId, eventId };
  }
  const delivered = (path: string) => sink.requests.filter((r) => r.path === path);

  it("answers 409 conflict to a single retry, saying why, and sends nothing", async () => {
    const { eventId } = await forgedEvent("/forged-1");
    const res = await call(server, "POST", `/v1/events/${eventId}/retry`, { key });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe("conflict");
    expect(res.body.error.message).toMatch(/was rejected \(signature verification failed\).*force: true/);
    const also = await call(server, "POST", `/v1/events/${eventId}/retry`, { key, body: { force: false } });
    expect(also.status).toBe(409);
    expect(await listAttempts(server, key, { event_id: eventId })).toEqual([]);
    expect(await eventStatus(server, key, eventId)).toBe("rejected");
  });

  it("says so for an event rejected by its source's JSON Schema too", async () => {
    const source = await createSource(server, key, { name: "schema reject", schema_validation_enabled: true, json_schema: { type: "object", required: ["id"] }, schema_action: "reject" });
    const res = await ingest(server, source.id, { body: '{"no":"id"}' });
    expect(res.status).toBe(422);
    const eventId = res.body.error.details.event_id as string;
    const retry = await call(server, "POST", `/v1/events/${eventId}/retry`, { key });
    expect(retry.status).toBe(409);
    expect(retry.body.error.message).toMatch(/JSON Schema/);
  });

  it("delivers with force: true, records the attempt as forced, and the event stays rejected", async () => {
    const { eventId, destinationId, connectionId } = await forgedEvent("/forged-2");
    const res = await call(server, "POST", `/v1/events/${eventId}/retry`, { key, body: { force: true } });
    expect(res.status).toBe(200);
    expect(res.body.retried).toEqual([{ destination_id: destinationId, connection_id: connectionId, attempt_id: expect.any(String), status: "queued" }]);
    const [attempt] = await waitFor(async () => {
      const rows = await listAttempts(server, key, { event_id: eventId });
      return rows.length === 1 && rows[0].status === "success" ? rows : null;
    });
    expect(attempt).toMatchObject({ trigger_type: "manual", forced: 1 });
    expect(delivered("/forged-2")).toHaveLength(1);
    expect(await eventStatus(server, key, eventId)).toBe("rejected");
    const detail = await call(server, "GET", `/v1/events/${eventId}`, { key });
    expect(detail.body.delivery_attempts).toEqual([expect.objectContaining({ id: attempt.id, forced: 1 })]);
  });

  it("bulk retry skips rejected events and counts them in the answer and the job", async () => {
    const { sourceId, eventId } = await forgedEvent("/forged-3");
    const good = await ingest(server, sourceId, {
      body: '{"real":true}',
      headers: { "x-hub-signature-256": "sha256=" + createHmac("sha256", "real secret").update('{"real":true}').digest("hex") },
    });
    expect(good.status).toBe(200);
    await waitForEventStatus(server, key, good.body.event_id, ["delivered"]);

    const onlyRejected = await call(server, "POST", "/v1/events/retry", { key, body: { source_id: sourceId, verification_status: "failed" } });
    expect(onlyRejected.status).toBe(202);
    // Nothing left to retry: no job (job_id null), the rejected event counted as skipped.
    expect(onlyRejected.body).toEqual({ job_id: null, total: 0, skipped: 1 });

    const all = await call(server, "POST", "/v1/events/retry", { key, body: { source_id: sourceId } });
    expect(all.body).toEqual({ job_id: expect.any(String), total: 1, skipped: 1 });
    expect(await waitForJob(all.body.job_id)).toMatchObject({ total: 1, processed: 1, succeeded: 1, skipped: 1 });
    await waitFor(async () => delivered("/forged-3").length === 2, { what: "the good event delivered again" });
    expect(delivered("/forged-3").every((r) => r.headers["x-hookrelay-event-id"] === good.body.event_id)).toBe(true);
    expect(await listAttempts(server, key, { event_id: eventId })).toEqual([]);
    expect(await eventStatus(server, key, eventId)).toBe("rejected");

    const notAsked = await call(server, "POST", "/v1/events/retry", { key, body: { source_id: sourceId, status: "delivered" } });
    expect(notAsked.body).toMatchObject({ total: 1, skipped: 0 });
    await waitForJob(notAsked.body.job_id);
  });

  it("redrive skips DLQ entries of rejected events and counts them; the event stays rejected", async () => {
    const { eventId, destinationId } = await forgedEvent("/forged-4", { max_retries: 0 });
    const fix = breakPath("/forged-4");
    expect((await call(server, "POST", `/v1/events/${eventId}/retry`, { key, body: { force: true } })).status).toBe(200);
    const [dlq] = await waitFor(async () => {
      const rows = await listAttempts(server, key, { event_id: eventId, is_dlq: "1" });
      return rows.length === 1 ? rows : null;
    });
    expect(dlq).toMatchObject({ forced: 1, status: "failed" });
    expect(await eventStatus(server, key, eventId)).toBe("rejected");
    fix();

    const res = await call(server, "POST", "/v1/delivery-attempts/redrive", { key, body: { destination_id: destinationId } });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ job_id: expect.any(String), total: 0, skipped: 1 });
    expect(await waitForJob(res.body.job_id)).toMatchObject({ kind: "redrive", total: 0, processed: 0, skipped: 1 });
    expect(await listAttempts(server, key, { event_id: eventId, is_dlq: "1" })).toHaveLength(1);
    expect(await listAttempts(server, key, { event_id: eventId })).toHaveLength(1);
    expect(delivered("/forged-4")).toHaveLength(1);
    expect(await eventStatus(server, key, eventId)).toBe("rejected");
  });
});
