import { beforeAll, describe, expect, it } from "vitest";
import { otherOrgKey } from "../helpers/rows";
import { call, type TestServer } from "../helpers/server";
import type { Sink } from "../helpers/sink";
import { createConnection, createDestination, createSourceId, sendEvent, waitFor, waitForEventStatus } from "../helpers/delivery";
import { useServer } from "../helpers/fixture";

/**
 * POST /v1/replay with connection_id: only that connection's source, through
 * its filter and its transform. Without it, every source's events in the
 * window go to the destination, filters or not.
 */
let server: TestServer, key: string, sink: Sink;

useServer({ sink: true }, (s) => ({ server, key, sink } = s));

const replay = (body: Record<string, unknown>, k = key) => call(server, "POST", "/v1/replay", { key: k, body });
const waitForReplay = (jobId: string) =>
  waitFor(
    async () => {
      const res = await call(server, "GET", `/v1/replay/${jobId}`, { key });
      return res.body.status === "completed" ? res.body : null;
    },
    { timeoutMs: 20_000, what: `replay ${jobId}` },
  );

describe("replay through a connection", () => {
  let destination: string;
  let orders: string;
  let other: string;
  let connection: string;
  const from = new Date(Date.now() - 60_000).toISOString();

  beforeAll(async () => {
    destination = await createDestination(server, key, { url: `${sink.url}/replayed` });
    orders = await createSourceId(server, key, { name: "orders" });
    other = await createSourceId(server, key, { name: "other" });
    // Disabled, so the events are only stored: what reaches the sink later is the replay.
    connection = await createConnection(server, key, {
      name: "paid orders",
      source_id: orders,
      destination_id: destination,
      enabled: false,
      filter_rules: [{ field: "body.type", operator: "eq", value: "order.paid" }],
      transform_enabled: true,
      transform_expression: '{"paid": id}',
    });
    const ids = [
      await sendEvent(server, orders, { type: "order.paid", id: 1 }),
      await sendEvent(server, orders, { type: "order.created", id: 2 }),
      await sendEvent(server, orders, { type: "order.paid", id: 3 }),
      await sendEvent(server, other, { type: "order.paid", id: 4 }),
    ];
    for (const id of ids) await waitForEventStatus(server, key, id, ["ignored"]);
  });

  it("replays only the connection's source, only what its filter passes, shaped by its transform", async () => {
    const res = await replay({ destination_id: destination, connection_id: connection, from, to: new Date().toISOString(), rate_limit: 100 });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ job_id: expect.any(String), status: "running", total: 3 });
    const job = await waitForReplay(res.body.job_id);
    // The filtered-out event is skipped and leaves the total; the other source's is never looked at.
    expect(job).toMatchObject({ total: 2, processed: 2, succeeded: 2, failed: 0, skipped: 1 });
    const bodies = sink.requests.filter((r) => r.path === "/replayed").map((r) => JSON.parse(r.body));
    expect(bodies).toEqual([{ paid: 1 }, { paid: 3 }]);
  });

  it("takes the connection's id with a source_id that agrees; refuses a connection to another destination or another source", async () => {
    const to = new Date().toISOString();
    const elsewhere = await createDestination(server, key, { url: `${sink.url}/elsewhere` });
    const bad = await replay({ destination_id: elsewhere, connection_id: connection, from, to });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: "validation_error", details: [expect.objectContaining({ field: "body.connection_id" })] });
    const mismatch = await replay({ destination_id: destination, connection_id: connection, source_id: other, from, to });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error.details[0].field).toBe("body.source_id");
    const agreeing = await replay({ destination_id: destination, connection_id: connection, source_id: orders, from, to });
    expect(agreeing.status).toBe(202);
    await waitForReplay(agreeing.body.job_id);
  });

  it("answers 404 for a connection that does not exist or is another organization's", async () => {
    const to = new Date().toISOString();
    expect((await replay({ destination_id: destination, connection_id: "0".repeat(32), from, to })).status).toBe(404);
    expect((await replay({ destination_id: destination, connection_id: "nonsense", from, to })).status).toBe(404);
    const otherKey = await otherOrgKey(server);
    const theirs = await createDestination(server, otherKey, { url: `${sink.url}/theirs` });
    const res = await replay({ destination_id: theirs, connection_id: connection, from, to }, otherKey);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("not_found");
  });
});
