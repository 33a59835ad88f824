import type { TestServer } from "./server";

/**
 * A server's /metrics text without the `node` label every series carries
 * (docs/scaling.md): `x_total{node="node_…",outcome="ok"} 1` reads as
 * `x_total{outcome="ok"} 1`, and `x{node="node_…"} 1` as `x 1`.
 */
export async function scrapeMetrics(server: Pick<TestServer, "request">): Promise<string> {
  const text = await (await server.request("/metrics")).text();
  return text
    .replace(/node="node_[0-9a-f]+",?/g, "")
    .replace(/,\}/g, "}")
    .replace(/\{\}/g, "");
}
