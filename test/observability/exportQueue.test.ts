import { SpanKind } from "@opentelemetry/api";
import { afterAll, describe, expect, it } from "vitest";
import { startTracing } from "../../src/observability/tracing";

/**
 * src/observability/tracing.ts: spans wait for export in a bounded queue.
 * A collector that takes a request and never answers holds the one export
 * in flight; spans past the queue are dropped and counted, never held.
 */
describe("the export queue", () => {
  const held: Array<() => void> = [];
  const collector = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: () => new Promise<Response>((resolve) => held.push(() => resolve(Response.json({})))),
  });
  afterAll(() => {
    for (const answer of held) answer();
    collector.stop(true);
  });

  it("drops and counts the spans past HOOKRELAY_OTEL_QUEUE_SIZE while the collector does not answer", async () => {
    let dropped = 0;
    const warnings: string[] = [];
    const tracing = startTracing(
      { endpoint: `http://127.0.0.1:${collector.port}`, serviceName: "hookrelay", sampler: "always_on", queueSize: 4, exportDelayMs: 60_000 },
      { logger: { warn: (msg) => warnings.push(msg) }, dropped: (n) => (dropped += n) },
    );
    const tracer = tracing.tracer!;
    // The first four fill the queue and go out as one batch (batch size = queue size), which the collector holds.
    for (let i = 0; i < 4; i++) tracer.startSpan(`s${i}`, { kind: SpanKind.INTERNAL }).end();
    await new Promise<void>((resolve) => {
      const check = () => (held.length > 0 ? resolve() : setTimeout(check, 5));
      check();
    });
    // Four more fill the queue again; the export in flight takes no more; ten past them are dropped at once.
    for (let i = 0; i < 14; i++) tracer.startSpan(`t${i}`, { kind: SpanKind.INTERNAL }).end();
    expect(dropped).toBe(10);
    expect(warnings).toEqual([]);
  });
});

describe("a batch that does not fill", () => {
  const bodies: Array<{ resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<{ name: string }> }> }> }> = [];
  const collector = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: async (req) => {
      bodies.push(await req.json());
      return Response.json({});
    },
  });
  afterAll(() => collector.stop(true));
  const names = () => bodies.map((b) => b.resourceSpans[0]!.scopeSpans[0]!.spans.map((s) => s.name));

  it("goes out after the export delay without a flush; batches after it are written whole over the buffers of those sent", async () => {
    const tracing = startTracing(
      { endpoint: `http://127.0.0.1:${collector.port}`, serviceName: "hookrelay", sampler: "always_on", queueSize: 3, exportDelayMs: 20 },
      { logger: { warn: () => {} }, dropped: () => {} },
    );
    const tracer = tracing.tracer!;
    tracer.startSpan("alone").end();
    await expect.poll(names).toEqual([["alone"]]);
    // Full batches of three, each sent before the next is written: the later ones reuse the sent ones' buffers,
    // and a longer name makes a later body longer than the one it is written over.
    for (const round of ["a", "bb".repeat(200), "c"]) {
      for (let i = 0; i < 3; i++) tracer.startSpan(`${round}${i}`).end();
      await tracing.flush();
    }
    expect(names()).toEqual([["alone"], ["a0", "a1", "a2"], [0, 1, 2].map((i) => `${"bb".repeat(200)}${i}`), ["c0", "c1", "c2"]]);
    await tracing.shutdown();
  });
});

describe("an export the collector does not answer", () => {
  let requests = 0;
  const received: string[][] = [];
  // Takes the first request and never answers it; answers the ones after.
  const collector = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: async (req) => {
      if (requests++ === 0) return new Promise<Response>(() => {});
      const body = (await req.json()) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<{ name: string }> }> }> };
      received.push(body.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans.map((span) => span.name))));
      return Response.json({});
    },
  });
  afterAll(() => collector.stop(true));

  it("is given up after OTEL_EXPORTER_OTLP_TIMEOUT: its spans count as dropped, and the next batch goes out", async () => {
    let dropped = 0;
    const tracing = startTracing(
      { endpoint: `http://127.0.0.1:${collector.port}`, serviceName: "hookrelay", sampler: "always_on", queueSize: 2, exportDelayMs: 60_000, timeoutMs: 200 },
      { logger: { warn: () => {} }, dropped: (n) => (dropped += n) },
    );
    const tracer = tracing.tracer!;
    // A full batch goes out at once: the collector holds it until the timeout gives it up.
    for (const name of ["held-1", "held-2"]) tracer.startSpan(name, { kind: SpanKind.INTERNAL }).end();
    // Given up within 5 s: half the 10 s default, so a timeout that was not applied fails the test.
    await expect.poll(() => dropped, { timeout: 5_000 }).toBe(2);
    for (const name of ["next-1", "next-2"]) tracer.startSpan(name, { kind: SpanKind.INTERNAL }).end();
    await expect.poll(() => received).toEqual([["next-1", "next-2"]]);
    expect(dropped).toBe(2);
    await tracing.shutdown();
  });
});
