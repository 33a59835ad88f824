import { join } from "node:path";
import { storeEnv } from "../helpers/database";

const root = join(import.meta.dirname, "../..");
export const BINARY = join(root, "dist/hookrelay");

export interface ServeProcess {
  url: string;
  pid: number;
  /** Everything it printed so far. */
  output(): string;
  /** Resolves with the exit code. */
  exited: Promise<number>;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number>;
}

/**
 * `hookrelay serve` as a process of its own (from source, or the compiled
 * binary), on a free port: for what only a real process shows (its locks
 * released when it exits, signals, exit codes).
 */
export async function spawnServe(dataDir: string, opts: { env?: Record<string, string>; binary?: boolean; command?: string[]; timeoutMs?: number } = {}): Promise<ServeProcess> {
  const cmd = opts.command ?? (opts.binary ? [BINARY] : [process.execPath, join(root, "cli/main.ts")]);
  const proc = Bun.spawn([...cmd, "serve", "--port", "0", "--host", "127.0.0.1", "--data-dir", dataDir], {
    cwd: dataDir,
    // The data dir's store: on PostgreSQL runs also that dir's own database (test/helpers/database.ts).
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dataDir, HOOKRELAY_ADMIN_PASSWORD: "ops test password 123", ...(await storeEnv(dataDir)), ...opts.env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  let out = "";
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) out += decoder.decode(chunk, { stream: true });
  };
  void pump(proc.stdout);
  void pump(proc.stderr);
  const until = Date.now() + (opts.timeoutMs ?? 60_000);
  let url: string | undefined;
  while (!url) {
    url = /listening on (http:\/\/\S+)/.exec(out)?.[1];
    if (url) break;
    if (proc.exitCode !== null) throw new Error(`serve exited with ${proc.exitCode} before listening:\n${out}`);
    if (Date.now() > until) {
      proc.kill("SIGKILL");
      throw new Error(`serve did not start:\n${out}`);
    }
    await Bun.sleep(20);
  }
  return {
    url,
    pid: proc.pid,
    output: () => out,
    exited: proc.exited,
    async stop() {
      proc.kill("SIGTERM");
      return proc.exited;
    },
  };
}

/** Logs in as the admin spawnServe creates and makes an API key with scope *. */
export async function adminKey(url: string): Promise<string> {
  const login = await fetch(`${url}/v1/auth/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: "admin@localhost", password: "ops test password 123" }) });
  if (login.status !== 200) throw new Error(`login failed: ${login.status}`);
  const cookie = login.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
  const res = await fetch(`${url}/v1/auth/api-keys`, { method: "POST", headers: { cookie, origin: url, "content-type": "application/json" }, body: JSON.stringify({ name: "ops", scopes: "*" }) });
  if (res.status !== 201) throw new Error(`key: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { key: string }).key;
}

/** JSON over HTTP with an API key: status and parsed body. */
export async function api(url: string, key: string, method: string, path: string, body?: unknown) {
  const res = await fetch(url + path, { method, headers: { "x-api-key": key, ...(body === undefined ? {} : { "content-type": "application/json" }) }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  let parsed: any = text;
  try {
    parsed = JSON.parse(text);
  } catch {}
  return { status: res.status, body: parsed };
}
