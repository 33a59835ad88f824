import {
  isSpanContextValid,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type AttributeValue,
  type Context,
  type Exception,
  type HrTime,
  type Link,
  type Span,
  type SpanContext,
  type SpanStatus,
  type TimeInput,
} from "@opentelemetry/api";
import { getTimeOrigin, hrTimeDuration, millisToHrTime, timeInputToHrTime } from "@opentelemetry/core";
import type { Resource } from "@opentelemetry/resources";
import { SamplingDecision, type ReadableSpan, type Sampler, type SpanProcessor, type TimedEvent } from "@opentelemetry/sdk-trace-base";

/**
 * Starts a span of any kind under `parent` (a context holding the parent's
 * span context, or the root context): the ingest request's SERVER span
 * (src/api/ingestFastPath.ts, under the provider's `traceparent`), a delivery
 * attempt's CLIENT span (src/delivery/attemptSpan.ts, under the context its
 * event stored), the INTERNAL span of a transform under an attempt.
 */
export type PlainSpanStarter = (name: string, kind: SpanKind, attributes: Attributes, parent: Context) => Span;

/** The ingest path's starter: a SERVER span. */
export type ServerSpanStarter = (name: string, attributes: Attributes, parent: Context) => Span;

/** What a plain span shares with the provider's spans, so both land in the same export batches alike. */
export interface PlainSpanSetting {
  sampler: Sampler;
  /** The provider's span processor (./spanQueue.ts): the same queue, bound and batches. */
  processor: SpanProcessor;
  resource: Resource;
  scope: { name: string; version?: string };
}

/** As the SDK's default span limits: attributes past this many are dropped and counted. */
const ATTRIBUTE_COUNT_LIMIT = 128;
const NO_LINKS: Link[] = [];

/**
 * Spans without the SDK's `Span`: ids, sampling (the provider's own sampler,
 * so OTEL_TRACES_SAMPLER and its argument decide as for every other span, and
 * a parent-based sampler follows the parent's sampled flag), start time and
 * attributes in one plain object, handed at its end to the provider's
 * processor as a finished span (./spanQueue.ts writes it into its batch at once).
 * The SDK's span costs its attribute sanitizing twice, its metrics hooks and
 * limit bookkeeping per call (docs/performance.md, "Tracing", third round),
 * and is used on the paths that make one span per webhook: ingest and each
 * delivery attempt. The wire format does not change, as the same writer
 * (./otlpJson.ts) encodes both.
 */
export function plainSpans(setting: PlainSpanSetting): PlainSpanStarter {
  const origin = getTimeOrigin();
  return (name, kind, attributes, parent) => {
    const parentContext = trace.getSpanContext(parent);
    const validParent = parentContext && isSpanContextValid(parentContext) ? parentContext : undefined;
    const traceId = validParent ? validParent.traceId : randomId(32);
    const spanId = randomId(16);
    const sampled = setting.sampler.shouldSample(parent, traceId, name, kind, attributes, NO_LINKS);
    const context: SpanContext = {
      traceId,
      spanId,
      traceFlags: sampled.decision === SamplingDecision.RECORD_AND_SAMPLED ? 1 : 0,
      traceState: sampled.traceState ?? validParent?.traceState,
    };
    if (sampled.decision === SamplingDecision.NOT_RECORD) return trace.wrapSpanContext(context);
    if (sampled.attributes) Object.assign(attributes, sampled.attributes);
    return new PlainSpan(setting, origin, name, kind, context, validParent, attributes);
  };
}

/**
 * Random lowercase hex ids (a trace id is 32 digits, a span id 16), cut from
 * a pool of random bytes written as hex at once, where the SDK's generator
 * writes each id as hex on its own. An id of zeros only is not valid (W3C
 * Trace Context) and is drawn again.
 */
const POOL_BYTES = 4096;
let pool = "";
let poolAt = 0;

function randomId(digits: 16 | 32): string {
  if (poolAt + digits > pool.length) {
    pool = Buffer.from(crypto.getRandomValues(new Uint8Array(POOL_BYTES))).toString("hex");
    poolAt = 0;
  }
  const id = pool.substring(poolAt, (poolAt += digits));
  return id === ZEROS[digits] ? randomId(digits) : id;
}

const ZEROS = { 16: "0".repeat(16), 32: "0".repeat(32) };

// Shared until a span has its own: most spans never have an event or a status.
const NO_EVENTS: TimedEvent[] = [];
const UNSET: SpanStatus = { code: SpanStatusCode.UNSET };
const NOT_YET: HrTime = [0, 0];

class PlainSpan implements Span, ReadableSpan {
  readonly links = NO_LINKS;
  events = NO_EVENTS;
  readonly resource: Resource;
  readonly instrumentationScope: { name: string; version?: string };
  status = UNSET;
  ended = false;
  droppedAttributesCount = 0;
  droppedEventsCount = 0;
  droppedLinksCount = 0;
  // Filled in at the end: until then only the monotonic start is kept.
  startTime = NOT_YET;
  endTime = NOT_YET;
  private readonly startMs = performance.now();
  /** Attributes held, counted when the first is added past those given at the start. */
  private attributeCount = -1;

  constructor(
    private readonly setting: PlainSpanSetting,
    private readonly origin: number,
    public name: string,
    readonly kind: SpanKind,
    private readonly context: SpanContext,
    readonly parentSpanContext: SpanContext | undefined,
    readonly attributes: Attributes,
  ) {
    this.resource = setting.resource;
    this.instrumentationScope = setting.scope;
  }

  get duration(): HrTime {
    return this.ended ? hrTimeDuration(this.startTime, this.endTime) : NOT_YET;
  }

  spanContext(): SpanContext {
    return this.context;
  }

  setAttribute(key: string, value: AttributeValue | undefined): this {
    if (this.ended || value === undefined || value === null || key.length === 0) return this;
    if (!(key in this.attributes)) {
      if (this.attributeCount < 0) {
        this.attributeCount = 0;
        for (const _ in this.attributes) this.attributeCount++;
      }
      if (this.attributeCount >= ATTRIBUTE_COUNT_LIMIT) {
        this.droppedAttributesCount++;
        return this;
      }
      this.attributeCount++;
    }
    (this.attributes as Record<string, AttributeValue>)[key] = value;
    return this;
  }

  setAttributes(attributes: Attributes): this {
    for (const key in attributes) this.setAttribute(key, attributes[key]);
    return this;
  }

  addEvent(name: string, attributesOrTime?: Attributes | TimeInput, time?: TimeInput): this {
    if (this.ended) return this;
    if (this.events === NO_EVENTS) this.events = [];
    const timeGiven = typeof attributesOrTime === "number" || Array.isArray(attributesOrTime) || attributesOrTime instanceof Date;
    const at = timeGiven ? (attributesOrTime as TimeInput) : time;
    this.events.push({
      name,
      attributes: timeGiven ? {} : ((attributesOrTime as Attributes | undefined) ?? {}),
      time: at === undefined ? millisToHrTime(this.origin + performance.now()) : timeInputToHrTime(at),
      droppedAttributesCount: 0,
    });
    return this;
  }

  addLink(): this {
    // Links are given at start or not at all on the paths that use plain spans.
    this.droppedLinksCount++;
    return this;
  }

  addLinks(links: Link[]): this {
    this.droppedLinksCount += links.length;
    return this;
  }

  setStatus(status: SpanStatus): this {
    // As the SDK: UNSET changes nothing, OK is final.
    if (this.ended || status.code === SpanStatusCode.UNSET || this.status.code === SpanStatusCode.OK) return this;
    this.status = { ...status };
    return this;
  }

  updateName(name: string): this {
    if (!this.ended) this.name = name;
    return this;
  }

  recordException(exception: Exception, time?: TimeInput): void {
    const attributes: Attributes =
      typeof exception === "string" ? { "exception.message": exception } : { "exception.type": exception.name ?? "Error", "exception.message": exception.message ?? "", ...(exception.stack ? { "exception.stacktrace": exception.stack } : {}) };
    this.addEvent("exception", attributes, time);
  }

  isRecording(): boolean {
    return !this.ended;
  }

  end(endTime?: TimeInput): void {
    if (this.ended) return;
    this.ended = true;
    this.startTime = millisToHrTime(this.origin + this.startMs);
    this.endTime = endTime === undefined ? millisToHrTime(this.origin + performance.now()) : timeInputToHrTime(endTime);
    this.setting.processor.onEnd(this);
  }
}
