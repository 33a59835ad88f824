import { beforeAll, describe, expect, it } from "vitest";
import { otherOrgKey } from "../helpers/rows";
import { call, type TestServer } from "../helpers/server";
import type { Sink } from "../helpers/sink";
import { pipeline, sendEvent, waitFor, waitForEventStatus, type Pipeline } from "../helpers/delivery";
import { scrapeMetrics } from "../helpers/metrics";
import { useServer } from "../helpers/fixture";

let server: TestServer, key: string, sink: Sink;
let ok: Pipeline;
let bad: Pipeline;
const okEvents: string[] = [];
let badEvent: string;

useServer({ sink: true }, (s) => ({ server, key, sink } = s));
beforeAll(async () => {
  sink.respond = (r) => (r.path === "/bad" ? new Response("no", { status: 400 }) : new Response("ok"));
  ok = await pipeline(server, key, { url: `${sink.url}/ok` });
  bad = await pipeline(server, key, { url: `${sink.url}/bad`, destination: { max_retries: 0 } });
  for (let i = 0; i < 5; i++) okEvents.push(await sendEvent(server, ok.sourceId, { i }));
  badEvent = await sendEvent(server, bad.sourceId, { bad: true });
  for (const id of okEvents) await waitForEventStatus(server, key, id, ["delivered"]);
  await waitForEventStatus(server, key, badEvent, ["failed"]);
});

const list = (query: string, k = key) => call(server, "GET", `/v1/delivery-attempts${query}`, { key: k });

describe("GET /v1/delivery-attempts", () => {
  it("lists attempts newest first with the spec's fields and pagination", async () => {
    const res = await list("");
    expect(res.status).toBe(200);
    expect(res.body.delivery_attempts).toHaveLength(6);
    expect(res.body.pagination).toMatchObject({ total: 6, limit: 50, offset: 0, has_more: false, next_cursor: null });
    const times = res.body.delivery_attempts.map((a: any) => a.created_at);
    expect([...times].sort().reverse()).toEqual(times);
    const item = res.body.delivery_attempts[0];
    for (const field of [
      "id", "org_id", "env_id", "event_id", "connection_id", "destination_id", "request_url", "request_method", "request_headers",
      "request_body_size", "response_status", "response_headers", "response_body", "duration_ms", "status", "error", "created_at",
      "attempt_number", "next_retry_at", "is_dlq", "dlq_at", "trigger_type", "connection_name", "destination_name", "scheduled_at", "sent_at", "forced",
    ]) {
      expect(item).toHaveProperty(field);
    }
  });

  it("filters by event_id, connection_id, destination_id, status and is_dlq (ids with or without prefix)", async () => {
    expect((await list(`?event_id=${okEvents[0]}`)).body.delivery_attempts).toHaveLength(1);
    expect((await list(`?event_id=${okEvents[0]!.slice(4)}`)).body.delivery_attempts).toHaveLength(1);
    expect((await list(`?connection_id=${ok.connectionId}`)).body.pagination.total).toBe(5);
    expect((await list(`?destination_id=${bad.destinationId.slice(4)}`)).body.pagination.total).toBe(1);
    expect((await list("?status=success")).body.pagination.total).toBe(5);
    const dlq = (await list("?is_dlq=1")).body.delivery_attempts;
    expect(dlq).toHaveLength(1);
    expect(dlq[0]).toMatchObject({ event_id: badEvent, status: "failed", error: "http_400", response_status: 400, response_body: "no", is_dlq: 1 });
    expect((await list("?is_dlq=0")).body.pagination.total).toBe(5);
    expect((await list(`?event_id=nonsense`)).body.delivery_attempts).toEqual([]);
  });

  it("pages with limit/offset and with cursors, without repeats or gaps", async () => {
    const page1 = await list("?limit=2");
    expect(page1.body.pagination).toMatchObject({ total: 6, limit: 2, has_more: true });
    const page2 = await list(`?limit=2&cursor=${page1.body.pagination.next_cursor}`);
    const page3 = await list(`?limit=2&cursor=${page2.body.pagination.next_cursor}`);
    const ids = [...page1.body.delivery_attempts, ...page2.body.delivery_attempts, ...page3.body.delivery_attempts].map((a: any) => a.id);
    expect(new Set(ids).size).toBe(6);
    expect(page3.body.pagination.has_more).toBe(false);
    const offset = await list("?limit=2&offset=2");
    expect(offset.body.delivery_attempts.map((a: any) => a.id)).toEqual(page2.body.delivery_attempts.map((a: any) => a.id));
  });

  it("answers 400 for bad filters and limits", async () => {
    for (const q of ["?limit=101", "?limit=0", "?offset=-1", "?status=bogus", "?is_dlq=2", "?cursor=zzz"]) {
      const res = await list(q);
      expect(res.status, q).toBe(400);
      expect(res.body.error.code).toBe("validation_error");
    }
  });

  it("shows nothing of another organization and needs authentication", async () => {
    const other = await list("", await otherOrgKey(server));
    expect(other.body.delivery_attempts).toEqual([]);
    expect((await call(server, "GET", "/v1/delivery-attempts")).status).toBe(401);
  });

  it("shows queued work while it waits and the metrics count it", async () => {
    await call(server, "PATCH", `/v1/destinations/${ok.destinationId}`, { key, body: { status: "paused" } });
    const id = await sendEvent(server, ok.sourceId, { waiting: true });
    const [queued] = await waitFor(async () => {
      const rows = (await list(`?event_id=${id}&status=queued`)).body.delivery_attempts;
      return rows.length ? rows : null;
    });
    expect(queued).toMatchObject({ status: "queued", attempt_number: 1, trigger_type: "initial", response_status: null });
    const metrics = await scrapeMetrics(server);
    expect(metrics).toMatch(/hookrelay_delivery_queue_depth 1\b/);
    expect(metrics).toMatch(/hookrelay_deliveries_total\{outcome="success"\} 5/);
    expect(metrics).toMatch(/hookrelay_deliveries_total\{outcome="http_error"\} 1/);
    expect(metrics).toContain("hookrelay_delivery_duration_seconds_bucket");
    expect(metrics).toMatch(/hookrelay_delivery_oldest_pending_seconds \d/);
    await call(server, "PATCH", `/v1/destinations/${ok.destinationId}`, { key, body: { status: "active" } });
  });
});
