import type { AttributeValue, Attributes, HrTime, Link } from "@opentelemetry/api";
import type { ReadableSpan, TimedEvent } from "@opentelemetry/sdk-trace-base";

/**
 * The body of an OTLP/HTTP JSON export request, written as UTF-8 bytes
 * straight into one buffer per batch: the same document the official
 * `JsonTraceSerializer` (@opentelemetry/otlp-transformer) writes, less the
 * span fields that hold their default value (test/observability/otlpJson.test.ts
 * compares the two). No object per span, attribute and value is built to be
 * stringified, no string per span joined, and an attribute whose value was
 * seen before is copied as the bytes kept for it (docs/performance.md,
 * "Tracing: the 90% goal met").
 */

/** What every span of one batch shares: its resource and instrumentation scope (src/observability/tracing.ts makes one tracer). */
export interface SpanOrigin {
  resource: ReadableSpan["resource"];
  scope: ReadableSpan["instrumentationScope"];
}

const encoder = new TextEncoder();
const bytesOf = (text: string) => encoder.encode(text);

/** One export request being filled: `add` each span, then `finish` for the body. */
export class OtlpJsonBatch {
  private buf: Uint8Array<ArrayBuffer>;
  private pos = 0;
  count = 0;

  /** Written into `buffer` (it grows into a new one when full: `buffer` then says which). */
  constructor(
    private readonly envelope: Envelope,
    buffer: Uint8Array<ArrayBuffer> = new Uint8Array(64 * 1024),
  ) {
    this.buf = buffer;
    this.bytes(envelope.head);
  }

  /** The buffer the body was written in, to be written over by a later batch once the body has been sent. */
  get buffer(): Uint8Array<ArrayBuffer> {
    return this.buf;
  }

  add(span: ReadableSpan) {
    if (this.count > 0) this.byte(0x2c);
    this.count++;
    const context = span.spanContext();
    const parent = span.parentSpanContext;
    this.bytes(T.traceId);
    this.ascii(context.traceId);
    this.bytes(T.spanId);
    this.ascii(context.spanId);
    this.byte(0x22);
    if (parent?.spanId) {
      this.bytes(T.parentSpanId);
      this.ascii(parent.spanId);
      this.byte(0x22);
    }
    const traceState = context.traceState?.serialize();
    if (traceState !== undefined) {
      this.bytes(T.traceState);
      this.string(traceState);
    }
    this.bytes(T.name);
    this.string(span.name);
    this.bytes(T.kind);
    // The API's kinds start at INTERNAL = 0; OTLP's at UNSPECIFIED = 0.
    this.integer(span.kind == null ? 0 : span.kind + 1);
    this.bytes(T.start);
    this.nanos(span.startTime);
    this.bytes(T.end);
    this.nanos(span.endTime);
    this.bytes(T.attributes);
    this.attributes(span.attributes);
    // A field holding its default (a zero count, no events, no links, an UNSET status) is left out, as
    // the OTLP JSON encoding allows: a tenth of a span's bytes, every one of them sent and read again.
    this.countField(T.droppedAttributes, span.droppedAttributesCount);
    this.listField(T.events, span.events, eventText);
    this.countField(T.droppedEvents, span.droppedEventsCount);
    if (span.status.code || span.status.message !== undefined) {
      this.bytes(T.status);
      this.integer(span.status.code | 0);
      if (span.status.message !== undefined) {
        this.bytes(T.message);
        this.string(span.status.message);
      }
      this.byte(0x7d);
    }
    this.listField(T.links, span.links, linkText);
    this.countField(T.droppedLinks, span.droppedLinksCount);
    this.bytes(T.flags);
    this.integer(flags(context.traceFlags, parent?.isRemote));
    this.byte(0x7d);
  }

  /** A count field, unless it is zero. */
  private countField(field: Uint8Array, n: number) {
    if (!n) return;
    this.bytes(field);
    this.integer(n);
  }

  /** A list field (events, links: rare, so written as text), unless it is empty. */
  private listField<I>(field: Uint8Array, items: readonly I[], text: (item: I) => string) {
    if (items.length === 0) return;
    this.bytes(field);
    this.text(items.map(text).join(","));
    this.byte(0x5d);
  }

  /** The whole request body; the batch takes no more spans after it. */
  finish(): Uint8Array<ArrayBuffer> {
    this.bytes(this.envelope.tail);
    return this.buf.subarray(0, this.pos);
  }

  private room(n: number) {
    if (this.pos + n <= this.buf.length) return;
    const grown = new Uint8Array(Math.max(this.buf.length * 2, this.pos + n));
    grown.set(this.buf.subarray(0, this.pos));
    this.buf = grown;
  }

  private byte(b: number) {
    this.room(1);
    this.buf[this.pos++] = b;
  }

  private bytes(b: Uint8Array) {
    this.room(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  /** Text known to need no escaping and to be ASCII (hex ids). */
  private ascii(s: string) {
    this.room(s.length);
    const buf = this.buf;
    let pos = this.pos;
    for (let i = 0; i < s.length; i++) buf[pos++] = s.charCodeAt(i);
    this.pos = pos;
  }

  /** Text as it is, in UTF-8 (JSON already written). */
  private text(s: string) {
    // A UTF-16 unit is at most 3 bytes of UTF-8.
    this.room(s.length * 3);
    this.pos += encoder.encodeInto(s, this.buf.subarray(this.pos)).written;
  }

  /** A JSON string: printable ASCII without `"` or `\` as it is, anything else through JSON.stringify. */
  private string(s: string) {
    this.room(s.length + 2);
    const buf = this.buf;
    let pos = this.pos;
    buf[pos++] = 0x22;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return this.text(JSON.stringify(s));
      buf[pos++] = c;
    }
    buf[pos++] = 0x22;
    this.pos = pos;
  }

  private integer(n: number) {
    this.ascii(String(n));
  }

  /**
   * Nanoseconds since the epoch as a quoted decimal: past 2^53, so not a
   * number; written from the two integer parts instead of through a BigInt.
   */
  private nanos(time: HrTime) {
    const s = time[0];
    let n = time[1];
    if (!Number.isInteger(s) || !Number.isInteger(n) || s <= 0 || n < 0 || n >= 1e9) {
      this.byte(0x22);
      this.ascii(nanos(time));
      this.byte(0x22);
      return;
    }
    // The seconds' digits change once a second: kept as bytes. The nine digits after them are written one by one.
    if (s !== lastSeconds) {
      lastSeconds = s;
      lastSecondsBytes = bytesOf(`"${s}`);
    }
    this.bytes(lastSecondsBytes);
    this.room(10);
    const buf = this.buf;
    const end = this.pos + 9;
    for (let at = end - 1; at >= this.pos; at--, n = (n - (n % 10)) / 10) buf[at] = 48 + (n % 10);
    buf[end] = 0x22;
    this.pos = end + 1;
  }

  private attributes(attributes: Attributes) {
    this.byte(0x5b);
    let first = true;
    for (const key in attributes) {
      if (!first) this.byte(0x2c);
      first = false;
      const value = attributes[key];
      const known = knownPair(key, value);
      if (known) this.bytes(known);
      else if (typeof value === "string") {
        // A value not kept (an event id): the name's bytes, then the value written in place.
        this.bytes(keyHead(key));
        this.bytes(T.stringValue);
        this.string(value);
        this.bytes(T.closeValue);
      } else this.bytes(pairBytes(key, value));
    }
    this.byte(0x5d);
  }
}

let lastSeconds = -1;
let lastSecondsBytes = new Uint8Array(0);

/** The bytes around a batch's spans: the resource and the scope, written once. */
export interface Envelope {
  head: Uint8Array;
  tail: Uint8Array;
}

export function envelopeOf(origin: SpanOrigin): Envelope {
  const { resource, scope } = origin;
  const resourceSchema = resource.schemaUrl ? `,"schemaUrl":${JSON.stringify(resource.schemaUrl)}` : "";
  const version = scope.version === undefined ? "" : `,"version":${JSON.stringify(scope.version)}`;
  const scopeSchema = scope.schemaUrl === undefined ? "" : `,"schemaUrl":${JSON.stringify(scope.schemaUrl)}`;
  return {
    head: bytesOf(
      `{"resourceSpans":[{"resource":{"attributes":${keyValuesText(resource.attributes)},"droppedAttributesCount":0${resourceSchema}},"scopeSpans":[{"scope":{"name":${JSON.stringify(scope.name)}${version}},"spans":[`,
    ),
    tail: bytesOf(`]${scopeSchema}}]${resourceSchema}}]}`),
  };
}

/** The fixed parts of a span's text, in the order the official encoding writes them. */
const T = {
  traceId: bytesOf(`{"traceId":"`),
  spanId: bytesOf(`","spanId":"`),
  parentSpanId: bytesOf(`,"parentSpanId":"`),
  traceState: bytesOf(`,"traceState":`),
  name: bytesOf(`,"name":`),
  kind: bytesOf(`,"kind":`),
  start: bytesOf(`,"startTimeUnixNano":`),
  end: bytesOf(`,"endTimeUnixNano":`),
  attributes: bytesOf(`,"attributes":`),
  droppedAttributes: bytesOf(`,"droppedAttributesCount":`),
  events: bytesOf(`,"events":[`),
  droppedEvents: bytesOf(`,"droppedEventsCount":`),
  status: bytesOf(`,"status":{"code":`),
  message: bytesOf(`,"message":`),
  links: bytesOf(`,"links":[`),
  droppedLinks: bytesOf(`,"droppedLinksCount":`),
  flags: bytesOf(`,"flags":`),
  stringValue: bytesOf(`{"stringValue":`),
  closeValue: bytesOf(`}}`),
};

/** OTLP span flags: the W3C trace flags, and whether the parent was remote (bit 0x100 says the bit 0x200 is known). */
function flags(traceFlags: number, remote: boolean | undefined): number {
  return (traceFlags & 0xff) | 0x100 | (remote ? 0x200 : 0);
}

/**
 * Each attribute's whole bytes (`{"key":…,"value":{…}}`) by name and value:
 * most attributes of a span carry one of a few values on every span (the
 * method, the route, the source, the outcome), so writing one is mostly a
 * lookup. A name whose values keep changing (an event id) stops being kept
 * after PAIR_VALUES_MAX of them; past KEYS_MAX names the whole store starts over.
 */
const pairs = new Map<string, Map<AttributeValue, Uint8Array> | null>();
const PAIR_VALUES_MAX = 64;
const KEYS_MAX = 512;
const heads = new Map<string, Uint8Array>();

/** The bytes kept for this name and value; undefined when they are not kept yet (pairBytes keeps them) or no longer (a string value is then written in place). */
function knownPair(key: string, value: AttributeValue | undefined): Uint8Array | undefined {
  const values = pairs.get(key);
  if (values === null) return typeof value === "string" ? undefined : pairBytes(key, value);
  return values?.get(value!) ?? pairBytes(key, value);
}

/** `{"key":<name>,"value":` */
function keyHead(key: string): Uint8Array {
  let head = heads.get(key);
  if (!head) {
    if (heads.size >= KEYS_MAX) heads.clear();
    heads.set(key, (head = bytesOf(`{"key":${JSON.stringify(key)},"value":`)));
  }
  return head;
}

function pairBytes(key: string, value: AttributeValue | undefined): Uint8Array {
  let values = pairs.get(key);
  if (values === undefined) {
    if (pairs.size >= KEYS_MAX) pairs.clear();
    pairs.set(key, (values = new Map()));
  }
  let bytes = values?.get(value!);
  if (bytes === undefined) {
    bytes = bytesOf(pairText(key, value));
    if (values && (typeof value === "string" || typeof value === "number" || typeof value === "boolean")) {
      if (values.size < PAIR_VALUES_MAX) values.set(value, bytes);
      else pairs.set(key, null);
    }
  }
  return bytes;
}

const pairText = (key: string, value: AttributeValue | undefined) => `{"key":${JSON.stringify(key)},"value":${JSON.stringify(anyValue(value))}}`;

function keyValuesText(attributes: Attributes): string {
  return `[${Object.keys(attributes)
    .map((key) => pairText(key, attributes[key]))
    .join(",")}]`;
}

function eventText(event: TimedEvent): string {
  return `{"attributes":${event.attributes ? keyValuesText(event.attributes) : "[]"},"name":${JSON.stringify(event.name)},"timeUnixNano":"${nanos(event.time)}","droppedAttributesCount":${event.droppedAttributesCount || 0}}`;
}

function linkText(link: Link): string {
  const traceState = link.context.traceState?.serialize();
  return `{"attributes":${link.attributes ? keyValuesText(link.attributes) : "[]"},"spanId":"${link.context.spanId}","traceId":"${link.context.traceId}"${traceState === undefined ? "" : `,"traceState":${JSON.stringify(traceState)}`},"droppedAttributesCount":${link.droppedAttributesCount || 0},"flags":${flags(link.context.traceFlags, link.context.isRemote)}}`;
}

/**
 * Nanoseconds since the epoch as decimal text: past 2^53, so not a number;
 * written from the two integer parts instead of through a BigInt.
 */
export function nanos([seconds, nanoseconds]: HrTime): string {
  const s = Math.trunc(seconds);
  const n = Math.trunc(nanoseconds);
  if (s === 0) return String(n);
  if (s < 0 || n < 0 || n >= 1e9) return (BigInt(s) * 1_000_000_000n + BigInt(n)).toString();
  // Nine digits with their leading zeros, without padStart.
  return `${s}${String(n + 1e9).slice(1)}`;
}

function anyValue(value: AttributeValue | undefined | unknown): unknown {
  switch (typeof value) {
    case "string":
      return { stringValue: value };
    case "number":
      return Number.isInteger(value) ? { intValue: value } : { doubleValue: value };
    case "boolean":
      return { boolValue: value };
  }
  if (value instanceof Uint8Array) return { bytesValue: Buffer.from(value).toString("base64") };
  if (Array.isArray(value)) return { arrayValue: { values: value.map(anyValue) } };
  if (typeof value === "object" && value !== null) {
    const entries = Object.keys(value);
    return { kvlistValue: { values: entries.map((key) => ({ key, value: anyValue((value as Record<string, unknown>)[key]) })) } };
  }
  return {};
}
