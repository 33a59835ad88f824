import type { HrTime, Link, SpanContext, SpanStatus } from "@opentelemetry/api";
import type { ReadableSpan, TimedEvent } from "@opentelemetry/sdk-trace-base";

/**
 * A finished span as plain data, to cross to the export worker
 * (./spanExportWorker.ts) as JSON text, and the span the official
 * exporter reads, rebuilt from it there. Only what the OTLP encoding reads.
 */
export interface SpanRecord {
  name: string;
  kind: number;
  context: SpanContext;
  parent?: SpanContext;
  start: HrTime;
  end: HrTime;
  duration: HrTime;
  attributes: ReadableSpan["attributes"];
  status: SpanStatus;
  events: TimedEvent[];
  links: Link[];
  dropped: [attributes: number, events: number, links: number];
  scope: { name: string; version?: string; schemaUrl?: string };
}

/** One batch handed to the worker, with where it goes. */
export interface ExportBatch {
  id: number;
  url: string;
  headers: Record<string, string>;
  resource: ReadableSpan["resource"]["attributes"];
  spans: SpanRecord[];
}

export interface ExportAnswer {
  id: number;
  ok: boolean;
  error?: string;
}

export function recordOf(span: ReadableSpan): SpanRecord {
  const context = span.spanContext();
  // A trace state is a class instance: it crosses as its serialized text.
  const { traceState, ...plain } = context;
  const record: SpanRecord = {
    name: span.name,
    kind: span.kind,
    context: traceState ? { ...plain, traceState: traceState.serialize() as never } : plain,
    start: span.startTime,
    end: span.endTime,
    duration: span.duration,
    attributes: span.attributes,
    status: span.status,
    events: span.events,
    links: span.links.map((l) => ({ ...l, context: { ...l.context, traceState: l.context.traceState?.serialize() as never } })),
    dropped: [span.droppedAttributesCount, span.droppedEventsCount, span.droppedLinksCount],
    scope: { ...span.instrumentationScope },
  };
  if (span.parentSpanContext) record.parent = { ...span.parentSpanContext, traceState: undefined };
  return record;
}

/** The span as the exporter's encoding reads it (resource: one per batch, shared, as the encoding groups by it). */
export function readableOf(r: SpanRecord, resource: ReadableSpan["resource"]): ReadableSpan {
  const traceState = r.context.traceState as unknown as string | undefined;
  const context: SpanContext = traceState ? { ...r.context, traceState: serialized(traceState) } : r.context;
  return {
    name: r.name,
    kind: r.kind,
    spanContext: () => context,
    parentSpanContext: r.parent,
    startTime: r.start,
    endTime: r.end,
    duration: r.duration,
    ended: true,
    attributes: r.attributes,
    status: r.status,
    events: r.events,
    links: r.links.map((l) => (l.context.traceState ? { ...l, context: { ...l.context, traceState: serialized(l.context.traceState as unknown as string) } } : l)),
    resource,
    instrumentationScope: r.scope,
    droppedAttributesCount: r.dropped[0],
    droppedEventsCount: r.dropped[1],
    droppedLinksCount: r.dropped[2],
  };
}

/** A trace state crossed as its text; the encoding only serializes it again. */
function serialized(text: string): SpanContext["traceState"] {
  return { serialize: () => text } as never;
}
