import { beforeAll, describe, expect, it } from "vitest";
import { SSE_PING_MS } from "../../src/api/v1/events";
import { ACCEPTED_STATUS, createSource, ingest, waitForRouting } from "../helpers/ingest";
import { call, type TestServer } from "../helpers/server";
import { useServer } from "../helpers/fixture";
import { deliveryAttempts } from "../../src/db/schema";

let server: TestServer, key: string;
let a: { id: string; slug: string };
let b: { id: string };
const sent: string[] = [];
useServer({}, (s) => ({ server, key } = s));
beforeAll(async () => {
  a = await createSource(server, key, { name: "events-a", template: "generic-hmac-sha256", verification_secret: "k" });
  b = await createSource(server, key, { name: "events-b", dedup_enabled: true });
  // a: 3 failed signatures (rejected); b: 6 events with dedup on, 2 of them duplicates.
  for (let i = 0; i < 3; i++) sent.push((await ingest(server, a.id, { body: `{"a":${i}}`, headers: { "x-signature": "00" } })).body.error.details.event_id);
  for (const body of ['{"order":"needle-123"}', '{"b":1}', '{"b":1}', '{"b":2}', '{"b":2}']) sent.push((await ingest(server, b.id, { body })).body.event_id);
  sent.push((await ingest(server, b.id, { method: "PUT", body: "put" })).body.event_id);
  // No connections: the delivery router marks every accepted event ignored.
  await waitForRouting(server, key);
});

const list = async (query: string) => {
  const res = await call(server, "GET", `/v1/events${query}`, { key });
  expect(res.status, `${query}: ${JSON.stringify(res.body)}`).toBe(200);
  return res.body as { events: any[]; pagination: any };
};

describe("GET /v1/events", () => {
  it("lists newest first in the list-item shape with the pagination object", async () => {
    const { events, pagination } = await list("");
    expect(events.map((e) => e.id)).toEqual([...sent].reverse());
    expect(pagination).toEqual({ total: 9, limit: 50, offset: 0, has_more: false, next_cursor: null, prev_cursor: null });
    const item = events.find((e) => e.source_id === a.id);
    expect(Object.keys(item).sort()).toEqual(
      ["id", "source_id", "org_id", "env_id", "method", "content_type", "source_ip", "payload_size", "verification_status", "dedup_status", "status", "event_type", "received_at", "source_name", "source_slug"].sort(),
    );
    expect(item).toMatchObject({ source_name: "events-a", source_slug: a.slug, method: "POST", content_type: "application/json", source_ip: "127.0.0.1" });
    expect(item).not.toHaveProperty("body");
  });

  it("filters by source_id (with or without prefix), status, verification_status, dedup_status and method", async () => {
    expect((await list(`?source_id=${a.id}`)).pagination.total).toBe(3);
    expect((await list(`?source_id=${b.id.slice(4)}`)).pagination.total).toBe(6);
    expect((await list(`?source_id=nonsense`)).pagination.total).toBe(0);
    expect((await list("?status=rejected")).events.every((e) => e.status === "rejected")).toBe(true);
    expect((await list("?status=rejected")).pagination.total).toBe(3);
    expect((await list("?status=ignored")).pagination.total).toBe(6);
    expect((await list("?status=rejected,ignored")).pagination.total).toBe(9);
    expect((await list("?status=pending,held")).pagination.total).toBe(0);
    expect((await list("?verification_status=failed")).pagination.total).toBe(3);
    expect((await list("?verification_status=skipped")).pagination.total).toBe(6);
    expect((await list("?dedup_status=duplicate")).pagination.total).toBe(2);
    expect((await list("?dedup_status=unique")).pagination.total).toBe(4);
    expect((await list("?method=PUT")).pagination.total).toBe(1);
    expect((await list("?method=put")).pagination.total).toBe(1);
    expect((await list(`?org_id=${"f".repeat(32)}`)).pagination.total).toBe(0);
  });

  it("searches by event id prefix or payload content", async () => {
    const target = sent[4]!;
    expect((await list(`?search=${target.slice(0, 12)}`)).events.map((e) => e.id)).toContain(target);
    expect((await list(`?search=${target.slice(4, 20)}`)).events.map((e) => e.id)).toContain(target);
    const found = await list("?search=needle-123");
    expect(found.events.map((e) => e.id)).toEqual([sent[3]]);
    expect((await list("?search=NEEDLE")).pagination.total).toBe(1);
    expect((await list("?search=%25")).pagination.total).toBe(0);
    expect((await list("?search=nothing-like-this")).pagination.total).toBe(0);
  });

  it("filters by after (inclusive) and before (exclusive)", async () => {
    const all = (await list("")).events;
    const oldest = all[all.length - 1];
    const newest = all[0];
    expect((await list(`?after=${encodeURIComponent(newest.received_at)}`)).events.map((e) => e.id)).toContain(newest.id);
    expect((await list(`?before=${encodeURIComponent(oldest.received_at)}`)).events.map((e) => e.id)).not.toContain(oldest.id);
    expect((await list(`?after=2000-01-01T00:00:00Z&before=2000-01-02T00:00:00Z`)).pagination.total).toBe(0);
  });

  it("answers 400 for bad filters and page parameters", async () => {
    for (const q of ["?status=nope", "?verification_status=ok", "?dedup_status=x", "?method=TRACE", "?after=yesterday", "?before=2024-13-45", "?limit=0", "?limit=101", "?offset=-1", "?limit=abc", "?cursor=%%%", "?direction=sideways"]) {
      const res = await call(server, "GET", `/v1/events${q}`, { key });
      expect(res.status, q).toBe(400);
      expect(res.body.error.code).toBe("validation_error");
    }
  });

  it("pages with limit/offset", async () => {
    const p1 = await list("?limit=4");
    expect(p1.events).toHaveLength(4);
    expect(p1.pagination).toMatchObject({ total: 9, limit: 4, offset: 0, has_more: true });
    const p3 = await list("?limit=4&offset=8");
    expect(p3.events.map((e) => e.id)).toEqual([sent[0]]);
    expect(p3.pagination.has_more).toBe(false);
  });

  it("walks cursors without repeats or gaps while new events arrive", async () => {
    const s = await createSource(server, key, { name: "cursor-walk" });
    const initial: string[] = [];
    for (let i = 0; i < 25; i++) initial.push((await ingest(server, s.id, { body: `{"i":${i}}` })).body.event_id);
    const first = await list(`?source_id=${s.id}&limit=10`);
    expect(first.events.map((e) => e.id)).toEqual(initial.slice(-10).reverse());

    // Arrivals between pages must not shift or repeat the walk to older events.
    const arrived: string[] = [];
    for (let i = 0; i < 7; i++) arrived.push((await ingest(server, s.id, { body: `{"late":${i}}` })).body.event_id);
    const seen = [...first.events.map((e) => e.id)];
    let cursor = first.pagination.next_cursor;
    while (cursor) {
      const page = await list(`?source_id=${s.id}&limit=10&cursor=${cursor}`);
      seen.push(...page.events.map((e) => e.id));
      cursor = page.pagination.next_cursor;
      await ingest(server, s.id, { body: "{}" });
    }
    expect(seen).toEqual([...initial].reverse());

    // Walking back: from page 2 to page 1, then to everything that arrived after page 1 was read, oldest first.
    const p2 = await list(`?source_id=${s.id}&limit=10&cursor=${first.pagination.next_cursor}`);
    const back = await list(`?source_id=${s.id}&limit=10&cursor=${p2.pagination.prev_cursor}`);
    expect(back.events.map((e) => e.id)).toEqual(first.events.map((e) => e.id));
    const newer = await list(`?source_id=${s.id}&limit=100&cursor=${back.pagination.prev_cursor}`);
    expect(newer.events.map((e) => e.id).reverse().slice(0, arrived.length)).toEqual(arrived);
    expect(newer.pagination.has_more).toBe(false);
  });

  it("prev_cursor returns the newer page before the current one", async () => {
    const s = await createSource(server, key, { name: "cursor-prev" });
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push((await ingest(server, s.id, { body: `${i}` })).body.event_id);
    const p1 = await list(`?source_id=${s.id}&limit=5`);
    const p2 = await list(`?source_id=${s.id}&limit=5&cursor=${p1.pagination.next_cursor}`);
    expect(p2.events.map((e) => e.id)).toEqual(ids.slice(2, 7).reverse());
    const back = await list(`?source_id=${s.id}&limit=5&cursor=${p2.pagination.prev_cursor}`);
    expect(back.events.map((e) => e.id)).toEqual(p1.events.map((e) => e.id));
  });
});

describe("GET /v1/events/{id}", () => {
  it("returns the detail with headers, body, statuses and delivery attempts", async () => {
    const id = sent[0]!;
    const detail = (await call(server, "GET", `/v1/events/${id}`, { key })).body;
    expect(detail).toMatchObject({
      id,
      source_id: a.id,
      source_name: "events-a",
      method: "POST",
      status: "rejected",
      verification_status: "failed",
      verification_error: expect.stringContaining("signature"),
      body: '{"a":0}',
      body_encoding: "utf8",
      delivery_attempts: [],
    });
    expect(detail.headers["x-signature"]).toBe("00");
    expect(typeof detail.received_at).toBe("string");

    // Attempts recorded by the delivery engine show up, oldest first.
    const attempt = (id_: string, status: string, responseStatus: number | null, durationMs: number | null, attemptNumber: number, scheduledAt: string, sentAt: string | null, createdAt: string) =>
      ({ id: id_, orgId: detail.org_id, envId: detail.env_id, eventId: id, destinationId: "dst_" + "2".repeat(32), requestUrl: "http://x", requestMethod: "POST", status, responseStatus, durationMs, attemptNumber, scheduledAt, sentAt, createdAt });
    await server.deps.db.insert(deliveryAttempts).values([
      attempt("da_" + "1".repeat(32), "failed", 503, 120, 1, "2026-01-01T00:00:00.000Z", "2026-01-01T00:00:02.000Z", "2026-01-01T00:00:00.000Z"),
      attempt("da_" + "3".repeat(32), "success", 200, 45, 2, "2026-01-01T00:01:00.000Z", "2026-01-01T00:01:00.000Z", "2026-01-01T00:00:00.000Z"),
      attempt("da_" + "4".repeat(32), "queued", null, null, 3, "2026-01-01T00:05:00.000Z", null, "2026-01-01T00:01:00.000Z"),
    ]);
    const withAttempts = (await call(server, "GET", `/v1/events/${id.slice(4)}`, { key })).body;
    // attempted_at is when an attempt was sent (null while queued); scheduled_at when it is or was due.
    expect(withAttempts.delivery_attempts).toEqual([
      expect.objectContaining({ id: "da_" + "1".repeat(32), destination_id: "dst_" + "2".repeat(32), status: "failed", status_code: 503, latency_ms: 120, attempted_at: "2026-01-01T00:00:02.000Z", scheduled_at: "2026-01-01T00:00:00.000Z" }),
      expect.objectContaining({ id: "da_" + "3".repeat(32), status: "success", status_code: 200, latency_ms: 45, attempted_at: "2026-01-01T00:01:00.000Z" }),
      expect.objectContaining({ id: "da_" + "4".repeat(32), status: "queued", attempted_at: null, scheduled_at: "2026-01-01T00:05:00.000Z" }),
    ]);
  });

  it("answers 404 for unknown or malformed ids", async () => {
    for (const id of ["evt_" + "0".repeat(32), "x", "src_" + "0".repeat(32)]) {
      const res = await call(server, "GET", `/v1/events/${id}`, { key });
      expect(res.status, id).toBe(404);
      expect(res.body.error.code).toBe("not_found");
    }
  });

  it("needs authentication", async () => {
    expect((await call(server, "GET", "/v1/events")).status).toBe(401);
    expect((await call(server, "GET", `/v1/events/${sent[0]}`)).status).toBe(401);
    expect((await call(server, "GET", "/v1/events/stream")).status).toBe(401);
  });
});

/** Reads an SSE response into messages (comments kept as `comment`). */
function sseReader(res: Response) {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  return async function next(timeoutMs = 5000): Promise<{ comment?: string; event?: string; id?: string; data?: string }> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const end = buffer.indexOf("\n\n");
      if (end >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const msg: Record<string, string> = {};
        for (const line of block.split("\n")) {
          if (line.startsWith(":")) msg.comment = line.slice(1).trim();
          else {
            const i = line.indexOf(":");
            msg[line.slice(0, i)] = (msg[line.slice(0, i)] ? msg[line.slice(0, i)] + "\n" : "") + line.slice(i + 1).trimStart();
          }
        }
        return msg;
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new Error("SSE timeout");
      const chunk = await Promise.race([reader.read(), new Promise<never>((_, rej) => setTimeout(() => rej(new Error("SSE timeout")), left))]);
      if (chunk.done) throw new Error("SSE closed");
      buffer += decoder.decode(chunk.value, { stream: true });
    }
  };
}

describe("GET /v1/events/stream", () => {
  it("streams arriving events in the list-item shape, filtered by source_id", async () => {
    const controller = new AbortController();
    const res = await server.request(`/v1/events/stream?source_id=${b.id}`, { headers: { "x-api-key": key }, signal: controller.signal });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const next = sseReader(res);
    expect((await next()).comment).toBe("connected");
    expect(await next()).toEqual({ retry: "3000" });

    await ingest(server, a.id, { body: "{}" }); // another source: filtered out
    const sentB = (await ingest(server, b.id, { body: '{"live":1}' })).body.event_id;
    const msg = await next();
    expect(msg.id).toBe(sentB);
    expect(msg.event).toBeUndefined();
    const item = JSON.parse(msg.data!);
    expect(item).toMatchObject({ id: sentB, source_id: b.id, source_name: "events-b", status: expect.stringMatching(ACCEPTED_STATUS), method: "POST" });
    // Same shape as the list (the status may have moved on: the router marks it ignored).
    const fromList = (await list(`?source_id=${b.id}&limit=1`)).events[0];
    expect({ ...item, status: fromList.status }).toEqual(fromList);

    // Status changes (here: the router marking it ignored) follow as named event.updated messages.
    server.deps.bus.publish({ type: "event.updated", orgId: item.org_id, envId: item.env_id, eventId: sentB, sourceId: b.id });
    expect(await next()).toMatchObject({ event: "event.updated", id: sentB });
    controller.abort();
  });

  it("streams every source without a filter and nothing from other scopes", async () => {
    const controller = new AbortController();
    const res = await server.request(`/v1/events/stream`, { headers: { "x-api-key": key }, signal: controller.signal });
    const next = sseReader(res);
    await next();
    await next();
    server.deps.bus.publish({ type: "event.created", orgId: "other", envId: "other", eventId: sent[0]!, sourceId: a.id });
    const id = (await ingest(server, a.id, { body: "{}" })).body.error.details.event_id;
    const msg = await next();
    expect(msg.id).toBe(id);
    expect(JSON.parse(msg.data!).verification_status).toBe("failed");
    controller.abort();
  });

  it(
    "sends a comment ping at least every 15 s and outlives Bun's idle timeout",
    async () => {
      expect(SSE_PING_MS).toBeLessThanOrEqual(15_000);
      const controller = new AbortController();
      const res = await server.request(`/v1/events/stream`, { headers: { "x-api-key": key }, signal: controller.signal });
      const next = sseReader(res);
      await next();
      await next();
      const started = Date.now();
      expect(await next(SSE_PING_MS + 3000)).toEqual({ comment: "ping" });
      expect(Date.now() - started).toBeLessThan(SSE_PING_MS + 2000);
      controller.abort();
    },
    SSE_PING_MS + 10_000,
  );
});
