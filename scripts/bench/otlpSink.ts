/**
 * A local OTLP/HTTP receiver for the tracing benchmarks (scripts/bench/tracing.ts),
 * run as its own process: answers every POST /v1/traces at once and counts
 * the spans. GET /stats → {requests, spans}. It shares the machine's cores
 * with the server it measures, so it does as little as it can: the body's
 * bytes are searched for each span's `"spanId"` key, never decoded into a
 * string or parsed.
 */
let requests = 0;
let spans = 0;
// Each span has one spanId (links and parents name theirs differently: "parentSpanId").
const KEY = Buffer.from('"spanId"');
const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(req) {
    const url = new URL(req.url);
    if (url.pathname === "/stats") return Response.json({ requests, spans });
    const body = Buffer.from(await req.arrayBuffer());
    requests++;
    for (let at = body.indexOf(KEY); at >= 0; at = body.indexOf(KEY, at + KEY.length)) spans++;
    return Response.json({});
  },
});
console.error(`listening on http://127.0.0.1:${server.port}`);
export {};
