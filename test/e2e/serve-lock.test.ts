/**
 * One `serve` per data dir, with the compiled binary: a second server on
 * the same dir refuses to start and names the first one's PID; a server
 * killed with SIGKILL leaves nothing that blocks the next start; local-mode
 * commands (which take no lock) print ingest URLs from the base URL the
 * server recorded in the data dir.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INFO_FILE, LOCK_FILE } from "../../src/runtime/serverLock";
import { cli, cliEnv } from "../cli/helpers";
import { tempDir } from "../helpers/server";
import { ADMIN, BIN, ensureBinary, freePort } from "./helpers";
import { describeOnly, storeArgs, storeEnv } from "../helpers/database";

beforeAll(() => ensureBinary(), 120_000);

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function dataDir() {
  const d = tempDir("hookrelay-lock-");
  dirs.push(d);
  return d;
}

interface Serve {
  child: ChildProcess;
  url: string;
  stderr(): string;
  exited: Promise<number | null>;
}

/** `hookrelay serve` on a data dir; resolves when it prints its listening line, or when it exits first. */
async function serve(dir: string, env: Record<string, string> = {}): Promise<Serve> {
  const port = await freePort();
  const child = spawn(BIN, ["serve", "--port", String(port), "--host", "127.0.0.1", "--data-dir", dir], {
    cwd: dir,
    stdio: ["ignore", "pipe", "pipe"],
    env: cliEnv({ HOOKRELAY_ADMIN_EMAIL: ADMIN.email, HOOKRELAY_ADMIN_PASSWORD: ADMIN.password, HOOKRELAY_SHUTDOWN_TIMEOUT_MS: "2000", ...(await storeEnv(dir)), ...env }),
  });
  children.push(child);
  let stderr = "";
  child.stderr!.on("data", (d) => (stderr += d));
  child.stdout!.resume();
  const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
  let gone = false;
  void exited.then(() => (gone = true));
  const deadline = Date.now() + 60_000;
  while (!/listening on/.test(stderr) && !gone) {
    if (Date.now() > deadline) throw new Error(`serve did not start:\n${stderr}`);
    await Bun.sleep(20);
  }
  return { child, url: `http://127.0.0.1:${port}`, stderr: () => stderr, exited };
}

describeOnly("sqlite", "serve holds a lock on its data dir", "serve.lock guards the data dir's SQLite file", () => {
  it("refuses a second server on the same dir with one line naming the first one's PID, and exits 1", async () => {
    const dir = dataDir();
    const first = await serve(dir);
    expect(existsSync(join(dir, LOCK_FILE))).toBe(true);

    const second = await serve(dir);
    expect(await second.exited).toBe(1);
    const lines = second.stderr().trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toBe(`error: another hookrelay serve (PID ${first.child.pid}) is running on data dir ${dir}; stop it first, or give this one another --data-dir`);
    // The first server never noticed.
    expect((await fetch(`${first.url}/readyz`)).status).toBe(200);

    // Local-mode commands take no lock: they work beside the server.
    const local = await cli(["sources", "list", "--json", "--data-dir", dir], { env: cliEnv(), binary: true });
    expect(local.code, local.stderr).toBe(0);

    // A clean stop releases the lock: the next server starts.
    first.child.kill("SIGTERM");
    expect(await first.exited).toBe(0);
    const third = await serve(dir);
    expect((await fetch(`${third.url}/healthz`)).status).toBe(200);
    third.child.kill("SIGTERM");
    expect(await third.exited).toBe(0);
  }, 60_000);

  it("is not held by a server killed with SIGKILL", async () => {
    const dir = dataDir();
    const killed = await serve(dir);
    killed.child.kill("SIGKILL");
    await killed.exited;
    // server.json still names the dead server; the lock died with it.
    expect(JSON.parse(readFileSync(join(dir, INFO_FILE), "utf8")).pid).toBe(killed.child.pid);

    const next = await serve(dir);
    expect(next.stderr()).toMatch(/listening on/);
    expect((await fetch(`${next.url}/readyz`)).status).toBe(200);
    next.child.kill("SIGTERM");
    expect(await next.exited).toBe(0);
  }, 60_000);
});

describe("local mode prints ingest URLs from the server's base URL", () => {
  it("uses the base URL serve recorded in the data dir, while it runs and after it stopped", async () => {
    const dir = dataDir();
    const server = await serve(dir, { HOOKRELAY_BASE_URL: "https://hooks.example.test" });
    const info = JSON.parse(readFileSync(join(dir, INFO_FILE), "utf8"));
    expect(info).toEqual({ pid: server.child.pid, base_url: "https://hooks.example.test", started_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });

    const created = await cli(["sources", "create", "--name", "shop", "--json", ...(await storeArgs(dir))], { env: cliEnv(), binary: true });
    expect(created.code, created.stderr).toBe(0);
    const id = created.json().source.id;
    const listed = await cli(["sources", "list", "--json", ...(await storeArgs(dir))], { env: cliEnv(), binary: true });
    expect(listed.json().sources.map((s: { ingest_url: string }) => s.ingest_url)).toEqual([`https://hooks.example.test/v1/ingest/${id}`]);

    server.child.kill("SIGTERM");
    expect(await server.exited).toBe(0);
    const after = await cli(["sources", "list", "--json", ...(await storeArgs(dir))], { env: cliEnv(), binary: true });
    expect(after.json().sources[0].ingest_url).toBe(`https://hooks.example.test/v1/ingest/${id}`);
    // HOOKRELAY_BASE_URL in the CLI's own environment still wins.
    const own = await cli(["sources", "list", "--json", ...(await storeArgs(dir))], { env: cliEnv({ HOOKRELAY_BASE_URL: "https://other.example.test" }), binary: true });
    expect(own.json().sources[0].ingest_url).toBe(`https://other.example.test/v1/ingest/${id}`);
  }, 60_000);

  it("records http://localhost:<port> when serve has no base URL", async () => {
    const dir = dataDir();
    const server = await serve(dir);
    const port = new URL(server.url).port;
    expect(JSON.parse(readFileSync(join(dir, INFO_FILE), "utf8")).base_url).toBe(`http://localhost:${port}`);
    const created = await cli(["sources", "create", "--name", "s", "--json", ...(await storeArgs(dir))], { env: cliEnv(), binary: true });
    expect(created.json().source.ingest_url).toMatch(new RegExp(`^http://localhost:${port}/v1/ingest/src_`));
    server.child.kill("SIGTERM");
    await server.exited;
  }, 60_000);
});
