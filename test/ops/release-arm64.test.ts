import { createHash } from "node:crypto";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pkg from "../../package.json" with { type: "json" };
import { waitFor } from "../helpers/delivery";
import { tempDir } from "../helpers/server";
import { adminKey, api, spawnServe } from "./helpers";
import { onPostgres } from "../helpers/database";

/**
 * `npm run release`, and its arm64 binary run under qemu-user on a fresh
 * data dir: what a Raspberry Pi would do on first start. qemu-user and the
 * arm64 C library come from scripts/test-prereqs.sh (`npm test`'s first step).
 */
const root = join(import.meta.dirname, "../..");
const dist = join(root, "dist");
const arm64 = join(dist, `hookrelay-${pkg.version}-linux-arm64`);
const x64 = join(dist, `hookrelay-${pkg.version}-linux-x64`);
const qemu = ["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"];

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

beforeAll(async () => {
  if (!Bun.which("qemu-aarch64") || !existsSync("/usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1")) {
    throw new Error("qemu-user and libc6-arm64-cross are missing: run `bash scripts/test-prereqs.sh` (npm test does)");
  }
  const proc = Bun.spawn([process.execPath, join(root, "scripts/release.ts")], { cwd: root, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`npm run release failed (${code}):\n${out}\n${err}`);
}, 180_000);

describe("npm run release", () => {
  it("writes the linux-x64 and linux-arm64 binaries and a SHA256SUMS that checks them", () => {
    const sums = readFileSync(join(dist, "SHA256SUMS"), "utf8").trim().split("\n");
    expect(sums.map((l) => l.split("  ")[1])).toEqual([`hookrelay-${pkg.version}-linux-x64`, `hookrelay-${pkg.version}-linux-arm64`]);
    for (const [i, file] of [x64, arm64].entries()) {
      expect(sums[i]!.split("  ")[0]).toBe(createHash("sha256").update(readFileSync(file)).digest("hex"));
    }
    // ELF machine field: 0x3e x86-64, 0xb7 AArch64.
    expect(readFileSync(x64).readUInt16LE(18)).toBe(0x3e);
    expect(readFileSync(arm64).readUInt16LE(18)).toBe(0xb7);
  });
});

describe("the arm64 binary under qemu-user", () => {
  it("migrates a fresh data dir, answers /healthz, stores a webhook and delivers it", async () => {
    const version = Bun.spawnSync([...qemu, arm64, "--version"]);
    expect(version.stdout.toString().trim()).toMatch(new RegExp(`^hookrelay ${pkg.version.replaceAll(".", "\\.")}, schema \\d+ \\([0-9a-f]{12}\\)$`));

    const received: string[] = [];
    const sink = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      async fetch(req) {
        received.push(await req.text());
        return new Response("ok");
      },
    });
    const dataDir = tempDir("hookrelay-arm64-");
    dirs.push(dataDir);
    // Emulated, start-up is several times slower than native.
    const serve = await spawnServe(dataDir, { command: [...qemu, arm64], timeoutMs: 90_000 });
    try {
      // On PostgreSQL runs the binary works on the dir's database instead (spawnServe passes it).
      if (!onPostgres) expect(existsSync(join(dataDir, "hookrelay.db"))).toBe(true);
      const health = await fetch(`${serve.url}/healthz`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: "ok" });

      const key = await adminKey(serve.url);
      const source = (await api(serve.url, key, "POST", "/v1/sources", { name: "pi" })).body.source;
      const destination = (await api(serve.url, key, "POST", "/v1/destinations", { name: "sink", url: `http://127.0.0.1:${sink.port}/hook` })).body.destination;
      expect((await api(serve.url, key, "POST", "/v1/connections", { name: "c", source_id: source.id, destination_id: destination.id })).status).toBe(201);
      const ingested = await fetch(`${serve.url}/v1/ingest/${source.id}`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"hello":"arm64"}' });
      expect(ingested.status).toBe(200);
      const { event_id } = (await ingested.json()) as { event_id: string };

      await waitFor(async () => received.length === 1, { what: "the delivery", timeoutMs: 30_000 });
      expect(received[0]).toBe('{"hello":"arm64"}');
      const event = await waitFor(async () => {
        const res = await api(serve.url, key, "GET", `/v1/events/${event_id}`);
        return res.body.status === "delivered" ? res.body : null;
      }, { what: "the event delivered", timeoutMs: 30_000 });
      expect(event.id).toBe(event_id);
    } finally {
      expect(await serve.stop()).toBe(0);
      sink.stop(true);
    }
  }, 180_000);
});
