import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags } from "@opentelemetry/api";
import { TraceState } from "@opentelemetry/core";
import { JsonTraceSerializer } from "@opentelemetry/otlp-transformer";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { AlwaysOnSampler, BasicTracerProvider, SimpleSpanProcessor, type ReadableSpan, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import { describe, expect, it } from "vitest";
import { envelopeOf, nanos, OtlpJsonBatch } from "../../src/observability/otlpJson";
import { plainSpans } from "../../src/observability/plainSpan";

/**
 * src/observability/otlpJson.ts writes the export request's JSON itself: it
 * must be the document the official serializer writes, span for span.
 */
const resource = resourceFromAttributes({ "service.name": "hookrelay", "service.version": "1.2.3" });
const scope = { name: "hookrelay", version: "1.2.3" };
function spansMadeBySdkAndPlain(): ReadableSpan[] {
  const ended: ReadableSpan[] = [];
  const collect: SpanExporter = { export: (spans, done) => (ended.push(...spans), done({ code: 0 })), shutdown: async () => {} };
  const processor = new SimpleSpanProcessor(collect);
  const provider = new BasicTracerProvider({ resource, sampler: new AlwaysOnSampler(), spanProcessors: [processor] });
  const tracer = provider.getTracer("hookrelay", "1.2.3");

  const remoteParent = trace.setSpanContext(ROOT_CONTEXT, {
    traceId: "0af7651916cd43dd8448eb211c80319c",
    spanId: "b7ad6b7169203331",
    traceFlags: TraceFlags.SAMPLED,
    isRemote: true,
    traceState: new TraceState("vendor=a\"b,other=1"),
  });
  const root = tracer.startSpan("POST /v1/ingest/{source}", { kind: SpanKind.SERVER, attributes: { "http.request.method": "POST", "http.response.status_code": 200, ratio: 0.25, ok: true, list: ["a", "b\n\"c\""], nums: [1, 2.5] } }, remoteParent);
  root.addEvent("exception", { "exception.message": "boom ✓" });
  root.setStatus({ code: SpanStatusCode.ERROR, message: "failed \u0000 here" });
  const child = tracer.startSpan("send", { kind: SpanKind.CLIENT, links: [{ context: root.spanContext(), attributes: { why: "stored context" } }] }, trace.setSpan(ROOT_CONTEXT, root));
  child.end();
  root.end();
  tracer.startSpan("internal", { kind: SpanKind.INTERNAL, attributes: { "hookrelay.source.id": "src_1", "url.scheme": "http" } }).end();

  // The ingest span without the SDK's Span (src/observability/plainSpan.ts), in the same batch under the same resource.
  const startPlain = plainSpans({ sampler: new AlwaysOnSampler(), processor, resource, scope });
  const plain = startPlain("POST /v1/ingest/{source}", SpanKind.SERVER, { "hookrelay.source.id": "src_1", "url.scheme": "http" }, remoteParent);
  plain.setAttribute("http.response.status_code", 401);
  plain.end();
  return ended;
}

/**
 * The official document, less the span fields that hold their default value:
 * the OTLP JSON encoding lets a writer leave those out, and ours does.
 */
function official(spans: ReadableSpan[]) {
  const document = JSON.parse(new TextDecoder().decode(JsonTraceSerializer.serializeRequest(spans)));
  for (const resourceSpans of document.resourceSpans) {
    for (const scopeSpans of resourceSpans.scopeSpans) {
      for (const span of scopeSpans.spans) {
        for (const count of ["droppedAttributesCount", "droppedEventsCount", "droppedLinksCount"]) if (span[count] === 0) delete span[count];
        for (const list of ["events", "links"]) if (span[list].length === 0) delete span[list];
        if (span.status.code === 0 && span.status.message === undefined) delete span.status;
      }
    }
  }
  return document;
}

describe("the OTLP JSON export request", () => {
  it("is the document the official JsonTraceSerializer writes, for SDK spans and plain ingest spans", () => {
    const spans = spansMadeBySdkAndPlain();
    expect(spans).toHaveLength(4);
    // Twice: the second time each attribute's bytes come from the store of those seen before.
    for (let round = 0; round < 2; round++) {
      const batch = new OtlpJsonBatch(envelopeOf({ resource, scope }), new Uint8Array(16));
      for (const span of spans) batch.add(span);
      expect(JSON.parse(new TextDecoder().decode(batch.finish()))).toEqual(official(spans));
    }
  });


  it("writes a span's times past 2^53 exactly, with the nanoseconds' leading zeros", () => {
    const [span] = spansMadeBySdkAndPlain();
    const timed = Object.assign(Object.create(span!), { startTime: [1_764_230_400, 5], endTime: [1_764_230_401, 999_999_999] }) as ReadableSpan;
    const batch = new OtlpJsonBatch(envelopeOf({ resource, scope }));
    batch.add(timed);
    const written = JSON.parse(new TextDecoder().decode(batch.finish())).resourceSpans[0].scopeSpans[0].spans[0];
    expect([written.startTimeUnixNano, written.endTimeUnixNano]).toEqual(["1764230400000000005", "1764230401999999999"]);
  });

  it("writes nanosecond timestamps past 2^53 exactly", () => {
    expect(nanos([1_764_230_400, 5])).toBe("1764230400000000005");
    expect(nanos([1_764_230_400, 999_999_999])).toBe("1764230400999999999");
    expect(nanos([0, 42])).toBe("42");
  });
});
