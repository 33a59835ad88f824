import { getBunServer } from "hono/bun";
import { streamSSE, type SSEStreamingApi } from "hono/streaming";
import { z } from "zod";
import { eventDetail, eventList, eventStreamQuery, listEventsQuery } from "../../contracts/events";
import { normalizeIdOrNull } from "../../contracts/ids";
import type { BusMessage, Deps, Scope } from "../../domain/deps";
import { getEvent, getEventListItems, listEvents } from "../../domain/events";
import { errorSchema, idParam, operation, responses, type Api, type ApiContext } from "../openapi";

/** A comment line this often keeps proxies and clients from timing the stream out (contract: at least every 15 s). */
export const SSE_PING_MS = 15_000;

/** Events list, detail and live stream (issue 3). Retry routes live in their own file (issue 4). */
export function registerEventRoutes(api: Api) {
  const tags = ["events"];

  operation(
    api,
    { tags, method: "get", path: "/events", summary: "List events, newest first, with offset or cursor pages", request: { query: listEventsQuery }, responses: responses({ status: 200, schema: eventList }, [400, 401]) },
    async (c, { query }) => c.json(await listEvents(c.get("deps"), c.get("scope"), query), 200),
  );

  // Before /events/{id}: "stream" is not an id.
  operation(
    api,
    {
      tags,
      method: "get",
      path: "/events/stream",
      summary: "Server-Sent Events of arriving events (list-item shape); `: ping` comments every 15 s",
      request: { query: eventStreamQuery },
      responses: {
        200: { description: "text/event-stream: `data:` is an event list item, `id:` its id; status changes come as `event: event.updated`", content: { "text/event-stream": { schema: z.string() } } },
        401: { description: "Missing or invalid authentication", content: { "application/json": { schema: errorSchema } } },
      },
    },
    async (c, { query }) => streamEvents(c, query.source_id),
  );

  operation(
    api,
    { tags, method: "get", path: "/events/{id}", summary: "Event detail: headers, body, verification, dedup, schema errors, delivery attempts", request: { params: idParam }, responses: responses({ status: 200, schema: eventDetail }, [401, 404]) },
    async (c, { params }) => c.json(await getEvent(c.get("deps"), c.get("scope"), params.id), 200),
  );
}

function streamEvents(c: ApiContext, rawSourceId: string | undefined) {
  const deps = c.get("deps");
  const scope = c.get("scope");
  // An id that cannot exist filters to nothing rather than to everything.
  const sourceId = rawSourceId === undefined ? null : (normalizeIdOrNull(rawSourceId, "source") ?? "none");
  // Bun closes a request idle for idleTimeout seconds; a stream must live as long as its client.
  try {
    getBunServer<{ timeout(req: Request, seconds: number): void }>(c)?.timeout(c.req.raw, 0);
  } catch {}
  return streamSSE(c, (stream) => pump(stream, deps, scope, sourceId, c.req.raw.signal));
}

/** Forwards bus messages of the caller's scope as SSE messages until the client goes away. */
async function pump(stream: SSEStreamingApi, deps: Deps, scope: Scope, sourceId: string | null, signal: AbortSignal) {
  const queued: Extract<BusMessage, { type: "event.created" | "event.updated" }>[] = [];
  let wake: (() => void) | null = null;
  let open = true;
  const stop = () => {
    open = false;
    wake?.();
  };
  const unsubscribe = deps.bus.subscribe((m) => {
    if (m.type !== "event.created" && m.type !== "event.updated") return;
    if (m.orgId !== scope.orgId || m.envId !== scope.envId || (sourceId && m.sourceId !== sourceId)) return;
    queued.push(m);
    wake?.();
  });
  stream.onAbort(stop);
  signal.addEventListener("abort", stop);
  const ping = setInterval(() => void stream.write(": ping\n\n"), SSE_PING_MS);
  try {
    await stream.write(": connected\n\nretry: 3000\n\n");
    while (open && !stream.aborted) {
      if (queued.length === 0) await new Promise<void>((r) => (wake = r));
      wake = null;
      const batch = queued.splice(0);
      if (batch.length === 0) continue;
      const items = new Map((await getEventListItems(deps, scope, [...new Set(batch.map((m) => m.eventId))])).map((i) => [i.id, i]));
      for (const m of batch) {
        const item = items.get(m.eventId);
        if (!item) continue;
        await stream.writeSSE({ id: item.id, data: JSON.stringify(item), ...(m.type === "event.updated" ? { event: "event.updated" } : {}) });
      }
    }
  } finally {
    clearInterval(ping);
    unsubscribe();
    signal.removeEventListener("abort", stop);
  }
}
