import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { TestServer } from "../helpers/server";
import { useServer } from "../helpers/fixture";

/**
 * scripts/packaging/grafana-dashboard.json is imported as it is: every
 * metric its queries name must be one GET /metrics exposes, or its panel
 * stays empty without a word.
 */
const dashboard = JSON.parse(readFileSync(join(import.meta.dirname, "../../scripts/packaging/grafana-dashboard.json"), "utf8"));

function queries(): string[] {
  const out: string[] = [];
  const walk = (v: unknown) => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === "object") {
      for (const [k, inner] of Object.entries(v)) {
        if ((k === "expr" || k === "query") && typeof inner === "string") out.push(inner);
        else walk(inner);
      }
    }
  };
  walk(dashboard);
  return out;
}

/** Names /metrics exposes: each declared metric, and a histogram's _bucket, _sum and _count series. */
function exposedNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(m[1]!);
    if (m[2] === "histogram") for (const suffix of ["_bucket", "_sum", "_count"]) names.add(m[1]! + suffix);
  }
  return names;
}

let server: TestServer;
useServer({}, (s) => ({ server } = s));

describe("the Grafana dashboard", () => {
  it("names only metrics GET /metrics exposes, and covers ingest, delivery, queue, retries, DLQ and issues", async () => {
    const res = await server.request("/metrics");
    expect(res.status).toBe(200);
    const exposed = exposedNames(await res.text());
    const named = new Set(queries().flatMap((q) => [...q.matchAll(/\bhookrelay_[a-z_]+\b/g)].map((m) => m[0])));
    expect(named.size).toBeGreaterThan(10);
    const missing = [...named].filter((n) => !exposed.has(n));
    expect(missing).toEqual([]);
    for (const needed of ["hookrelay_ingest_requests_total", "hookrelay_deliveries_total", "hookrelay_delivery_duration_seconds_bucket", "hookrelay_delivery_queue_depth", "hookrelay_delivery_dlq_total", "hookrelay_delivery_retries_scheduled_total", "hookrelay_open_issues"]) {
      expect(named).toContain(needed);
    }
  });

  it("asks for its Prometheus data source on import: every panel and query uses the ${datasource} variable", () => {
    expect(dashboard.templating.list[0]).toMatchObject({ name: "datasource", type: "datasource", query: "prometheus" });
    for (const panel of dashboard.panels) {
      expect(panel.datasource.uid).toBe("${datasource}");
      for (const target of panel.targets) expect(target.datasource.uid).toBe("${datasource}");
    }
  });
});
