import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dropStore } from "../helpers/database";
import { ensureBinary } from "../cli/helpers";
import { waitFor } from "../helpers/delivery";
import { startOtlpReceiver, type OtlpReceiver } from "../helpers/otlpReceiver";
import { tempDir } from "../helpers/server";
import { adminKey, api, spawnServe, type ServeProcess } from "../ops/helpers";

/**
 * Spans are written as OTLP JSON and sent with Bun's fetch
 * (src/observability/spanQueue.ts): the binary, not only the sources,
 * must reach the collector.
 */
let receiver: OtlpReceiver;
let serve: ServeProcess;
const dataDir = tempDir();
beforeAll(async () => {
  await ensureBinary();
  receiver = startOtlpReceiver();
  serve = await spawnServe(dataDir, { binary: true, env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_TRACES_SAMPLER: "always_on", HOOKRELAY_ADMIN_EMAIL: "admin@localhost" } });
}, 120_000);
afterAll(async () => {
  await serve?.stop();
  receiver?.close();
  await dropStore(dataDir);
  rmSync(dataDir, { recursive: true, force: true });
});

describe("the compiled binary with tracing on", () => {
  it("exports the ingest request's SERVER span to the collector", async () => {
    const key = await adminKey(serve.url);
    const source = (await api(serve.url, key, "POST", "/v1/sources", { name: "traced" })).body.source;
    const res = await fetch(`${serve.url}/v1/ingest/${source.id}`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"a":1}' });
    expect(res.status).toBe(200);
    const eventId = ((await res.json()) as { event_id: string }).event_id;
    const span = await waitFor(async () => receiver.spans.find((s) => s.attributes["hookrelay.event.id"] === eventId), { what: "the ingest span at the collector" });
    expect(span.name).toBe("POST /v1/ingest/{source}");
    expect(span.attributes).toMatchObject({ "http.route": "/v1/ingest/{source}", "http.response.status_code": 200, "hookrelay.source.id": source.id });
    expect(span.service).toBe("hookrelay");
  }, 60_000);
});
