import { rmSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { NODE_TIMEOUT_MS } from "../../src/core/node";
import { waitFor } from "../helpers/delivery";
import { tempDir } from "../helpers/server";
import { adminKey, api, spawnServe, type ServeProcess } from "../ops/helpers";

/**
 * Ordered delivery across kill -9 (docs/delivery.md, "Ordered delivery"): a
 * serve process dies while a key's head is at the receiver; the head stays
 * claimed (its key blocked) until the claim is released (at the next start
 * on SQLite, once the dead node's heartbeat is late on PostgreSQL), then the
 * head is sent again, and only after it the rest of the key.
 */
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe("ordered delivery and kill -9", () => {
  it("re-sends the head the dead process had in flight, never the next of its key before it", async () => {
    const arrivals: string[] = [];
    let hang = true;
    const sink = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      idleTimeout: 0,
      async fetch(req) {
        const { seq } = (await req.json()) as { seq: string };
        arrivals.push(seq);
        while (hang && seq === "K1") await Bun.sleep(20);
        return new Response("ok");
      },
    });
    const dataDir = tempDir("hookrelay-ordered-kill-");
    dirs.push(dataDir);
    let serve: ServeProcess | undefined;
    try {
      serve = await spawnServe(dataDir);
      const key = await adminKey(serve.url);
      const source = (await api(serve.url, key, "POST", "/v1/sources", { name: "orders" })).body.source;
      const destination = (await api(serve.url, key, "POST", "/v1/destinations", { name: "sink", url: `http://127.0.0.1:${sink.port}/hook` })).body.destination;
      const made = await api(serve.url, key, "POST", "/v1/connections", { name: "c", source_id: source.id, destination_id: destination.id, ordered: true, ordering_key: "body.k" });
      expect(made.status).toBe(201);
      const send = async (body: Record<string, string>) => {
        const res = await fetch(`${serve!.url}/v1/ingest/${source.id}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
        expect(res.status).toBe(200);
        // A millisecond apart: the order received is the order sent.
        await Bun.sleep(2);
      };
      for (const seq of ["K1", "K2", "K3", "L1"]) await send({ k: seq[0]!, seq });
      await waitFor(async () => arrivals.includes("K1") && arrivals.includes("L1"), { what: "K1 in flight, L1 delivered" });
      // Time for K2 to go out, were it not held behind its head.
      await Bun.sleep(300);
      expect(arrivals.filter((s) => s.startsWith("K"))).toEqual(["K1"]);

      process.kill(serve.pid, "SIGKILL");
      await serve.exited;
      hang = false;
      // The claim of the dead process outlives it: a new process (SQLite: the next start; PostgreSQL: a node
      // whose reaper finds the dead node's heartbeat late) hands it back and sends K1 again, then K2 and K3.
      serve = await spawnServe(dataDir);
      await waitFor(async () => arrivals.filter((s) => s.startsWith("K")).length === 4, { timeoutMs: NODE_TIMEOUT_MS + 30_000, intervalMs: 100, what: "K1 again, then K2 and K3" });
      await Bun.sleep(200);
      expect(arrivals.filter((s) => s.startsWith("K"))).toEqual(["K1", "K1", "K2", "K3"]);
      expect(arrivals.filter((s) => s === "L1")).toHaveLength(1);
    } finally {
      hang = false;
      if (serve && (await Promise.race([serve.exited.then(() => true), Bun.sleep(0).then(() => false)])) === false) await serve.stop();
      sink.stop(true);
    }
  }, NODE_TIMEOUT_MS + 90_000);
});
