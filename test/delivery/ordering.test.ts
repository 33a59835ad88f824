import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { manualClock } from "../../src/core/clock";
import { deliveryAttempts } from "../../src/db/schema";
import { sweepHeadlessLines } from "../../src/domain/ordering";
import { call, type TestServer } from "../helpers/server";
import type { Sink, SinkRequest } from "../helpers/sink";
import { pipeline, sendEvent, waitFor } from "../helpers/delivery";
import { useServer } from "../helpers/fixture";
import { createApp, createEndpoint, sendMessage } from "../outbound/helpers";

/**
 * Ordered delivery per key (docs/delivery.md, "Ordered delivery"): one
 * delivery at a time per key, in the order received, while other keys flow.
 * Retries are made due by moving an injected clock; each event is received
 * a millisecond after the one before, so the order received is defined.
 */
const clock = manualClock(new Date("2026-01-01T00:00:00.000Z"));
let server: TestServer, key: string, sink: Sink;

useServer({ clock, sink: true }, (s) => ({ server, key, sink } = s));

const wake = () => server.deps.bus.publish({ type: "delivery.queued" });
const seqOf = (r: SinkRequest) => (JSON.parse(r.body) as { seq: string }).seq;
const pathOf = (prefix: string) => sink.requests.filter((r) => r.path.startsWith(prefix));

async function send(sourceId: string, body: Record<string, unknown>): Promise<string> {
  clock.advance(1);
  return sendEvent(server, sourceId, body);
}

/** The attempt requests that reached `prefix`, answered 200 (the sink's `ok` answers). */
const delivered = (prefix: string) => pathOf(prefix).filter((r) => !failing.has(r));
const failing = new Set<SinkRequest>();

describe("an ordered connection keyed by body.customer", () => {
  it("holds key A behind its failing head while keys B and C flow; A arrives in order once its head succeeds", async () => {
    let aHeadFailures = 0;
    sink.respond = (r) => {
      if (r.path.startsWith("/abc") && seqOf(r) === "A1" && aHeadFailures < 3) {
        aHeadFailures++;
        failing.add(r);
        return new Response("down", { status: 503 });
      }
      return new Response("ok");
    };
    const p = await pipeline(server, key, {
      url: `${sink.url}/abc`,
      destination: { max_retries: 5, retry_strategy: "linear", retry_interval_seconds: 60 },
      connection: { ordered: true, ordering_key: "body.customer" },
    });
    const got = await call(server, "GET", `/v1/connections/${p.connectionId}`, { key });
    expect(got.body.connection).toMatchObject({ ordered: true, ordering_key: "body.customer", on_dlq: "continue" });

    for (const seq of ["A1", "B1", "C1", "A2", "B2", "C2", "A3", "B3"]) await send(p.sourceId, { customer: seq[0], seq });
    // B and C complete while A's head waits for its retry.
    await waitFor(async () => delivered("/abc").length === 5 && aHeadFailures === 1, { what: "B and C delivered, A1 failed once" });
    expect(pathOf("/abc").filter((r) => seqOf(r).startsWith("A")).map(seqOf)).toEqual(["A1"]);
    const bc = delivered("/abc").map(seqOf);
    expect(bc.filter((s) => s.startsWith("B"))).toEqual(["B1", "B2", "B3"]);
    expect(bc.filter((s) => s.startsWith("C"))).toEqual(["C1", "C2"]);

    // The listing: A waits behind its head (not blocked), 2 behind it.
    const listed = await call(server, "GET", `/v1/connections/${p.connectionId}/ordering`, { key });
    expect(listed.status).toBe(200);
    expect(listed.body.keys).toEqual([{ key: "A", head_attempt_id: expect.any(String), waiting: 2, since: expect.any(String), blocked: false }]);

    // Nothing of A is sent before its head's retry is due.
    clock.advance(30_000);
    wake();
    await Bun.sleep(100);
    expect(pathOf("/abc").filter((r) => seqOf(r).startsWith("A")).map(seqOf)).toEqual(["A1"]);

    const failedTries = async () => (await call(server, "GET", `/v1/delivery-attempts?connection_id=${p.connectionId}&status=failed`, { key })).body.delivery_attempts.length;
    for (let n = 2; n <= 4; n++) {
      // The failure is recorded (its retry scheduled from the clock's time then) before the clock moves.
      await waitFor(async () => (await failedTries()) === n - 1, { what: `failure ${n - 1} recorded` });
      clock.advance(61_000);
      wake();
      await waitFor(async () => pathOf("/abc").filter((r) => seqOf(r) === "A1").length >= n, { what: `A1 try ${n}` });
    }
    await waitFor(async () => delivered("/abc").length === 8, { what: "A delivered" });
    const all = pathOf("/abc").map(seqOf);
    expect(all.filter((s) => s.startsWith("A"))).toEqual(["A1", "A1", "A1", "A1", "A2", "A3"]);
    // Every B and C was delivered before A's head succeeded (its 4th request).
    const aSuccess = all.lastIndexOf("A1");
    for (const s of ["B1", "B2", "B3", "C1", "C2"]) expect(all.indexOf(s)).toBeLessThan(aSuccess);
    expect((await call(server, "GET", `/v1/connections/${p.connectionId}/ordering`, { key })).body.keys).toEqual([]);
  });
});

describe("on_dlq", () => {
  it("continue (the default): a head that reaches the DLQ lets its key move on", async () => {
    sink.respond = (r) => (r.path.startsWith("/cont") && seqOf(r) === "K1" ? new Response("no", { status: 500 }) : new Response("ok"));
    const p = await pipeline(server, key, { url: `${sink.url}/cont`, destination: { max_retries: 0 }, connection: { ordered: true, ordering_key: "body.k" } });
    for (const seq of ["K1", "K2", "K3"]) await send(p.sourceId, { k: "K", seq });
    await waitFor(async () => pathOf("/cont").length === 3, { what: "three requests" });
    expect(pathOf("/cont").map(seqOf)).toEqual(["K1", "K2", "K3"]);
  });

  it("block: the key waits in the DLQ until an operator skips its head; skip is audited and a second skip is a 409", async () => {
    sink.respond = (r) => (r.path.startsWith("/block") && seqOf(r) === "K1" ? new Response("no", { status: 500 }) : new Response("ok"));
    const p = await pipeline(server, key, { url: `${sink.url}/block`, destination: { max_retries: 0 }, connection: { ordered: true, ordering_key: "body.k", on_dlq: "block" } });
    for (const seq of ["K1", "K2", "K3", "L1"]) await send(p.sourceId, { k: seq[0], seq });
    await waitFor(async () => pathOf("/block").length === 2, { what: "K1 and L1" });
    const listed = await waitFor(async () => {
      const keys = (await call(server, "GET", `/v1/connections/${p.connectionId}/ordering`, { key })).body.keys;
      return keys.length === 1 && keys[0].blocked ? keys : null;
    }, { what: "K blocked" });
    expect(listed[0]).toMatchObject({ key: "K", waiting: 2, blocked: true });
    // Time passes: nothing more of K is sent.
    clock.advance(3_600_000);
    wake();
    await Bun.sleep(100);
    expect(pathOf("/block").map(seqOf).sort()).toEqual(["K1", "L1"]);

    expect((await call(server, "POST", `/v1/connections/${p.connectionId}/ordering/skip`, { key, body: { key: "nope" } })).status).toBe(409);
    const skipped = await call(server, "POST", `/v1/connections/${p.connectionId}/ordering/skip`, { key, body: { key: "K" } });
    expect(skipped.status).toBe(200);
    expect(skipped.body).toEqual({ key: "K", skipped_attempt_id: listed[0].head_attempt_id });
    await waitFor(async () => pathOf("/block").length === 4, { what: "K2 and K3" });
    expect(pathOf("/block").map(seqOf).filter((s) => s.startsWith("K"))).toEqual(["K1", "K2", "K3"]);
    // The skipped head is still in the DLQ (redrivable).
    const dlq = await call(server, "GET", `/v1/delivery-attempts?connection_id=${p.connectionId}&is_dlq=1`, { key });
    expect(dlq.body.delivery_attempts.map((a: { id: string }) => a.id)).toEqual([listed[0].head_attempt_id]);
    expect((await call(server, "POST", `/v1/connections/${p.connectionId}/ordering/skip`, { key, body: { key: "K" } })).status).toBe(409);
    const audit = await call(server, "GET", `/v1/audit-log?action=skip`, { key });
    expect(audit.status).toBe(200);
    expect(JSON.stringify(audit.body)).toContain(p.connectionId);
  });
});

describe("redriving a blocked head", () => {
  it("sends the head again as its key's head; the key moves on once it succeeds", async () => {
    let down = true;
    sink.respond = (r) => (r.path.startsWith("/redrive") && seqOf(r) === "R1" && down ? new Response("no", { status: 500 }) : new Response("ok"));
    const p = await pipeline(server, key, { url: `${sink.url}/redrive`, destination: { max_retries: 0 }, connection: { ordered: true, ordering_key: "body.k", on_dlq: "block" } });
    for (const seq of ["R1", "R2"]) await send(p.sourceId, { k: "R", seq });
    await waitFor(async () => (await call(server, "GET", `/v1/connections/${p.connectionId}/ordering`, { key })).body.keys.some((k: { blocked: boolean }) => k.blocked), { what: "R blocked" });
    down = false;
    const job = await call(server, "POST", "/v1/delivery-attempts/redrive", { key, body: { connection_id: p.connectionId } });
    expect(job.status).toBe(202);
    await waitFor(async () => pathOf("/redrive").length === 3, { what: "R1 again, then R2" });
    expect(pathOf("/redrive").map(seqOf)).toEqual(["R1", "R1", "R2"]);
    expect((await call(server, "GET", `/v1/connections/${p.connectionId}/ordering`, { key })).body.keys).toEqual([]);
  });
});

describe("a line whose head is gone without an outcome", () => {
  it("moves on at the scheduler's sweep (its event pruned, its row deleted)", async () => {
    sink.respond = (r) => (r.path.startsWith("/gone") && seqOf(r) === "G1" ? new Response("no", { status: 500 }) : new Response("ok"));
    const p = await pipeline(server, key, { url: `${sink.url}/gone`, destination: { max_retries: 5, retry_strategy: "linear", retry_interval_seconds: 3600 }, connection: { ordered: true, ordering_key: "body.k" } });
    for (const seq of ["G1", "G2"]) await send(p.sourceId, { k: "G", seq });
    const failed = await waitFor(async () => {
      const rows = (await call(server, "GET", `/v1/delivery-attempts?connection_id=${p.connectionId}&status=queued`, { key })).body.delivery_attempts;
      return rows.length === 1 && rows[0].attempt_number === 2 ? rows[0] : null;
    }, { what: "G1's retry queued" });
    // The retry's row goes (as retention's pruning of its event would take it).
    await server.deps.db.delete(deliveryAttempts).where(eq(deliveryAttempts.id, failed.id));
    expect(await sweepHeadlessLines(server.deps)).toBe(1);
    wake();
    await waitFor(async () => pathOf("/gone").some((r) => seqOf(r) === "G2"), { what: "G2 delivered" });
    expect(await sweepHeadlessLines(server.deps)).toBe(0);
  });
});

describe("the null-key line", () => {
  it("an ordered connection without a key path, and events missing the key, go one at a time in order", async () => {
    let first = true;
    sink.respond = (r) => {
      if (r.path.startsWith("/null") && first) {
        first = false;
        return new Response("no", { status: 500 });
      }
      return new Response("ok");
    };
    const p = await pipeline(server, key, { url: `${sink.url}/null`, destination: { max_retries: 3, retry_strategy: "linear", retry_interval_seconds: 60 }, connection: { ordered: true, ordering_key: "body.missing" } });
    for (const seq of ["N1", "N2", "N3"]) await send(p.sourceId, { seq });
    await waitFor(async () => (await call(server, "GET", `/v1/delivery-attempts?connection_id=${p.connectionId}&status=failed`, { key })).body.delivery_attempts.length === 1, { what: "N1's first try failed" });
    const keys = await waitFor(async () => (await call(server, "GET", `/v1/connections/${p.connectionId}/ordering`, { key })).body.keys.find((k: any) => k.waiting === 2));
    expect(keys).toMatchObject({ key: null, blocked: false });
    await Bun.sleep(100);
    expect(pathOf("/null")).toHaveLength(1);
    clock.advance(61_000);
    wake();
    await waitFor(async () => pathOf("/null").length === 4, { what: "N1 again, N2, N3" });
    expect(pathOf("/null").map(seqOf)).toEqual(["N1", "N1", "N2", "N3"]);
  });
});

describe("an ordered application endpoint", () => {
  it("keeps messages of one ordering_key in line while other keys flow; GET and skip on the endpoint's ordering", async () => {
    sink.respond = (r) => (r.path.startsWith("/ep") && seqOf(r) === "x1" ? new Response("no", { status: 500 }) : new Response("ok"));
    const app = await createApp(server, key);
    const ep = await createEndpoint(server, key, app.id, { url: `${sink.url}/ep`, ordered: true, on_dlq: "block" });
    expect(ep).toMatchObject({ ordered: true, on_dlq: "block" });
    // The endpoint's destination keeps the default retries: the head waits for hours of retries.
    for (const [seq, k] of [["x1", "x"], ["x2", "x"], ["y1", "y"], ["x3", "x"], ["n1", null]] as const) {
      clock.advance(1);
      const m = await sendMessage(server, key, app.id, { event_type: "order.updated", payload: { seq }, ordering_key: k });
      expect(m.ordering_key).toBe(k);
    }
    await waitFor(async () => pathOf("/ep").length === 3, { what: "x1, y1 and n1" });
    await Bun.sleep(100);
    expect(pathOf("/ep").map(seqOf).sort()).toEqual(["n1", "x1", "y1"]);
    const listed = await call(server, "GET", `/v1/applications/${app.id}/endpoints/${ep.id}/ordering`, { key });
    expect(listed.status).toBe(200);
    expect(listed.body.keys).toEqual([expect.objectContaining({ key: "x", waiting: 2, blocked: false })]);
    // Not blocked (waiting for a retry): skip is refused.
    expect((await call(server, "POST", `/v1/applications/${app.id}/endpoints/${ep.id}/ordering/skip`, { key, body: { key: "x" } })).status).toBe(409);
    // A bad body is a 400.
    expect((await call(server, "POST", `/v1/applications/${app.id}/endpoints/${ep.id}/ordering/skip`, { key, body: { key: 5 } })).status).toBe(400);
  });
});

describe("an unordered connection", () => {
  it("sends every event at once, whatever fails", async () => {
    sink.respond = (r) => (r.path.startsWith("/free") && seqOf(r) === "A1" ? new Response("no", { status: 500 }) : new Response("ok"));
    const p = await pipeline(server, key, { url: `${sink.url}/free`, connection: { ordering_key: "body.customer" } });
    for (const seq of ["A1", "A2", "A3"]) await send(p.sourceId, { customer: "A", seq });
    await waitFor(async () => pathOf("/free").length === 3, { what: "all three" });
    expect((await call(server, "GET", `/v1/connections/${p.connectionId}/ordering`, { key })).body.keys).toEqual([]);
  });
});

describe("validation", () => {
  it("rejects an ordering_key that is not a field path, and an unknown on_dlq", async () => {
    const p = await pipeline(server, key, { url: `${sink.url}/v` });
    expect((await call(server, "PATCH", `/v1/connections/${p.connectionId}`, { key, body: { ordering_key: "customer.id" } })).status).toBe(400);
    expect((await call(server, "PATCH", `/v1/connections/${p.connectionId}`, { key, body: { on_dlq: "wait" } })).status).toBe(400);
    expect((await call(server, "PATCH", `/v1/connections/${p.connectionId}`, { key, body: { ordered: true, ordering_key: "headers.X-Shop", on_dlq: "block" } })).body.connection).toMatchObject({
      ordered: true,
      ordering_key: "headers.x-shop",
      on_dlq: "block",
    });
  });
});
