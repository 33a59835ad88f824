import { beforeAll, describe, expect, it } from "vitest";
import { call, type TestServer } from "../helpers/server";
import type { Sink } from "../helpers/sink";
import { pipeline, sendEvent, waitForEventStatus, type Pipeline } from "../helpers/delivery";
import { useServer } from "../helpers/fixture";

/**
 * pagination.total of the event and attempt lists comes from counters the
 * database keeps as rows are written (src/db/schema/counts.ts): it must
 * equal the rows the list walks, for every filter, after each kind of write
 * (ingest, routing, delivery outcomes, a retry, a cascade delete).
 */
let server: TestServer, key: string, sink: Sink;
let ok: Pipeline;
let bad: Pipeline;
const okEvents: string[] = [];
const badEvents: string[] = [];

useServer({ sink: true }, (s) => ({ server, key, sink } = s));
beforeAll(async () => {
  sink.respond = (r) => (r.path === "/bad" ? new Response("no", { status: 503 }) : new Response("ok"));
  ok = await pipeline(server, key, { url: `${sink.url}/ok` });
  bad = await pipeline(server, key, { url: `${sink.url}/bad`, destination: { max_retries: 0 } });
  for (let i = 0; i < 4; i++) okEvents.push(await sendEvent(server, ok.sourceId, { i }));
  for (let i = 0; i < 2; i++) badEvents.push(await sendEvent(server, bad.sourceId, { bad: i }, { method: "PUT" }));
  for (const id of okEvents) await waitForEventStatus(server, key, id, ["delivered"]);
  for (const id of badEvents) await waitForEventStatus(server, key, id, ["failed"]);
});

/** The list's total, checked against the rows it walks (every set here fits in one page). */
async function total(resource: "events" | "delivery-attempts", query: string): Promise<number> {
  const res = await call(server, "GET", `/v1/${resource}?limit=100${query}`, { key });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const rows = res.body[resource === "events" ? "events" : "delivery_attempts"] as unknown[];
  expect(res.body.pagination.total, `${resource}${query}`).toBe(rows.length);
  return rows.length;
}

describe("pagination.total from the counters", () => {
  it("counts events by source, status, method, verification and dedup status as ingest and outcomes change them", async () => {
    expect(await total("events", "")).toBe(6);
    expect(await total("events", `&source_id=${ok.sourceId}`)).toBe(4);
    expect(await total("events", "&status=delivered")).toBe(4);
    expect(await total("events", "&status=failed")).toBe(2);
    expect(await total("events", "&status=pending,held")).toBe(0);
    expect(await total("events", `&status=failed&source_id=${bad.sourceId}`)).toBe(2);
    expect(await total("events", `&status=failed&source_id=${ok.sourceId}`)).toBe(0);
    expect(await total("events", "&method=PUT")).toBe(2);
    expect(await total("events", "&verification_status=skipped&dedup_status=skipped,unique")).toBe(6);
  });

  it("counts attempts by destination, connection, status, DLQ and trigger", async () => {
    expect(await total("delivery-attempts", "")).toBe(6);
    expect(await total("delivery-attempts", `&destination_id=${bad.destinationId}`)).toBe(2);
    expect(await total("delivery-attempts", `&connection_id=${ok.connectionId}`)).toBe(4);
    expect(await total("delivery-attempts", "&status=success")).toBe(4);
    expect(await total("delivery-attempts", "&status=failed")).toBe(2);
    expect(await total("delivery-attempts", "&status=queued")).toBe(0);
    expect(await total("delivery-attempts", "&is_dlq=1")).toBe(2);
    expect(await total("delivery-attempts", "&trigger_type=initial")).toBe(6);
  });

  it("follows a manual retry: a new attempt, and the event's status once it settles", async () => {
    sink.respond = () => new Response("ok");
    const res = await call(server, "POST", `/v1/events/${badEvents[0]}/retry`, { key });
    expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
    await waitForEventStatus(server, key, badEvents[0]!, ["delivered"]);
    expect(await total("events", "&status=failed")).toBe(1);
    expect(await total("events", "&status=delivered")).toBe(5);
    expect(await total("delivery-attempts", "")).toBe(7);
    expect(await total("delivery-attempts", "&trigger_type=manual")).toBe(1);
    expect(await total("delivery-attempts", "&status=success")).toBe(5);
  });

  it("agrees with a count where the counters do not apply (a time range)", async () => {
    expect(await total("events", `&after=${new Date(Date.now() - 3600_000).toISOString()}`)).toBe(6);
    expect(await total("events", `&before=${new Date(Date.now() - 3600_000).toISOString()}`)).toBe(0);
  });

  it("drops what a deleted source took with it (the cascade counts too)", async () => {
    expect((await call(server, "DELETE", `/v1/connections/${bad.connectionId}`, { key })).status).toBeLessThan(300);
    const del = await call(server, "DELETE", `/v1/sources/${bad.sourceId}`, { key });
    expect(del.status, JSON.stringify(del.body)).toBeLessThan(300);
    expect(await total("events", "")).toBe(4);
    expect(await total("events", "&status=failed")).toBe(0);
    expect(await total("events", `&source_id=${bad.sourceId}`)).toBe(0);
    expect(await total("delivery-attempts", "")).toBe(4);
    expect(await total("delivery-attempts", "&is_dlq=1")).toBe(0);
  });
});
