import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config/config";
import type { Clock } from "../../src/core/clock";
import { silentLogger, type Logger } from "../../src/observability/logger";
import { startServer, type RunningServer, type StartOptions } from "../../src/server";
import { dropStore, storeEnv } from "./database";

export const ADMIN = { email: "admin@test.local", password: "correct horse battery staple" };

export function tempDir(prefix = "hookrelay-test-") {
  return mkdtempSync(join(tmpdir(), prefix));
}

export interface TestServer extends RunningServer {
  dataDir: string;
  /**
   * What points another process (a CLI in local mode, a second serve) at
   * this server's store: HOOKRELAY_DATA_DIR, and on PostgreSQL runs also
   * HOOKRELAY_DATABASE_URL and HOOKRELAY_SECRET_KEY.
   */
  storeEnv: Record<string, string>;
  /** The same as CLI flags: `--data-dir DIR`, and on PostgreSQL runs `--database-url URL`. */
  storeArgs: string[];
  /** fetch against the server: path relative to its root. */
  request(path: string, init?: RequestInit): Promise<Response>;
  /** Logs in as the admin; returns headers (cookie + same-origin Origin) for session requests. */
  session(): Promise<Record<string, string>>;
  /** Creates an API key through the session and returns it. */
  apiKey(scopes?: "*" | "read"): Promise<string>;
  close(): Promise<void>;
}

/**
 * A real server on a free port over the run's store (test/helpers/database.ts):
 * a real SQLite file in a temp dir, or on PostgreSQL runs that dir's own
 * database (the same one again when a test restarts on the same dir). With
 * a clock, time is the test's to move (docs/decisions.md D16).
 */
export async function startTestServer(
  env: Record<string, string> = {},
  dataDir = tempDir(),
  clock?: Clock,
  logger: Logger = silentLogger,
  start: Pick<StartOptions, "pollMs"> = {},
): Promise<TestServer> {
  const store = await storeEnv(dataDir);
  const config = loadConfig({}, {
    HOOKRELAY_PORT: "0",
    HOOKRELAY_HOST: "127.0.0.1",
    ...store,
    HOOKRELAY_ADMIN_EMAIL: ADMIN.email,
    HOOKRELAY_ADMIN_PASSWORD: ADMIN.password,
    HOOKRELAY_SHUTDOWN_TIMEOUT_MS: "2000",
    ...env,
  });
  const server = await startServer(config, { logger, clock, ...start });
  const request = (path: string, init?: RequestInit) => fetch(server.url + path, init);
  const session = async () => {
    const res = await request("/v1/auth/login", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(ADMIN) });
    if (res.status !== 200) throw new Error(`login failed: ${res.status}`);
    const cookie = res.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
    return { cookie, origin: server.url };
  };
  return {
    ...server,
    dataDir,
    storeEnv: store,
    storeArgs: store.HOOKRELAY_DATABASE_URL ? ["--data-dir", dataDir, "--database-url", store.HOOKRELAY_DATABASE_URL] : ["--data-dir", dataDir],
    request,
    session,
    async apiKey(scopes = "*") {
      const headers = await session();
      const res = await request("/v1/auth/api-keys", { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify({ name: "test", scopes }) });
      const body = (await res.json()) as { key: string };
      return body.key;
    },
    async close() {
      await server.stop();
      await dropStore(dataDir);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** JSON request helper: returns status and parsed body. */
export async function call(server: TestServer, method: string, path: string, opts: { key?: string; headers?: Record<string, string>; body?: unknown } = {}) {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.key) headers["x-api-key"] = opts.key;
  if (opts.body !== undefined) headers["content-type"] = "application/json";
  const res = await server.request(path, { method, headers, body: opts.body === undefined ? undefined : typeof opts.body === "string" ? opts.body : JSON.stringify(opts.body) });
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.status, body, headers: res.headers };
}
