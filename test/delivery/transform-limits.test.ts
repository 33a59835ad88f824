import { describe, expect, it } from "vitest";
import { sandbox } from "../../src/rules/sandbox";
import { createConnection, createDestination, createSourceId, listAttempts, sendEvent, waitFor, waitForEventStatus } from "../helpers/delivery";
import type { TestServer } from "../helpers/server";
import type { Sink } from "../helpers/sink";
import { useServer } from "../helpers/fixture";

/**
 * Transforms and regex filter rules run in the sandbox (docs/delivery.md,
 * "Limits of transforms and filters"): one that runs out of time or memory
 * fails its own delivery, or does not route, and nothing else waits for it.
 */
let server: TestServer, key: string, sink: Sink;
useServer({ sink: true }, (s) => ({ server, key, sink } = s));

/** Four regexes that backtrack for most of a second each on 100,000 a's: past the 1 s limit together. */
const BACKTRACKING = "$contains(s, /(a*)*b/) or $contains(s, /(a*)*c/) or $contains(s, /(a*)*d/) or $contains(s, /(a*)*e/)";
const received = (path: string) => sink.requests.filter((r) => r.path === path);

describe("a saved connection whose transform hits a limit", () => {
  it("fails that delivery with a clear error on the attempt, while the event's other deliveries go out", async () => {
    const sourceId = await createSourceId(server, key);
    const slow = await createConnection(server, key, { source_id: sourceId, destination_id: await createDestination(server, key, { url: `${sink.url}/slow` }), transform_expression: BACKTRACKING });
    const big = await createConnection(server, key, {
      source_id: sourceId,
      destination_id: await createDestination(server, key, { url: `${sink.url}/big` }),
      transform_expression: '$length($pad("", 100000000, "a"))',
    });
    const plain = await createConnection(server, key, { source_id: sourceId, destination_id: await createDestination(server, key, { url: `${sink.url}/plain` }), transform_expression: '{"n": n}' });

    const eventId = await sendEvent(server, sourceId, { s: "a".repeat(100_000), n: 1 });
    // Events of another source keep flowing too.
    const otherSource = await createSourceId(server, key);
    await createConnection(server, key, { source_id: otherSource, destination_id: await createDestination(server, key, { url: `${sink.url}/other` }) });
    for (let i = 0; i < 5; i++) await sendEvent(server, otherSource, { i });

    await waitForEventStatus(server, key, eventId, ["failed"], 30_000);
    const attempts = await listAttempts(server, key, { event_id: eventId });
    const of = (connectionId: string) => attempts.filter((a) => a.connection_id === connectionId);
    expect(of(slow)).toHaveLength(1);
    expect(of(slow)[0]).toMatchObject({ status: "failed", error: "transform_error", is_dlq: 1 });
    expect(of(slow)[0].error_detail).toMatch(/^Transform stopped: it ran longer than the 1000 ms time limit/);
    expect(of(big)).toHaveLength(1);
    expect(of(big)[0]).toMatchObject({ status: "failed", error: "transform_error" });
    expect(of(big)[0].error_detail).toMatch(/^Transform stopped: it exceeded the memory limit \(\$pad's result would be 100000000 characters long/);
    expect(of(plain)[0]).toMatchObject({ status: "success" });

    expect(received("/slow")).toHaveLength(0);
    expect(received("/big")).toHaveLength(0);
    expect(received("/plain").map((r) => r.body)).toEqual(['{"n":1}']);
    await waitFor(async () => received("/other").length === 5, { timeoutMs: 30_000, what: "the other source's deliveries" });
  });
});

describe("regex filter rules", () => {
  it("route through the background router: a matching regex delivers, a non-matching one does not", async () => {
    const sourceId = await createSourceId(server, key);
    await createConnection(server, key, {
      source_id: sourceId,
      destination_id: await createDestination(server, key, { url: `${sink.url}/orders` }),
      filter_rules: [{ field: "body.type", operator: "regex", value: "^order\\." }],
    });
    await createConnection(server, key, {
      source_id: sourceId,
      destination_id: await createDestination(server, key, { url: `${sink.url}/refunds` }),
      filter_rules: [{ field: "body.type", operator: "regex", value: "^refund\\." }],
    });
    const order = await sendEvent(server, sourceId, { type: "order.created" });
    const nothing = await sendEvent(server, sourceId, { type: "customer.created" });
    expect(await waitForEventStatus(server, key, order, ["delivered"], 30_000)).toBe("delivered");
    expect(await waitForEventStatus(server, key, nothing, ["ignored"], 30_000)).toBe("ignored");
    expect(received("/orders")).toHaveLength(1);
    expect(received("/refunds")).toHaveLength(0);
  });

  it("a backtracking regex does not hold ingest: the event is acknowledged, that connection is skipped, the others deliver", async () => {
    const sourceId = await createSourceId(server, key);
    await createConnection(server, key, {
      source_id: sourceId,
      destination_id: await createDestination(server, key, { url: `${sink.url}/backtracking` }),
      filter_rules: [{ field: "body.s", operator: "regex", value: "^(a+)+$" }],
    });
    await createConnection(server, key, {
      source_id: sourceId,
      destination_id: await createDestination(server, key, { url: `${sink.url}/all` }),
      filter_rules: [{ field: "body.s", operator: "exists" }],
    });
    const terminated = sandbox().terminated;
    const eventId = await sendEvent(server, sourceId, { s: "a".repeat(40) + "!" });
    expect((await server.request("/healthz")).status).toBe(200);
    expect(await waitForEventStatus(server, key, eventId, ["delivered"], 30_000)).toBe("delivered");
    expect(received("/all")).toHaveLength(1);
    expect(received("/backtracking")).toHaveLength(0);
    // The regex ran in the sandbox (this server runs in the test's process), not in the thread that answers
    // requests, and routing stopped it at its deadline rather than waiting for it to give up.
    expect(sandbox().terminated).toBe(terminated + 1);
  });
});
