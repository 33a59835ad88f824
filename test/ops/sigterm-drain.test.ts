import { asc } from "drizzle-orm";
import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBinary } from "../cli/helpers";
import { waitFor } from "../helpers/delivery";
import { tempDir } from "../helpers/server";
import { openStoreOf } from "../helpers/database";
import { deliveryAttempts } from "../../src/db/schema";
import { adminKey, api, spawnServe } from "./helpers";

/**
 * SIGTERM on the compiled binary with deliveries in flight to a slow
 * receiver: intake stops at once, deliveries that finish within
 * HOOKRELAY_SHUTDOWN_TIMEOUT_MS are recorded, those that do not are handed
 * back to the queue, and the process exits 0 either way.
 */
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
beforeAll(() => ensureBinary());

/** A receiver that answers each request `delayMs` after it arrives. */
function slowSink(delayMs: () => number) {
  const received: string[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 0,
    async fetch(req) {
      received.push(await req.text());
      await Bun.sleep(delayMs());
      return new Response("ok");
    },
  });
  return { url: `http://127.0.0.1:${server.port}/hook`, received, close: () => server.stop(true) };
}

async function relay(dataDir: string, sinkUrl: string, env: Record<string, string>) {
  const serve = await spawnServe(dataDir, { binary: true, env });
  const key = await adminKey(serve.url);
  const source = (await api(serve.url, key, "POST", "/v1/sources", { name: "drained" })).body.source;
  const destination = (await api(serve.url, key, "POST", "/v1/destinations", { name: "slow", url: sinkUrl, max_retries: 0 })).body.destination;
  const made = await api(serve.url, key, "POST", "/v1/connections", { name: "c", source_id: source.id, destination_id: destination.id });
  expect(made.status).toBe(201);
  const send = async (n: number) => {
    const res = await fetch(`${serve.url}/v1/ingest/${source.id}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ n }) });
    expect(res.status).toBe(200);
  };
  return { serve, key, send };
}

async function attemptStatuses(dataDir: string) {
  const store = await openStoreOf(dataDir);
  try {
    return (await store.db.select({ status: deliveryAttempts.status }).from(deliveryAttempts).orderBy(asc(deliveryAttempts.status))).map((r) => r.status);
  } finally {
    await store.close();
  }
}

describe("SIGTERM drain (compiled binary)", () => {
  it("stops accepting at once, lets in-flight deliveries finish and records them, then exits 0", async () => {
    const sink = slowSink(() => 1500);
    const dataDir = tempDir("hookrelay-drain-");
    dirs.push(dataDir);
    try {
      const { serve, send } = await relay(dataDir, sink.url, { HOOKRELAY_SHUTDOWN_TIMEOUT_MS: "10000" });
      await Promise.all([1, 2, 3].map(send));
      await waitFor(async () => sink.received.length === 3, { what: "three deliveries in flight" });

      const signalled = performance.now();
      const exited = serve.stop();
      // Intake stops at once: the listening socket is closed while the deliveries are still out.
      await waitFor(
        async () => {
          try {
            await fetch(`${serve.url}/healthz`);
            return false;
          } catch {
            return true;
          }
        },
        { what: "the port to close", timeoutMs: 1000, intervalMs: 10 },
      );
      expect(await exited).toBe(0);
      const took = performance.now() - signalled;
      expect(took).toBeGreaterThan(1000);
      expect(took).toBeLessThan(8000);
      expect(serve.output()).toContain("SIGTERM: stopping intake, finishing in-flight work");
      expect(await attemptStatuses(dataDir)).toEqual(["success", "success", "success"]);
      expect(sink.received).toHaveLength(3);
    } finally {
      sink.close();
    }
  });

  it("hands deliveries still in flight at HOOKRELAY_SHUTDOWN_TIMEOUT_MS back to the queue, exits 0, and sends them after the restart", async () => {
    let delay = 60_000;
    const sink = slowSink(() => delay);
    const dataDir = tempDir("hookrelay-drain-");
    dirs.push(dataDir);
    try {
      const { serve, send } = await relay(dataDir, sink.url, { HOOKRELAY_SHUTDOWN_TIMEOUT_MS: "1000" });
      await Promise.all([1, 2].map(send));
      await waitFor(async () => sink.received.length === 2, { what: "two deliveries in flight" });

      const signalled = performance.now();
      expect(await serve.stop()).toBe(0);
      const took = performance.now() - signalled;
      expect(took).toBeGreaterThan(900);
      expect(took).toBeLessThan(5000);
      expect(serve.output()).toMatch(/released|handed back/);
      expect(await attemptStatuses(dataDir)).toEqual(["queued", "queued"]);

      delay = 0;
      const again = await spawnServe(dataDir, { binary: true });
      try {
        await waitFor(async () => sink.received.length === 4, { what: "the released deliveries sent again" });
        await waitFor(async () => (await attemptStatuses(dataDir)).join() === "success,success", { what: "them recorded" });
      } finally {
        expect(await again.stop()).toBe(0);
      }
    } finally {
      sink.close();
    }
  });
});
