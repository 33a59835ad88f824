import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { events, jobs } from "../../src/db/schema";
import { otherOrgKey } from "../helpers/rows";
import { call, startTestServer, tempDir, type TestServer } from "../helpers/server";
import type { Sink } from "../helpers/sink";
import { createDestination, eventStatus, listAttempts, pipeline, sendEvent, waitFor, waitForEventStatus } from "../helpers/delivery";
import { useServer } from "../helpers/fixture";
import { rmSync } from "node:fs";

let server: TestServer, key: string, sink: Sink;

useServer({ sink: true }, (s) => ({ server, key, sink } = s));

const replay = (body: Record<string, unknown>, s = server, k = key) => call(s, "POST", "/v1/replay", { key: k, body });
const progress = (jobId: string, s = server, k = key) => call(s, "GET", `/v1/replay/${jobId}`, { key: k });
const waitForReplay = (jobId: string, s = server, k = key, timeoutMs = 15_000) =>
  waitFor(
    async () => {
      const res = await progress(jobId, s, k);
      return res.body.status === "completed" ? res.body : null;
    },
    { timeoutMs, what: `replay ${jobId}` },
  );

/** Events stored through a source with no connection: they are ignored, and can be replayed. */
async function storedEvents(n: number, s = server, k = key) {
  const p = await pipeline(s, k, { url: `${sink.url}/unused`, connection: { enabled: false } });
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push(await sendEvent(s, p.sourceId, { i }));
  for (const id of ids) await waitForEventStatus(s, k, id, ["ignored"]);
  return { sourceId: p.sourceId, ids };
}

describe("POST /v1/replay validation", () => {
  it("needs destination_id, from and to; bounds rate_limit and max_events", async () => {
    const destination_id = await createDestination(server, key, { url: `${sink.url}/v` });
    const base = { destination_id, from: "2026-01-01T00:00:00Z", to: "2030-01-01T00:00:00Z" };
    const cases: [Record<string, unknown>, string][] = [
      [{ ...base, destination_id: undefined }, "body.destination_id"],
      [{ ...base, from: undefined }, "body.from"],
      [{ ...base, to: undefined }, "body.to"],
      [{ ...base, from: "yesterday" }, "body.from"],
      [{ ...base, to: "01/02/2026" }, "body.to"],
      [{ ...base, rate_limit: 101 }, "body.rate_limit"],
      [{ ...base, rate_limit: 0 }, "body.rate_limit"],
      [{ ...base, rate_limit: 2.5 }, "body.rate_limit"],
      [{ ...base, max_events: 10_001 }, "body.max_events"],
      [{ ...base, from: "2031-01-01T00:00:00Z" }, "body.from"],
    ];
    for (const [body, field] of cases) {
      const res = await replay(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe("validation_error");
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
    }
    const ok = await replay({ ...base, rate_limit: 100, max_events: 10_000 });
    expect(ok.status).toBe(202);
  });

  it("answers 404 for a destination or source that does not exist (or is another organization's)", async () => {
    const base = { from: "2026-01-01T00:00:00Z", to: "2030-01-01T00:00:00Z" };
    expect((await replay({ ...base, destination_id: "dst_" + "0".repeat(32) })).status).toBe(404);
    const destination_id = await createDestination(server, key, { url: `${sink.url}/v` });
    expect((await replay({ ...base, destination_id, source_id: "src_" + "0".repeat(32) })).status).toBe(404);
    expect((await replay({ ...base, destination_id }, server, await otherOrgKey(server))).status).toBe(404);
  });

  it("answers 404 for an unknown job and for a job whose 24 hours of progress expired", async () => {
    expect((await progress("0".repeat(32))).status).toBe(404);
    const destination_id = await createDestination(server, key, { url: `${sink.url}/v` });
    const started = await replay({ destination_id, from: "2020-01-01T00:00:00Z", to: "2020-01-02T00:00:00Z" });
    expect(started.body).toEqual({ job_id: expect.any(String), status: "running", total: 0 });
    await waitForReplay(started.body.job_id);
    await server.deps.db.update(jobs).set({ expiresAt: "2000-01-01T00:00:00.000Z" }).where(eq(jobs.id, started.body.job_id));
    expect((await progress(started.body.job_id)).status).toBe(404);
  });
});

describe("a replay", () => {
  it("walks events in ascending received_at, rate_limit at a time with a one-second pause, and reports progress", async () => {
    const { sourceId, ids } = await storedEvents(5);
    const destination_id = await createDestination(server, key, { url: `${sink.url}/replayed` });
    const from = new Date(Date.now() - 60_000).toISOString();
    const to = new Date(Date.now() + 60_000).toISOString();
    const started = await replay({ destination_id, source_id: sourceId, from, to, rate_limit: 2 });
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({ status: "running", total: 5 });

    const done = await waitForReplay(started.body.job_id);
    expect(done).toMatchObject({ status: "completed", total: 5, processed: 5, succeeded: 5, failed: 0, started_at: expect.any(String), completed_at: expect.any(String) });
    const got = sink.requests.filter((r) => r.path === "/replayed");
    expect(got.map((r) => r.headers["x-hookrelay-event-id"])).toEqual(ids);
    // Batches of 2, 2, 1 with a pause of one second between them.
    const t = got.map((r) => r.receivedAt);
    expect(t[2]! - t[1]!).toBeGreaterThanOrEqual(950);
    expect(t[4]! - t[3]!).toBeGreaterThanOrEqual(950);
    expect(t[1]! - t[0]!).toBeLessThan(900);
    const attempts = await listAttempts(server, key, { destination_id });
    expect(attempts.every((a) => a.trigger_type === "replay" && a.status === "success")).toBe(true);
    // The events' own status is not the replay's business.
    expect(await eventStatus(server, key, ids[0]!)).toBe("ignored");
  });

  it("records failed replayed deliveries without retrying them and without the DLQ; honours max_events", async () => {
    const { sourceId, ids } = await storedEvents(3);
    const destination_id = await createDestination(server, key, { url: `${sink.url}/replay-fails`, retry_interval_seconds: 1 });
    sink.respond = (r) => (r.path === "/replay-fails" ? new Response("no", { status: 500 }) : new Response("ok"));
    const started = await replay({ destination_id, source_id: sourceId, from: "2020-01-01T00:00:00Z", to: "2099-01-01T00:00:00Z", rate_limit: 100, max_events: 2 });
    expect(started.body.total).toBe(2);
    const done = await waitForReplay(started.body.job_id);
    sink.respond = () => new Response("ok");
    expect(done).toMatchObject({ total: 2, processed: 2, succeeded: 0, failed: 2 });
    // A retry would have been queued when the failure was recorded, before the job could complete.
    const attempts = await listAttempts(server, key, { destination_id });
    expect(attempts).toHaveLength(2);
    expect(attempts.every((a) => a.status === "failed" && a.is_dlq === 0 && a.next_retry_at === null && a.error === "http_500")).toBe(true);
    expect(sink.requests.filter((r) => r.path === "/replay-fails").map((r) => r.headers["x-hookrelay-event-id"])).toEqual(ids.slice(0, 2));
  });

  it("survives a restart: the job resumes from its cursor and completes", async () => {
    const dataDir = tempDir();
    const first = await startTestServer({}, dataDir);
    const k = await first.apiKey();
    const { sourceId, ids } = await storedEvents(6, first, k);
    const destination_id = await createDestination(first, k, { url: `${sink.url}/resumed` });
    const started = await replay({ destination_id, source_id: sourceId, from: "2020-01-01T00:00:00Z", to: "2099-01-01T00:00:00Z", rate_limit: 2 }, first, k);
    await waitFor(async () => sink.requests.filter((r) => r.path === "/resumed").length >= 2, { what: "the first batch" });
    await first.stop(); // the job is mid-way: paused between batches

    const second = await startTestServer({}, dataDir);
    try {
      const done = await waitForReplay(started.body.job_id, second, k);
      expect(done).toMatchObject({ status: "completed", total: 6, processed: 6, succeeded: 6 });
      const got = sink.requests.filter((r) => r.path === "/resumed").map((r) => r.headers["x-hookrelay-event-id"]);
      expect(new Set(got)).toEqual(new Set(ids));
    } finally {
      await second.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe("replay order", () => {
  it("delivers a job's events one at a time, in received_at order, to a slow receiver and a concurrent worker", async () => {
    const { sourceId, ids } = await storedEvents(6);
    // received_at in an order that is neither the ids' nor the insertion order.
    const order = [3, 0, 5, 1, 4, 2];
    const base = Date.now() - 30_000;
    for (const [rank, i] of order.entries()) {
      await server.deps.db.update(events).set({ receivedAt: new Date(base + rank * 1000).toISOString() }).where(eq(events.id, ids[i]!));
    }
    const destination_id = await createDestination(server, key, { url: `${sink.url}/in-order` });
    let inFlight = 0;
    let maxInFlight = 0;
    const previous = sink.respond;
    sink.respond = async (r, i) => {
      if (r.path !== "/in-order") return previous(r, i);
      maxInFlight = Math.max(maxInFlight, ++inFlight);
      // The first answers slowest: a concurrent send would overtake it.
      await Bun.sleep(r.body.includes('"i":3') ? 150 : 10 + Math.floor(Math.random() * 30));
      inFlight--;
      return new Response("ok");
    };
    try {
      const started = await replay({ destination_id, source_id: sourceId, from: "2020-01-01T00:00:00Z", to: "2099-01-01T00:00:00Z", rate_limit: 100 });
      expect(await waitForReplay(started.body.job_id)).toMatchObject({ total: 6, succeeded: 6 });
    } finally {
      sink.respond = previous;
    }
    const got = sink.requests.filter((r) => r.path === "/in-order").map((r) => r.headers["x-hookrelay-event-id"]);
    expect(got).toEqual(order.map((i) => ids[i]));
    expect(maxInFlight).toBe(1);
  });

  it("leaves rejected events out and counts them as skipped", async () => {
    const source = await call(server, "POST", "/v1/sources", { key, body: { name: "replay gh", template: "github", verification_secret: "s" } });
    const forged = await server.request(`/v1/ingest/${source.body.source.id}`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(forged.status).toBe(401);
    const destination_id = await createDestination(server, key, { url: `${sink.url}/no-forged` });
    const started = await replay({ destination_id, source_id: source.body.source.id, from: "2020-01-01T00:00:00Z", to: "2099-01-01T00:00:00Z" });
    expect(started.body.total).toBe(0);
    expect(await waitForReplay(started.body.job_id)).toMatchObject({ total: 0, skipped: 1 });
    expect(sink.requests.filter((r) => r.path === "/no-forged")).toEqual([]);
  });
});
