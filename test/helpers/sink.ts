/** A real local HTTP receiver for delivery tests: records every request, answers as told. */
export interface SinkRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  receivedAt: number;
}

export interface Sink {
  url: string;
  requests: SinkRequest[];
  /** Decide the response per request (default 200 "ok"). */
  respond: (req: SinkRequest, index: number) => Response | Promise<Response>;
  waitFor(count: number, timeoutMs?: number): Promise<SinkRequest[]>;
  close(): void;
}

export function startSink(): Sink {
  const sink: Sink = {
    url: "",
    requests: [],
    respond: () => new Response("ok"),
    async waitFor(count, timeoutMs = 30_000) {
      const until = Date.now() + timeoutMs;
      while (sink.requests.length < count) {
        if (Date.now() > until) throw new Error(`sink got ${sink.requests.length} of ${count} requests`);
        await Bun.sleep(10);
      }
      return sink.requests;
    },
    close: () => server.stop(true),
  };
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const url = new URL(req.url);
      const rec: SinkRequest = {
        method: req.method,
        path: url.pathname + url.search,
        headers: Object.fromEntries(req.headers),
        body: await req.text(),
        receivedAt: Date.now(),
      };
      sink.requests.push(rec);
      return sink.respond(rec, sink.requests.length - 1);
    },
  });
  sink.url = `http://127.0.0.1:${server.port}`;
  return sink;
}
