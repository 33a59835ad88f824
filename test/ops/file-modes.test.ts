import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { waitFor } from "../helpers/delivery";
import { onPostgres } from "../helpers/database";
import { tempDir } from "../helpers/server";

/**
 * The data dir is the service user's alone (docs/operations.md "File
 * modes"): serve, started under the usual umask 022 outside systemd, makes
 * its dir 0700 and every file in it 0600, and tightens what an older
 * version (or a hand) left readable, saying so in its log. A local-mode
 * CLI that creates the dir does the same. The files are SQLite's: on a
 * PostgreSQL run there is no database file to check.
 */
const ROOT = resolve(import.meta.dirname, "../..");
const ADMIN = { email: "modes@test.local", password: "a long enough password" };
const withoutHookrelayEnv = () => Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("HOOKRELAY_")));
const modeOf = (path: string) => (statSync(path).mode & 0o777).toString(8);

function freePort(): number {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = s.port!;
  s.stop(true);
  return port;
}

/** `sh -c 'umask 022; exec bun cli/main.ts …'`: the umask is the child's own, whatever the test runner's. */
const underUmask022 = (args: string[]) => ["-c", 'umask 022; exec "$0" "$@"', process.execPath, join(ROOT, "cli/main.ts"), ...args];

const roots: string[] = [];
let proc: ChildProcess | null = null;

async function serve(dataDir: string): Promise<{ stdout: () => string; stop: () => Promise<void> }> {
  const port = freePort();
  let out = "";
  const child = spawn("sh", underUmask022(["serve", "--host", "127.0.0.1", "--port", String(port), "--data-dir", dataDir]), {
    cwd: ROOT,
    env: { ...withoutHookrelayEnv(), HOOKRELAY_ADMIN_EMAIL: ADMIN.email, HOOKRELAY_ADMIN_PASSWORD: ADMIN.password, HOOKRELAY_LOG_FORMAT: "json" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  proc = child;
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  await waitFor(async () => child.exitCode === null && (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null))?.ok, {
    what: "serve to start",
    timeoutMs: 30_000,
  });
  // A write, so the WAL and its index exist as they do on any server that has taken a request.
  await fetch(`http://127.0.0.1:${port}/v1/auth/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(ADMIN) });
  return {
    stdout: () => out,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.on("exit", r));
      child.kill("SIGTERM");
      await exited;
      proc = null;
    },
  };
}

/** Every entry under `dir` with its mode, "." for the dir itself. */
function modes(dir: string): Record<string, string> {
  const out: Record<string, string> = { ".": modeOf(dir) };
  const walk = (path: string, rel: string) => {
    for (const name of readdirSync(path)) {
      const full = join(path, name);
      const r = rel ? `${rel}/${name}` : name;
      out[r] = modeOf(full);
      if (statSync(full).isDirectory()) walk(full, r);
    }
  };
  walk(dir, "");
  return out;
}

afterAll(async () => {
  if (proc && proc.exitCode === null) proc.kill("SIGKILL");
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

describe.skipIf(onPostgres)("data dir file modes (SQLite only: the database files are the store)", () => {
  it("serve under umask 022 makes a new data dir 0700 and every file in it 0600; a restart on loosened files tightens them and logs it", async () => {
    const root = tempDir();
    roots.push(root);
    const dataDir = join(root, "data");
    const first = await serve(dataDir);
    try {
      const seen = modes(dataDir);
      for (const name of ["hookrelay.db", "hookrelay.db-wal", "hookrelay.db-shm", "secret.key", "serve.lock", "server.json"]) expect(seen[name], name).toBe("600");
      expect(seen["."]).toBe("700");
      for (const [name, mode] of Object.entries(seen)) expect(mode, name).toMatch(/^[67]00$/);
      expect(first.stdout()).not.toContain("made them private");
    } finally {
      await first.stop();
    }

    // As an older version (or cp, or a package's mkdir) would have left them.
    chmodSync(dataDir, 0o755);
    for (const name of readdirSync(dataDir)) chmodSync(join(dataDir, name), 0o644);
    mkdirSync(join(dataDir, "backups"), { mode: 0o755 });
    chmodSync(join(dataDir, "backups"), 0o755);
    writeFileSync(join(dataDir, "backups", "hookrelay-old.db"), "old backup");
    chmodSync(join(dataDir, "backups", "hookrelay-old.db"), 0o644);

    const second = await serve(dataDir);
    try {
      const seen = modes(dataDir);
      expect(seen["."]).toBe("700");
      expect(seen["backups"]).toBe("700");
      expect(seen["backups/hookrelay-old.db"]).toBe("600");
      expect(seen["hookrelay.db"]).toBe("600");
      for (const [name, mode] of Object.entries(seen)) expect(mode, name).toMatch(/^[67]00$/);
      const line = second
        .stdout()
        .split("\n")
        .find((l) => l.includes("made them private"));
      expect(line, second.stdout()).toBeDefined();
      const logged = JSON.parse(line!);
      expect(logged.files).toEqual(expect.arrayContaining(["hookrelay.db (was 0644)", "secret.key (was 0644)", "backups (was 0755)", "backups/hookrelay-old.db (was 0644)", ". (was 0755)"]));
    } finally {
      await second.stop();
    }
  });

  it("a local-mode CLI that creates the data dir makes it 0700 and its files 0600 too", () => {
    const root = tempDir();
    roots.push(root);
    const dataDir = join(root, "cli-data");
    const res = spawnSync("sh", underUmask022(["keys", "create", "--name", "modes", "--data-dir", dataDir, "--json"]), {
      cwd: ROOT,
      env: withoutHookrelayEnv(),
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(res.status, res.stderr).toBe(0);
    expect(existsSync(join(dataDir, "hookrelay.db"))).toBe(true);
    const seen = modes(dataDir);
    expect(seen["."]).toBe("700");
    expect(seen["hookrelay.db"]).toBe("600");
    for (const [name, mode] of Object.entries(seen)) expect(mode, name).toMatch(/^[67]00$/);
  });
});
