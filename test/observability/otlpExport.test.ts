import { SpanKind } from "@opentelemetry/api";
import { afterAll, describe, expect, it } from "vitest";
import { startTracing } from "../../src/observability/tracing";

/**
 * src/observability/spanQueue.ts sends each batch itself (fetch, not the
 * official exporter's client): what a collector needs from the request, and
 * what happens when it refuses one.
 */
interface Received {
  path: string;
  headers: Record<string, string>;
  body: { resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<{ name: string }> }> }> };
}

function collector(status: () => number) {
  const received: Received[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      received.push({ path: new URL(req.url).pathname, headers: Object.fromEntries(req.headers), body: await req.json() });
      return Response.json({}, { status: status() });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, received, stop: () => server.stop(true) };
}

describe("an export request", () => {
  const ok = collector(() => 200);
  afterAll(() => ok.stop());

  it("goes to <endpoint>/v1/traces as OTLP JSON with the OTEL_EXPORTER_OTLP_HEADERS", async () => {
    const tracing = startTracing(
      { endpoint: `${ok.url}/`, headers: "x-honeycomb-team=k%3Dey,authorization=Bearer abc", serviceName: "hookrelay", sampler: "always_on", queueSize: 64, exportDelayMs: 60_000 },
      { logger: { warn: () => {} }, dropped: () => {} },
    );
    tracing.tracer!.startSpan("one", { kind: SpanKind.INTERNAL }).end();
    tracing.tracer!.startSpan("two", { kind: SpanKind.INTERNAL }).end();
    await tracing.flush();
    expect(ok.received).toHaveLength(1);
    const [request] = ok.received;
    expect(request!.path).toBe("/v1/traces");
    expect(request!.headers).toMatchObject({ "content-type": "application/json", "x-honeycomb-team": "k=ey", authorization: "Bearer abc" });
    expect(request!.body.resourceSpans[0]!.scopeSpans[0]!.spans.map((s) => s.name)).toEqual(["one", "two"]);
    await tracing.shutdown();
  });
});

describe("a collector that refuses a batch", () => {
  let answer = 503;
  const refusing = collector(() => answer);
  afterAll(() => refusing.stop());

  it("costs its spans, counted as dropped, and one warning; the next batch goes out", async () => {
    let dropped = 0;
    const warnings: string[] = [];
    const tracing = startTracing(
      { tracesEndpoint: `${refusing.url}/custom/traces`, serviceName: "hookrelay", sampler: "always_on", queueSize: 64, exportDelayMs: 60_000 },
      { logger: { warn: (msg) => warnings.push(msg) }, dropped: (n) => (dropped += n) },
    );
    for (let i = 0; i < 3; i++) tracing.tracer!.startSpan(`refused${i}`).end();
    // A flush says the export failed; nothing on the ingest or delivery path waits on one.
    expect(await tracing.flush().then(() => "sent", () => "failed")).toBe("failed");
    expect(dropped).toBe(3);
    expect(warnings).toHaveLength(1);

    answer = 200;
    tracing.tracer!.startSpan("taken").end();
    await tracing.flush();
    expect(refusing.received.map((r) => r.path)).toEqual(["/custom/traces", "/custom/traces"]);
    expect(dropped).toBe(3);
    await tracing.shutdown();
  });
});

describe("a collector that redirects", () => {
  const elsewhere = collector(() => 200);
  const redirecting = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => Response.redirect(`${elsewhere.url}/v1/traces`, 307) });
  afterAll(() => {
    elsewhere.stop();
    redirecting.stop(true);
  });

  it("is not followed: the OTEL_EXPORTER_OTLP_HEADERS go to the configured collector only, and the batch counts as dropped", async () => {
    let dropped = 0;
    const tracing = startTracing(
      { endpoint: `http://127.0.0.1:${redirecting.port}`, headers: "authorization=Bearer secret", serviceName: "hookrelay", sampler: "always_on", queueSize: 64, exportDelayMs: 60_000 },
      { logger: { warn: () => {} }, dropped: (n) => (dropped += n) },
    );
    tracing.tracer!.startSpan("redirected").end();
    expect(await tracing.flush().then(() => "sent", () => "failed")).toBe("failed");
    expect(dropped).toBe(1);
    expect(elsewhere.received).toEqual([]);
    await tracing.shutdown();
  });
});
