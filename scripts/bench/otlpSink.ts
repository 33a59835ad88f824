/**
 * A local OTLP/HTTP receiver for the tracing benchmarks (scripts/bench/tracing.ts),
 * run as its own process: answers every POST /v1/traces at once and counts
 * the spans. GET /stats → {requests, spans}.
 */
let requests = 0;
let spans = 0;
const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(req) {
    const url = new URL(req.url);
    if (url.pathname === "/stats") return Response.json({ requests, spans });
    const text = await req.text();
    requests++;
    // Each span has one spanId (links and parents name theirs differently: "parentSpanId").
    spans += text.split('"spanId"').length - 1;
    return Response.json({});
  },
});
console.error(`listening on http://127.0.0.1:${server.port}`);
export {};
