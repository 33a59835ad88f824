/**
 * A live feed of arriving events for `events tail` and `listen`.
 * Remote: GET /v1/events/stream (SSE), reconnecting by itself, and after each
 * (re)connect a backfill from GET /v1/events so nothing that arrived while the
 * stream was down is missed. Local: polls the events list on the database.
 * Both go through the context, so the same code serves both modes.
 */
import { POSTGRES_READ_HORIZON_MS } from "../src/db/horizon";
import { describeNetworkError } from "../src/outgoing/networkErrors";
import type { Deps, Scope } from "../src/domain/deps";
import { parseInput, type Context } from "./context";
import { CliError } from "./errors";
import { parseSse } from "./sse";

export interface FeedEvent {
  id: string;
  source_id: string;
  method: string;
  status: string;
  verification_status: string;
  dedup_status: string;
  received_at: string;
  source_name: string | null;
  payload_size: number;
  [k: string]: unknown;
}

export type FeedState = { state: "connecting" | "live" | "reconnecting"; detail?: string };

export interface FeedOptions {
  /** Only these sources (ids); empty = all. */
  sourceIds?: string[];
  /** Backfill: deliver events received at or after this ISO time first, oldest first. */
  since?: string;
  /** Deliver status changes of events already seen (tail); listen only wants arrivals. */
  updates?: boolean;
  /** Local mode polling interval. */
  pollMs?: number;
}

export interface FeedHandlers {
  onEvent(event: FeedEvent, kind: "created" | "updated"): void | Promise<void>;
  /** The received_at from which the feed delivers (`since`, or the server's "now" at the first connect), before any event. */
  onStart?(since: string): void;
  onState?(s: FeedState): void;
}

/**
 * How far before the newest received_at seen a backfill reads again. The
 * client cannot tell the server's store; on SQLite the overlap only re-reads
 * what Seen drops, on PostgreSQL it catches an event another node committed
 * after the stream dropped with a received_at before the newest seen.
 */
export const FEED_OVERLAP_MS = POSTGRES_READ_HORIZON_MS;

/** Events received at or after `since` (oldest first), paging with cursors. */
export async function eventsSince(ctx: Context, since: string, sourceId?: string): Promise<FeedEvent[]> {
  const all: FeedEvent[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 1000; page++) {
    const res = await ctx.run<{ events: FeedEvent[]; pagination: { next_cursor: string | null; has_more: boolean } }>({
      method: "GET",
      path: "/events",
      query: { after: since, limit: 100, cursor, source_id: sourceId },
      expect: "events",
      local: (deps, scope) => {
        const q: Record<string, string> = { after: since, limit: "100" };
        if (cursor) q.cursor = cursor;
        if (sourceId) q.source_id = sourceId;
        return listEventsLocal(deps, scope, q);
      },
    });
    all.push(...res.events);
    if (!res.pagination.has_more || !res.pagination.next_cursor) break;
    cursor = res.pagination.next_cursor;
  }
  return all.reverse();
}

/** GET /v1/events in local mode: the route's query schema, then the domain call, loaded only when local mode runs. */
async function listEventsLocal(deps: Deps, scope: Scope, q: Record<string, string>) {
  const [{ listEvents }, { listEventsQuery }] = await Promise.all([import("../src/domain/events"), import("../src/contracts/events")]);
  return listEvents(deps, scope, parseInput(listEventsQuery, q, "query"));
}

/** Remembers what was delivered so backfill and stream never hand over an event twice. */
class Seen {
  private ids = new Map<string, string>();
  has(id: string) {
    return this.ids.has(id);
  }
  status(id: string) {
    return this.ids.get(id);
  }
  add(id: string, status: string) {
    this.ids.delete(id);
    this.ids.set(id, status);
    if (this.ids.size > 20_000) this.ids.delete(this.ids.keys().next().value!);
  }
}

/** Starts the feed; resolves `done` when stopped. */
export function openFeed(ctx: Context, opts: FeedOptions, h: FeedHandlers) {
  const controller = new AbortController();
  const seen = new Seen();
  const wanted = (e: FeedEvent) => !opts.sourceIds?.length || opts.sourceIds.includes(e.source_id);
  // Handlers run one at a time, in arrival order (listen forwards in order).
  let chain = Promise.resolve();
  const emit = (e: FeedEvent, kind: "created" | "updated") => {
    chain = chain.then(() => h.onEvent(e, kind)).catch(() => {});
    return chain;
  };
  // Nothing older than the start (or --since): a status change of an old event is not an arrival.
  let floor = opts.since;
  const deliver = (e: FeedEvent, fromUpdate: boolean) => {
    if (!wanted(e) || (floor && e.received_at < floor)) return;
    if (!seen.has(e.id)) {
      seen.add(e.id, e.status);
      void emit(e, "created");
    } else if (opts.updates && (fromUpdate || seen.status(e.id) !== e.status)) {
      seen.add(e.id, e.status);
      void emit(e, "updated");
    }
  };
  let lastReceived = opts.since;
  const note = (e: FeedEvent) => {
    if (!lastReceived || e.received_at > lastReceived) lastReceived = e.received_at;
  };

  const backfill = async () => {
    if (!lastReceived) return;
    const ids = opts.sourceIds?.length === 1 ? opts.sourceIds[0] : undefined;
    // Another node may still commit an event stamped a moment before the newest seen (src/db/horizon.ts):
    // re-read the read horizon before it; what was already delivered is dropped by id (Seen).
    const overlap = new Date(Date.parse(lastReceived) - FEED_OVERLAP_MS).toISOString();
    for (const e of await eventsSince(ctx, floor && overlap < floor ? floor : overlap, ids)) {
      note(e);
      deliver(e, false);
    }
  };

  const done = ctx.remote ? runRemote() : runLocal();

  async function runRemote() {
    const remote = ctx.remote!;
    let delay = 500;
    let first = true;
    while (!controller.signal.aborted) {
      h.onState?.({ state: first ? "connecting" : "reconnecting" });
      try {
        const query = opts.sourceIds?.length === 1 ? { source_id: opts.sourceIds[0] } : undefined;
        const res = await remote.fetch("GET", "/events/stream", { query, headers: { accept: "text/event-stream" }, signal: controller.signal });
        if (!res.ok || !res.body) {
          const text = await res.text().catch(() => "");
          // A server error or a throttle may pass; credentials or another server will not get better by retrying.
          if (res.status >= 500 || res.status === 429) throw new Error(`HTTP ${res.status}`);
          throw remote.failure("GET", "/events/stream", res, safeJson(text));
        }
        if (!res.headers.get("content-type")?.startsWith("text/event-stream")) {
          await res.body.cancel().catch(() => {});
          throw remote.notHookrelay("GET", "/events/stream", res, "not an event stream");
        }
        // The server's first write (`: connected`) comes once it listens; arrivals during
        // the backfill then wait in the stream's buffer, so nothing falls in between.
        const chunks = (res.body as unknown as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]();
        const opening = await chunks.next();
        if (!lastReceived) lastReceived = serverTime(res.headers.get("date"));
        if (first) h.onStart?.((floor ??= lastReceived));
        const reader = parseSse(prepend(opening, chunks));
        await backfill();
        h.onState?.({ state: "live" });
        delay = 500;
        first = false;
        for await (const msg of reader) {
          if (!msg.data) continue;
          const e = safeJson(msg.data) as FeedEvent | null;
          if (!e?.id) continue;
          note(e);
          deliver(e, msg.event === "event.updated");
        }
      } catch (err) {
        if (controller.signal.aborted) break;
        // Only an unreachable server or a dropped stream is worth reconnecting to.
        if (err instanceof CliError && err.code !== "connection_failed") throw err;
        h.onState?.({ state: "reconnecting", detail: describeNetworkError(err) });
      }
      first = false;
      await sleep(delay, controller.signal);
      delay = Math.min(delay * 2, 5000);
    }
  }

  async function runLocal() {
    h.onState?.({ state: "connecting" });
    if (!lastReceived) lastReceived = new Date().toISOString();
    h.onStart?.((floor ??= lastReceived));
    await backfill();
    h.onState?.({ state: "live" });
    while (!controller.signal.aborted) {
      await sleep(opts.pollMs ?? 1000, controller.signal);
      if (controller.signal.aborted) break;
      try {
        await backfill();
        if (opts.updates) {
          const recent = await ctx.run<{ events: FeedEvent[] }>({
            method: "GET",
            path: "/events",
            query: { limit: 50 },
            expect: "events",
            local: (deps, scope) => listEventsLocal(deps, scope, { limit: "50" }),
          });
          for (const e of recent.events) if (seen.has(e.id)) deliver(e, false);
        }
      } catch (err) {
        h.onState?.({ state: "reconnecting", detail: describeNetworkError(err) });
      }
    }
  }

  return {
    done: done.then(() => chain),
    stop() {
      controller.abort();
    },
  };
}

/** Runs the feed until Ctrl-C or SIGTERM stops it (a command's foreground feed). */
export async function followUntilInterrupted(feed: ReturnType<typeof openFeed>) {
  const stop = () => feed.stop();
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  await feed.done;
}

/** "Now" by the server's clock (its Date header, a second early for rounding), so a skewed laptop clock misses nothing. */
function serverTime(date: string | null) {
  const t = date ? Date.parse(date) : NaN;
  return new Date((Number.isNaN(t) ? Date.now() : t) - 1000).toISOString();
}

async function* prepend(first: IteratorResult<Uint8Array>, rest: AsyncIterator<Uint8Array>): AsyncGenerator<Uint8Array> {
  if (first.done) return;
  yield first.value;
  while (true) {
    const next = await rest.next();
    if (next.done) return;
    yield next.value;
  }
}

function safeJson(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function sleep(ms: number, signal: AbortSignal) {
  return new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => (clearTimeout(t), resolve()), { once: true });
  });
}
