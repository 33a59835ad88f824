import { getBunServer } from "hono/bun";
import { z } from "zod";
import { eventDetail, eventList, eventStreamQuery, listEventsQuery } from "../../contracts/events";
import { normalizeIdOrNull } from "../../contracts/ids";
import { credentialOf } from "../../domain/credentials";
import { getEvent, listEvents } from "../../domain/events";
import type { StreamGuard } from "../../live/streamGuard";
import { eventStreamResponse } from "../eventStream";
import { errorSchema, idParam, operation, responses, type Api, type ApiContext } from "../openapi";

export { SSE_PING_MS } from "../eventStream";

/** Events list, detail and live stream (docs/ingest.md, "Events API"). Retry routes live in their own file (docs/decisions.md D7). */
export function registerEventRoutes(api: Api, streams: StreamGuard) {
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
      summary: "Server-Sent Events of arriving events (list-item shape); `: ping` comments every 15 s. Ends within 5 s of its credential's revocation, logout or expiry; past HOOKRELAY_STREAMS_PER_CREDENTIAL open streams of one credential → 429",
      request: { query: eventStreamQuery },
      responses: {
        200: { description: "text/event-stream: `data:` is an event list item, `id:` its id; status changes come as `event: event.updated`", content: { "text/event-stream": { schema: z.string() } } },
        401: { description: "Missing or invalid authentication", content: { "application/json": { schema: errorSchema } } },
        429: { description: "The credential already holds its limit of open streams", content: { "application/json": { schema: errorSchema } } },
      },
    },
    async (c, { query }) => streamEvents(c, query.source_id, streams),
  );

  operation(
    api,
    { tags, method: "get", path: "/events/{id}", summary: "Event detail: headers, body, verification, dedup, schema errors, delivery attempts", request: { params: idParam }, responses: responses({ status: 200, schema: eventDetail }, [401, 404]) },
    async (c, { params }) => c.json(await getEvent(c.get("deps"), c.get("scope"), params.id), 200),
  );
}

function streamEvents(c: ApiContext, rawSourceId: string | undefined, streams: StreamGuard) {
  // An id that cannot exist filters to nothing rather than to everything.
  const sourceId = rawSourceId === undefined ? null : (normalizeIdOrNull(rawSourceId, "source") ?? "none");
  // Bun closes a request idle for idleTimeout seconds; a stream must live as long as its client.
  try {
    getBunServer<{ timeout(req: Request, seconds: number): void }>(c)?.timeout(c.req.raw, 0);
  } catch {}
  // Held to the credential it was opened with: a revoked key or ended session ends it (docs/api.md, "Live streams").
  const credential = credentialOf(c.get("scope"), c.get("sessionToken"));
  const hold = credential === null ? undefined : (end: () => void) => streams.admit(credential, end);
  return eventStreamResponse(c.get("deps"), c.get("scope"), sourceId, c.req.raw.signal, c.get("metrics"), hold);
}
