import { call, type TestServer } from "./server";

/**
 * Delivery test fixtures through the public API: a source → connection →
 * destination pipeline, events sent through the real ingest URL, and
 * waiting on conditions (never fixed sleeps).
 */
export interface Pipeline {
  sourceId: string;
  destinationId: string;
  connectionId: string;
}

async function created(res: { status: number; body: any }, what: string) {
  if (res.status !== 201) throw new Error(`create ${what}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

export async function createDestination(server: TestServer, key: string, body: Record<string, unknown>): Promise<string> {
  const res = await created(await call(server, "POST", "/v1/destinations", { key, body: { name: "Sink", ...body } }), "destination");
  return res.destination.id as string;
}

export async function createConnection(server: TestServer, key: string, body: Record<string, unknown>): Promise<string> {
  const res = await created(await call(server, "POST", "/v1/connections", { key, body: { name: "Route", ...body } }), "connection");
  return res.connection.id as string;
}

export async function createSourceId(server: TestServer, key: string, body: Record<string, unknown> = {}): Promise<string> {
  const res = await created(await call(server, "POST", "/v1/sources", { key, body: { name: `Source ${Math.random().toString(36).slice(2, 8)}`, ...body } }), "source");
  return res.source.id as string;
}

/** A source, a destination at `url` and a connection between them. */
export async function pipeline(
  server: TestServer,
  key: string,
  opts: { url: string; destination?: Record<string, unknown>; connection?: Record<string, unknown>; source?: Record<string, unknown> },
): Promise<Pipeline> {
  const sourceId = await createSourceId(server, key, opts.source);
  const destinationId = await createDestination(server, key, { url: opts.url, ...opts.destination });
  const connectionId = await createConnection(server, key, { source_id: sourceId, destination_id: destinationId, ...opts.connection });
  return { sourceId, destinationId, connectionId };
}

/** Sends a request to a source's ingest URL and returns the stored event id (fails on anything but 200). */
export async function sendEvent(
  server: TestServer,
  sourceId: string,
  body: unknown,
  opts: { headers?: Record<string, string>; method?: string; path?: string } = {},
): Promise<string> {
  const res = await server.request(`/v1/ingest/${sourceId}${opts.path ?? ""}`, {
    method: opts.method ?? "POST",
    headers: { "content-type": "application/json", ...(opts.headers ?? {}) },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const json = (await res.json()) as { event_id?: string };
  if (res.status !== 200 || !json.event_id) throw new Error(`ingest: ${res.status} ${JSON.stringify(json)}`);
  return json.event_id;
}

/** Polls `check` until it returns something truthy, or fails after `timeoutMs` with the last value seen. */
export async function waitFor<T>(check: () => Promise<T | null | undefined | false>, opts: { timeoutMs?: number; intervalMs?: number; what?: string } = {}): Promise<T> {
  // Generous: a busy machine pauses for seconds; the deadline only bounds how long a failure takes.
  const until = Date.now() + (opts.timeoutMs ?? 30_000);
  let last: unknown;
  for (;;) {
    const v = await check();
    if (v) return v;
    last = v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${opts.what ?? "condition"} (last: ${JSON.stringify(last)})`);
    await Bun.sleep(opts.intervalMs ?? 20);
  }
}

export async function listAttempts(server: TestServer, key: string, query: Record<string, string> = {}) {
  const res = await call(server, "GET", `/v1/delivery-attempts?${new URLSearchParams({ limit: "100", ...query })}`, { key });
  if (res.status !== 200) throw new Error(`list attempts: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.delivery_attempts as any[];
}

export async function eventStatus(server: TestServer, key: string, eventId: string): Promise<string> {
  const res = await call(server, "GET", `/v1/events/${eventId}`, { key });
  if (res.status !== 200) throw new Error(`get event: ${res.status}`);
  return res.body.status as string;
}

/** Waits until the event reaches one of `statuses`; returns the status. */
export function waitForEventStatus(server: TestServer, key: string, eventId: string, statuses: string[], timeoutMs = 30_000) {
  return waitFor(
    async () => {
      const s = await eventStatus(server, key, eventId);
      return statuses.includes(s) ? s : null;
    },
    { timeoutMs, what: `event ${eventId} to become ${statuses.join("/")}` },
  );
}
