import type { IAnyValue } from "@opentelemetry/otlp-transformer/build/src/common/internal-types";
import type { ESpanKind, IExportTraceServiceRequest } from "@opentelemetry/otlp-transformer/build/src/trace/internal-types";

/**
 * A real OTLP/HTTP collector on 127.0.0.1 for tests: takes POST /v1/traces
 * in the JSON encoding the exporter sends (its shape is the OpenTelemetry
 * packages' own `IExportTraceServiceRequest`) and keeps every span.
 */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: ESpanKind;
  attributes: Record<string, unknown>;
  /** The resource's service.name. */
  service: unknown;
}

export interface OtlpReceiver {
  url: string;
  /** Export requests received (each may carry several spans). */
  requests: number;
  spans: ReceivedSpan[];
  trace(traceId: string): ReceivedSpan[];
  close(): void;
}

const hex = (v: string | Uint8Array | undefined) => (v === undefined ? undefined : typeof v === "string" ? v : Buffer.from(v).toString("hex"));

function valueOf(v: IAnyValue): unknown {
  if (v.stringValue !== undefined && v.stringValue !== null) return v.stringValue;
  if (v.intValue !== undefined && v.intValue !== null) return Number(v.intValue);
  if (v.doubleValue !== undefined && v.doubleValue !== null) return v.doubleValue;
  if (v.boolValue !== undefined && v.boolValue !== null) return v.boolValue;
  if (v.arrayValue) return v.arrayValue.values.map(valueOf);
  return undefined;
}

export function startOtlpReceiver(): OtlpReceiver {
  const receiver: OtlpReceiver = {
    url: "",
    requests: 0,
    spans: [],
    trace: (traceId) => receiver.spans.filter((s) => s.traceId === traceId),
    close: () => server.stop(true),
  };
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      if (req.method !== "POST" || new URL(req.url).pathname !== "/v1/traces") return new Response("not found", { status: 404 });
      const body = (await req.json()) as IExportTraceServiceRequest;
      receiver.requests++;
      for (const rs of body.resourceSpans ?? []) {
        const service = rs.resource?.attributes.find((a) => a.key === "service.name");
        for (const ss of rs.scopeSpans) {
          for (const s of ss.spans ?? []) {
            const parent = hex(s.parentSpanId);
            receiver.spans.push({
              traceId: hex(s.traceId)!,
              spanId: hex(s.spanId)!,
              ...(parent ? { parentSpanId: parent } : {}),
              name: s.name,
              kind: s.kind,
              attributes: Object.fromEntries(s.attributes.map((a) => [a.key, valueOf(a.value)])),
              service: service ? valueOf(service.value) : undefined,
            });
          }
        }
      }
      return Response.json({});
    },
  });
  receiver.url = `http://127.0.0.1:${server.port}`;
  return receiver;
}
