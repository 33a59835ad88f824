import type { Deps, Scope } from "../domain/deps";
import type { BusMessage } from "../core/bus";
import { getEventListItems } from "../domain/events";
import type { Metrics } from "../observability/metrics";

/** A comment line this often keeps proxies and clients from timing the stream out (contract: at least every 15 s). */
export const SSE_PING_MS = 15_000;
/** Bytes one client may leave unread in our buffer; past it the stream waits for the client before writing more. */
export const SSE_BUFFER_BYTES = 256 * 1024;
/**
 * Bus messages one stream may hold while it waits for its client. Past it
 * the client is dropped: a client that stopped reading must not make the
 * server keep everything that arrives. A dropped EventSource reconnects
 * (`retry: 3000`) and reads what it missed from the list.
 */
export const SSE_MAX_QUEUED = 10_000;

type StreamedMessage = Extract<BusMessage, { type: "event.created" | "event.updated" }>;

/**
 * Server-Sent Events of the caller's arriving events, as a response body
 * with a bounded buffer: the client's reading paces the writes (the body
 * is pulled as the socket drains), and the messages waiting meanwhile are
 * capped by SSE_MAX_QUEUED.
 */
export function eventStreamResponse(
  deps: Deps,
  scope: Scope,
  sourceId: string | null,
  signal: AbortSignal,
  metrics: Metrics | undefined,
  /** Takes a slot for the stream (or throws 429) and ends it when its credential is revoked; answers the slot's release. */
  hold?: (end: () => void) => () => void,
): Response {
  const encoder = new TextEncoder();
  const queued: StreamedMessage[] = [];
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let open = true;
  let wake: (() => void) | null = null;
  const nudge = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  const sleep = () => new Promise<void>((r) => (wake = r));
  const stop = () => {
    open = false;
    nudge();
  };
  // Before anything is set up: a refused stream is a plain 429.
  const release = hold?.(stop);
  const room = () => (controller.desiredSize ?? 0) > 0;
  const send = (text: string) => controller.enqueue(encoder.encode(text));

  const body = new ReadableStream<Uint8Array>(
    {
      start: (c) => void (controller = c),
      // The client read: there is room again.
      pull: nudge,
      // The client went away.
      cancel: stop,
    },
    new ByteLengthQueuingStrategy({ highWaterMark: SSE_BUFFER_BYTES }),
  );

  const drop = () => {
    if (!open) return;
    stop();
    metrics?.sseDropped.inc();
    // An errored body makes Bun close the connection instead of keeping what the client never read.
    // Without a reason: Bun prints an Error reason to stderr, and this is no server fault.
    controller.error();
  };

  const unsubscribe = deps.bus.subscribe((m) => {
    // Announcements from other nodes were lost meanwhile: end the stream; the client reconnects and reads what it missed from the list.
    if (m.type === "bus.resumed") return stop();
    if (!open || (m.type !== "event.created" && m.type !== "event.updated")) return;
    if (m.orgId !== scope.orgId || m.envId !== scope.envId || (sourceId && m.sourceId !== sourceId)) return;
    if (queued.length >= SSE_MAX_QUEUED) return drop();
    queued.push(m);
    nudge();
  });
  signal.addEventListener("abort", stop);
  // A ping is only worth sending to a client that keeps up; a full buffer already shows the line is alive.
  const ping = setInterval(() => open && room() && send(": ping\n\n"), SSE_PING_MS);
  metrics?.sseClients.inc();

  const pump = async () => {
    send(": connected\n\nretry: 3000\n\n");
    while (open) {
      if (queued.length === 0) await sleep();
      const batch = queued.splice(0);
      if (batch.length === 0) continue;
      const items = new Map((await getEventListItems(deps, scope, [...new Set(batch.map((m) => m.eventId))])).map((i) => [i.id, i]));
      for (const m of batch) {
        const item = items.get(m.eventId);
        if (!item) continue;
        while (open && !room()) await sleep();
        if (!open) return;
        send(`${m.type === "event.updated" ? "event: event.updated\n" : ""}data: ${JSON.stringify(item)}\nid: ${item.id}\n\n`);
      }
    }
  };
  void pump()
    .catch(() => {})
    .finally(() => {
      clearInterval(ping);
      unsubscribe();
      release?.();
      signal.removeEventListener("abort", stop);
      metrics?.sseClients.dec();
      try {
        controller.close();
      } catch {}
    });

  return new Response(body, { headers: { "content-type": "text/event-stream", "cache-control": "no-cache", "x-accel-buffering": "no" } });
}
