/**
 * The delivery benchmark's receiver, run as its own process: answers 200,
 * counts requests, and measures lag from the `sent_at` (ms) in the JSON body
 * to arrival. GET /stats → {count, p50, p99, max, p99FirstHalf, p99SecondHalf}; POST /reset clears.
 * A request to /capture is answered and kept (its method, headers and body):
 * GET /captured returns the last one, so the bare loop can send exactly what
 * a delivery sends.
 * SINK_LATENCY_MS (default 0) holds every counted answer that long: a
 * destination across a network rather than beside the relay.
 */
let count = 0;
let captured: { method: string; headers: Record<string, string>; body: string } | null = null;
let lags: number[] = [];
const decoder = new TextDecoder();
const latencyMs = Number(process.env.SINK_LATENCY_MS ?? 0);

const quantile = (sorted: number[], q: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : 0);

const server = Bun.serve({
  port: Number(process.env.SINK_PORT ?? 0),
  hostname: "127.0.0.1",
  async fetch(req) {
    const url = new URL(req.url);
    if (url.pathname === "/stats") {
      const sorted = [...lags].sort((a, b) => a - b);
      // A backlog that grows shows as lag growing through the run: compare the halves (in arrival order).
      const half = (part: number[]) => quantile([...part].sort((a, b) => a - b), 0.99);
      const mid = Math.floor(lags.length / 2);
      return Response.json({
        count,
        p50: quantile(sorted, 0.5),
        p99: quantile(sorted, 0.99),
        max: sorted[sorted.length - 1] ?? 0,
        samples: sorted.length,
        p99FirstHalf: half(lags.slice(0, mid)),
        p99SecondHalf: half(lags.slice(mid)),
      });
    }
    if (url.pathname === "/captured") return Response.json(captured);
    if (url.pathname === "/capture") {
      captured = { method: req.method, headers: req.headers.toJSON(), body: await req.text() };
      return new Response("ok");
    }
    if (url.pathname === "/reset") {
      count = 0;
      lags = [];
      return Response.json({ ok: true });
    }
    const body = decoder.decode(await req.arrayBuffer());
    count++;
    const at = Date.now();
    const m = /"sent_at":(\d+)/.exec(body);
    if (m) lags.push(at - Number(m[1]));
    if (latencyMs > 0) await Bun.sleep(latencyMs);
    return new Response("ok");
  },
});
console.error(`listening on http://127.0.0.1:${server.port}`);
