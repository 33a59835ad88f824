import { spawn, type ChildProcess } from "node:child_process";
import { rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../helpers/delivery";
import { tempDir } from "../helpers/server";
import { dropStore, storeEnv } from "../helpers/database";

/**
 * `serve` as an operator runs it under a supervisor: stdout is a pipe, so
 * every line on it is JSON (one format per stream), and failed deliveries
 * are logged at warn: each retried failure, and each arrival in the DLQ.
 */
const ROOT = resolve(import.meta.dirname, "../..");
const ADMIN = { email: "logs@test.local", password: "a long enough password" };

function freePort(): number {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = s.port!;
  s.stop(true);
  return port;
}

const withoutHookrelayEnv = () => Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("HOOKRELAY_")));

let proc: ChildProcess;
let stdout = "";
let base: string;
const dataDir = tempDir();

beforeAll(async () => {
  const port = freePort();
  base = `http://127.0.0.1:${port}`;
  proc = spawn(process.execPath, [join(ROOT, "cli/main.ts"), "serve", "--host", "127.0.0.1", "--port", String(port), "--data-dir", dataDir], {
    cwd: ROOT,
    // The default log format (auto): what an operator gets.
    env: { ...withoutHookrelayEnv(), ...(await storeEnv(dataDir)), HOOKRELAY_ADMIN_EMAIL: ADMIN.email, HOOKRELAY_ADMIN_PASSWORD: ADMIN.password },
    stdio: ["ignore", "pipe", "pipe"],
  });
  proc.stdout!.on("data", (d) => (stdout += d));
  await waitFor(async () => (await fetch(`${base}/healthz`).catch(() => null))?.ok, { what: "serve to start", timeoutMs: 20_000 });
});
afterAll(async () => {
  if (proc.exitCode === null) {
    const exited = new Promise((r) => proc.on("exit", r));
    proc.kill("SIGTERM");
    await exited;
  }
  rmSync(dataDir, { recursive: true, force: true });
  await dropStore(dataDir);
});

async function api(method: string, path: string, headers: Record<string, string>, body?: unknown) {
  const res = await fetch(base + path, { method, headers: { ...headers, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as any };
}

describe("serve's log on a pipe", () => {
  it("is JSON lines only, with delivery failures and DLQ arrivals at warn", async () => {
    const login = await fetch(`${base}/v1/auth/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(ADMIN) });
    const session = { cookie: login.headers.getSetCookie().map((c) => c.split(";")[0]).join("; "), origin: base };
    const source = await api("POST", "/v1/sources", session, { name: "logged" });
    // Nothing listens there: refused, retried once after a second, then the DLQ.
    const destination = await api("POST", "/v1/destinations", session, { name: "down", url: `http://127.0.0.1:${freePort()}/`, max_retries: 1, retry_strategy: "linear", retry_interval_seconds: 1 });
    await api("POST", "/v1/connections", session, { name: "c", source_id: source.body.source.id, destination_id: destination.body.destination.id });
    const ingested = await fetch(`${base}/v1/ingest/${source.body.source.id}`, { method: "POST", body: "{}" });
    const eventId = ((await ingested.json()) as { event_id: string }).event_id;

    const lines = () => stdout.split("\n").filter((l) => l !== "");
    const parsed = () => lines().map((l) => JSON.parse(l) as Record<string, unknown>);
    await waitFor(async () => parsed().some((l) => l.msg === "delivery failed and moved to the DLQ"), { what: "the DLQ line", timeoutMs: 15_000 });

    for (const line of lines()) expect(() => JSON.parse(line), line).not.toThrow();
    const failures = parsed().filter((l) => l.event_id === eventId);
    expect(failures).toEqual([
      expect.objectContaining({ level: "warn", msg: "delivery failed; retrying", attempt_number: 1, error: "connection_error", error_detail: "connection refused (ECONNREFUSED)", next_retry_at: expect.any(String), time: expect.any(String) }),
      expect.objectContaining({ level: "warn", msg: "delivery failed and moved to the DLQ", attempt_number: 2, trigger_type: "retry", destination_id: destination.body.destination.id }),
    ]);
  });
});
