import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { manualClock } from "../../src/core/clock";
import { createLogger } from "../../src/observability/logger";
import { call, startTestServer, tempDir, type TestServer } from "../helpers/server";
import { startSink, type Sink } from "../helpers/sink";
import { listAttempts, pipeline, sendEvent, waitFor, waitForEventStatus } from "../helpers/delivery";
import { startClockedServer } from "../helpers/clockedServer";
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from "../helpers/otlpReceiver";
import { createApp, createEndpoint, getMessage, sendMessage } from "../outbound/helpers";
import { describeOnly, TEST_SECRET_KEY } from "../helpers/database";

/**
 * docs/observability.md: one trace per webhook, exported over OTLP/HTTP to a
 * real receiver on 127.0.0.1 and read back with the OpenTelemetry packages'
 * own OTLP types (test/helpers/otlpReceiver.ts).
 */
const SERVER = 2;
const CLIENT = 3;
const INTERNAL = 1;
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0([01])$/;

function parseTraceparent(value: string | undefined) {
  const m = TRACEPARENT.exec(value ?? "");
  if (!m) throw new Error(`not a traceparent: ${value}`);
  return { traceId: m[1]!, spanId: m[2]!, sampled: m[3] === "1" };
}

describe("traces of a webhook (tracing on, every request sampled)", () => {
  const clock = manualClock(new Date());
  const receiver = startOtlpReceiver();
  const sink = startSink();
  let server: TestServer, key: string;

  beforeAll(async () => {
    ({ server, key } = await startClockedServer(clock, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url }));
  }, 30_000);
  afterAll(async () => {
    await server?.close();
    sink.close();
    receiver.close();
  });

  /** Flushes the server's spans, then waits until the receiver holds `count` spans of the trace. */
  async function spansOf(traceId: string, count: number): Promise<ReceivedSpan[]> {
    await server.flushTraces();
    return waitFor(async () => (receiver.trace(traceId).length >= count ? receiver.trace(traceId) : null), { what: `${count} spans of trace ${traceId}` });
  }

  it("a webhook delivered after two failed attempts is one trace: the ingest SERVER span and three CLIENT spans; the destination got each attempt's traceparent", async () => {
    let answered = 0;
    sink.respond = () => (++answered <= 2 ? new Response("down", { status: 503 }) : new Response("ok"));
    const p = await pipeline(server, key, { url: `${sink.url}/hook?token=s3cret`, destination: { max_retries: 5 } });
    const eventId = await sendEvent(server, p.sourceId, { order: 1 }, { headers: { "user-agent": "provider/1.0" } });

    for (let n = 1; n <= 2; n++) {
      const failed = await waitFor(async () => {
        const rows = await listAttempts(server, key, { event_id: eventId, status: "failed" });
        return rows.length === n ? rows.sort((a, b) => b.attempt_number - a.attempt_number)[0] : null;
      }, { what: `failure ${n}` });
      // The retry is due at next_retry_at: the clock goes there, and the worker is told.
      clock.advance(Date.parse(failed.next_retry_at) - clock.now().getTime());
      server.deps.bus.publish({ type: "delivery.queued" });
    }
    await waitForEventStatus(server, key, eventId, ["delivered"]);
    expect(sink.requests).toHaveLength(3);

    const sent = sink.requests.map((r) => parseTraceparent(r.headers["traceparent"]));
    const traceId = sent[0]!.traceId;
    expect(new Set(sent.map((s) => s.traceId))).toEqual(new Set([traceId]));
    const spans = await spansOf(traceId, 4);
    expect(spans).toHaveLength(4);

    const ingest = spans.find((s) => s.kind === SERVER)!;
    expect(ingest.name).toBe("POST /v1/ingest/{source}");
    expect(ingest.parentSpanId).toBeUndefined();
    expect(ingest.service).toBe("hookrelay");
    expect(ingest.attributes).toMatchObject({
      "http.request.method": "POST",
      "http.route": "/v1/ingest/{source}",
      "http.response.status_code": 200,
      "url.scheme": "http",
      "client.address": "127.0.0.1",
      "user_agent.original": "provider/1.0",
      "hookrelay.source.id": p.sourceId,
      "hookrelay.event.id": eventId,
      // Routed inside the ingest commit: one connection matched.
      "hookrelay.event.status": "pending",
      "hookrelay.verification_status": "skipped",
      "hookrelay.dedup_status": "skipped",
    });

    const attempts = await listAttempts(server, key, { event_id: eventId });
    const clients = spans.filter((s) => s.kind === CLIENT).sort((a, b) => Number(a.attributes["hookrelay.attempt_number"]) - Number(b.attributes["hookrelay.attempt_number"]));
    expect(clients).toHaveLength(3);
    const port = Number(new URL(sink.url).port);
    clients.forEach((span, i) => {
      // Children of the ingest span, stored with the event.
      expect(span.parentSpanId).toBe(ingest.spanId);
      expect(span.name).toBe("POST");
      const attempt = attempts.find((a: { attempt_number: number }) => a.attempt_number === i + 1);
      expect(span.attributes).toMatchObject({
        "http.request.method": "POST",
        // No query secret in the span.
        "url.full": `http://127.0.0.1:${port}/hook?token=REDACTED`,
        "server.address": "127.0.0.1",
        "server.port": port,
        "http.response.status_code": i < 2 ? 503 : 200,
        "http.request.resend_count": i,
        "hookrelay.destination.id": p.destinationId,
        "hookrelay.connection.id": p.connectionId.replace(/^con_/, ""),
        "hookrelay.attempt.id": attempt.id,
        "hookrelay.attempt_number": i + 1,
      });
      if (i < 2) expect(span.attributes["error.type"]).toBe("503");
      else expect(span.attributes["error.type"]).toBeUndefined();
      // The destination's traceparent names this attempt's span.
      expect(sent[i]).toEqual({ traceId, spanId: span.spanId, sampled: true });
    });
  });

  it("continues the traceparent (and tracestate) a provider sends", async () => {
    sink.requests.length = 0;
    sink.respond = () => new Response("ok");
    const p = await pipeline(server, key, { url: `${sink.url}/continued` });
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const parent = "00f067aa0ba902b7";
    const eventId = await sendEvent(server, p.sourceId, { a: 1 }, { headers: { traceparent: `00-${traceId}-${parent}-01`, tracestate: "vendor=x" } });
    await waitForEventStatus(server, key, eventId, ["delivered"]);
    const spans = await spansOf(traceId, 2);
    const ingest = spans.find((s) => s.kind === SERVER)!;
    expect(ingest.parentSpanId).toBe(parent);
    const client = spans.find((s) => s.kind === CLIENT)!;
    expect(client.parentSpanId).toBe(ingest.spanId);
    const received = sink.requests[0]!.headers;
    expect(parseTraceparent(received["traceparent"])).toEqual({ traceId, spanId: client.spanId, sampled: true });
    expect(received["tracestate"]).toBe("vendor=x");
  });

  it("an outbound message: the POST …/messages span, then a CLIENT span per endpoint attempt", async () => {
    sink.requests.length = 0;
    const app = await createApp(server, key);
    const endpoint = await createEndpoint(server, key, app.id, { url: `${sink.url}/endpoint` });
    const message = await sendMessage(server, key, app.id, { event_type: "order.created", payload: { id: 7 } });
    await waitFor(async () => ((await getMessage(server, key, app.id, message.id)).status === "delivered" ? true : null), { what: "message delivered" });
    const { traceId, spanId } = parseTraceparent(sink.requests[0]!.headers["traceparent"]);
    const spans = await spansOf(traceId, 2);
    const post = spans.find((s) => s.kind === SERVER)!;
    expect(post.name).toBe("POST /v1/applications/{appId}/messages");
    expect(post.attributes["http.response.status_code"]).toBe(202);
    const client = spans.find((s) => s.kind === CLIENT)!;
    expect(client.spanId).toBe(spanId);
    expect(client.parentSpanId).toBe(post.spanId);
    expect(client.attributes["url.full"]).toBe(`${sink.url}/endpoint`);
    expect(String(client.attributes["hookrelay.destination.id"])).toContain(endpoint.id);
  });

  it("API requests are SERVER spans named by their route", async () => {
    const traceId = "0af7651916cd43dd8448eb211c80319c";
    const res = await call(server, "GET", "/v1/sources?limit=1", { key, headers: { traceparent: `00-${traceId}-b7ad6b7169203331-01` } });
    expect(res.status).toBe(200);
    const [span] = await spansOf(traceId, 1);
    expect(span).toMatchObject({ kind: SERVER, name: "GET /v1/sources", attributes: expect.objectContaining({ "http.route": "/v1/sources", "http.response.status_code": 200 }) });
  });

  it("a transform is an INTERNAL span under its attempt's CLIENT span", async () => {
    sink.requests.length = 0;
    sink.respond = () => new Response("ok");
    const p = await pipeline(server, key, { url: `${sink.url}/transformed`, connection: { transform_expression: '{"kind": "x"}' } });
    const eventId = await sendEvent(server, p.sourceId, { a: 1 });
    await waitForEventStatus(server, key, eventId, ["delivered"]);
    expect(JSON.parse(sink.requests[0]!.body)).toEqual({ kind: "x" });
    const { traceId, spanId } = parseTraceparent(sink.requests[0]!.headers["traceparent"]);
    const spans = await spansOf(traceId, 3);
    const transform = spans.find((s) => s.name === "transform")!;
    expect(transform.kind).toBe(INTERNAL);
    expect(transform.parentSpanId).toBe(spanId);
  });

  it("a destination whose own traceparent header is empty receives none", async () => {
    sink.requests.length = 0;
    const p = await pipeline(server, key, { url: `${sink.url}/quiet`, destination: { headers: { traceparent: "" } } });
    const eventId = await sendEvent(server, p.sourceId, { a: 1 }, { headers: { traceparent: "00-11111111111111111111111111111111-2222222222222222-01" } });
    await waitForEventStatus(server, key, eventId, ["delivered"]);
    expect(sink.requests[0]!.headers["traceparent"]).toBeUndefined();
  });
});

describe("sampling", () => {
  it("OTEL_TRACES_SAMPLER=traceidratio with OTEL_TRACES_SAMPLER_ARG=0 exports nothing", async () => {
    const receiver = startOtlpReceiver();
    const sink = startSink();
    const server = await startTestServer({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "0" });
    try {
      const key = await server.apiKey();
      const p = await pipeline(server, key, { url: `${sink.url}/x` });
      const eventId = await sendEvent(server, p.sourceId, { a: 1 });
      await waitForEventStatus(server, key, eventId, ["delivered"]);
      // Not sampled: the destination still learns the trace, flagged as not recorded.
      expect(parseTraceparent(sink.requests[0]!.headers["traceparent"]).sampled).toBe(false);
      await server.flushTraces();
      expect(receiver.requests).toBe(0);
      expect(receiver.spans).toEqual([]);
    } finally {
      await server.close();
      sink.close();
      receiver.close();
    }
  });
});

describe("sampling of the ingest span by the provider's traceparent (the default parentbased_always_on)", () => {
  it("a provider's unsampled traceparent: the trace continues, flagged not recorded, and none of its spans is exported", async () => {
    const receiver = startOtlpReceiver();
    const sink = startSink();
    const server = await startTestServer({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
    try {
      const key = await server.apiKey();
      const p = await pipeline(server, key, { url: `${sink.url}/x` });
      const traceId = "5bf92f3577b34da6a3ce929d0e0e4736";
      const eventId = await sendEvent(server, p.sourceId, { a: 1 }, { headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-00` } });
      await waitForEventStatus(server, key, eventId, ["delivered"]);
      const sent = parseTraceparent(sink.requests[0]!.headers["traceparent"]);
      expect(sent.traceId).toBe(traceId);
      expect(sent.sampled).toBe(false);
      // The setup's API requests, roots of their own traces, are sampled and exported; nothing of the provider's trace is.
      await server.flushTraces();
      expect(receiver.spans.length).toBeGreaterThan(0);
      expect(receiver.trace(traceId)).toEqual([]);
    } finally {
      await server.close();
      sink.close();
      receiver.close();
    }
  });
});

describe("a collector that is down", () => {
  it("fails no ingest and no delivery; the spans it did not take are counted in /metrics", async () => {
    // A port that was just free: nothing listens there.
    const gone = startOtlpReceiver();
    const url = gone.url;
    gone.close();
    const sink = startSink();
    const server = await startTestServer({ OTEL_EXPORTER_OTLP_ENDPOINT: url });
    try {
      const key = await server.apiKey();
      const p = await pipeline(server, key, { url: `${sink.url}/x` });
      const ids: string[] = [];
      for (let i = 0; i < 10; i++) ids.push(await sendEvent(server, p.sourceId, { i }));
      for (const id of ids) await waitForEventStatus(server, key, id, ["delivered"]);
      expect(sink.requests).toHaveLength(10);
      await server.flushTraces().catch(() => {});
      const metrics = await waitFor(async () => {
        const text = await (await server.request("/metrics")).text();
        const m = /^hookrelay_otel_spans_dropped_total\{[^}]*\} (\d+)/m.exec(text);
        return m && Number(m[1]) > 0 ? Number(m[1]) : null;
      }, { what: "dropped spans counted" });
      expect(metrics).toBeGreaterThan(0);
    } finally {
      await server.close();
      sink.close();
    }
  }, 60_000);
});

describe("logs carry the trace", () => {
  it("a line written while a traced request is handled has its trace_id and span_id", async () => {
    const receiver = startOtlpReceiver();
    const lines: string[] = [];
    const logger = createLogger({ level: "debug", format: "json", out: (line) => lines.push(line) });
    const server = await startTestServer({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url }, tempDir(), undefined, logger);
    try {
      const traceId = "5bf92f3577b34da6a3ce929d0e0e4736";
      const res = await server.request("/healthz", { headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` } });
      expect(res.status).toBe(200);
      const line = lines.map((l) => JSON.parse(l)).find((l) => l.msg === "request" && l.path === "/healthz");
      expect(line).toMatchObject({ trace_id: traceId, span_id: expect.stringMatching(/^[0-9a-f]{16}$/) });
      await server.flushTraces();
      const [span] = await waitFor(async () => (receiver.trace(traceId).length ? receiver.trace(traceId) : null));
      expect(line.span_id).toBe(span!.spanId);
      // Outside any request: no trace fields.
      const started = lines.map((l) => JSON.parse(l)).find((l) => l.msg === "node started");
      expect(started.trace_id).toBeUndefined();
    } finally {
      await server.close();
      receiver.close();
    }
  });
});

describe("logs carry the trace of a delivery attempt (its span is never made active: the ids are given to the line)", () => {
  it("a failed attempt's log line has the attempt span's trace_id and span_id, the ones its destination received", async () => {
    const receiver = startOtlpReceiver();
    const sink = startSink();
    sink.respond = () => new Response("down", { status: 503 });
    const lines: string[] = [];
    const logger = createLogger({ level: "debug", format: "json", out: (line) => lines.push(line) });
    const server = await startTestServer({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url }, tempDir(), undefined, logger);
    try {
      const key = await server.apiKey();
      const p = await pipeline(server, key, { url: `${sink.url}/failing`, destination: { max_retries: 3 } });
      const eventId = await sendEvent(server, p.sourceId, { a: 1 });
      const failed = await waitFor(async () => lines.map((l) => JSON.parse(l)).find((l) => l.msg === "delivery failed; retrying" && l.event_id === eventId) ?? null, { what: "the failure's log line" });
      const sent = parseTraceparent(sink.requests[0]!.headers["traceparent"]);
      expect(failed).toMatchObject({ trace_id: sent.traceId, span_id: sent.spanId, response_status: 503, attempt_number: 1 });
      await server.flushTraces();
      const spans = await waitFor(async () => (receiver.trace(sent.traceId).some((s) => s.kind === CLIENT) ? receiver.trace(sent.traceId) : null), { what: "the attempt's span" });
      const client = spans.find((s) => s.kind === CLIENT)!;
      expect(client.spanId).toBe(failed.span_id);
      expect(client.attributes["error.type"]).toBe("503");
    } finally {
      await server.close();
      sink.close();
      receiver.close();
    }
  });
});

describeOnly("postgres", "an attempt sent by another node", "two nodes need a shared PostgreSQL", () => {
  it("stays in the trace of the request another node ingested", async () => {
    const receiver = startOtlpReceiver();
    const sink = startSink();
    const a = await startTestServer({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
    let b: TestServer | undefined;
    try {
      const key = await a.apiKey();
      // Paused: the delivery waits in the queue until node b resumes it.
      const p = await pipeline(a, key, { url: `${sink.url}/later`, destination: { status: "paused" } });
      const traceId = "6bf92f3577b34da6a3ce929d0e0e4736";
      const eventId = await sendEvent(a, p.sourceId, { a: 1 }, { headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` } });
      await a.stop();
      b = await startTestServer({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, HOOKRELAY_DATABASE_URL: a.storeEnv.HOOKRELAY_DATABASE_URL!, HOOKRELAY_SECRET_KEY: TEST_SECRET_KEY }, tempDir());
      expect((await call(b, "PATCH", `/v1/destinations/${p.destinationId}`, { key, body: { status: "active" } })).status).toBe(200);
      await waitForEventStatus(b, key, eventId, ["delivered"]);
      await b.flushTraces();
      const spans = await waitFor(async () => (receiver.trace(traceId).filter((s) => s.kind === CLIENT).length ? receiver.trace(traceId) : null), { what: "b's attempt span" });
      const ingest = spans.find((s) => s.kind === SERVER && s.attributes["http.route"] === "/v1/ingest/{source}")!;
      const client = spans.find((s) => s.kind === CLIENT)!;
      expect(client.parentSpanId).toBe(ingest.spanId);
      expect(parseTraceparent(sink.requests[0]!.headers["traceparent"])).toEqual({ traceId, spanId: client.spanId, sampled: true });
    } finally {
      await b?.close();
      await a.close();
      sink.close();
      receiver.close();
    }
  }, 60_000);
});
