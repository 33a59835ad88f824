import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../helpers/server";
import { itOnly } from "../helpers/database";

const root = join(import.meta.dirname, "../..");
const binary = join(root, "dist/hookrelay");

beforeAll(() => {
  if (!existsSync(binary)) {
    const r = spawnSync("bun", ["scripts/build.ts"], { cwd: root, stdio: "inherit" });
    if (r.status !== 0) throw new Error("build failed");
  }
});

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** An empty working directory with nothing beside the binary's absolute path. */
function emptyDir() {
  const d = tempDir("hookrelay-bin-");
  dirs.push(d);
  return d;
}

function startBinary(cwd: string, args: string[], env: Record<string, string> = {}) {
  const child = spawn(binary, args, { cwd, env: { PATH: process.env.PATH ?? "", HOME: cwd, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  let stdout = "";
  child.stderr.on("data", (d) => (stderr += d));
  child.stdout.on("data", (d) => (stdout += d));
  const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
  return { child, exited, output: () => ({ stderr, stdout }) };
}

async function waitForUrl(get: () => string, timeoutMs = 60_000) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const m = /listening on (http:\/\/\S+)/.exec(get());
    if (m) return m[1]!;
    await Bun.sleep(20);
  }
  throw new Error(`server did not start: ${get()}`);
}

describe("the compiled binary", () => {
  itOnly("sqlite", "starts in an empty directory, migrates a fresh database and answers /healthz", "without a database URL the store is the data dir's SQLite file", async () => {
    const cwd = emptyDir();
    const proc = startBinary(cwd, ["serve", "--port", "0", "--host", "127.0.0.1"]);
    const url = await waitForUrl(() => proc.output().stderr);
    const res = await fetch(`${url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ok" });
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    expect(proc.output().stderr).toMatch(/admin user admin@localhost with password \S+/);
    // The printed password is the one hashed and stored (a first start hashes it while the modules load: src/boot/firstStart.ts).
    const generated = /admin user admin@localhost with password (\S+)/.exec(proc.output().stderr)![1]!;
    const login = (pw: string) => fetch(`${url}/v1/auth/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: "admin@localhost", password: pw }) });
    expect((await login(generated)).status).toBe(200);
    expect((await login(generated + "x")).status).toBe(401);
    expect(existsSync(join(cwd, "data/hookrelay.db"))).toBe(true);
    expect(existsSync(join(cwd, "data/secret.key"))).toBe(true);

    // SIGTERM: stop intake, finish, close the database cleanly (the WAL is checkpointed away).
    proc.child.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
    expect(readdirSync(join(cwd, "data"))).not.toContain("hookrelay.db-wal");

    // A second start on the same data dir prints no new password.
    const again = startBinary(cwd, ["serve", "--port", "0", "--host", "127.0.0.1"]);
    await waitForUrl(() => again.output().stderr);
    expect(again.output().stderr).not.toMatch(/password/);
    again.child.kill("SIGTERM");
    expect(await again.exited).toBe(0);
  });

  itOnly("sqlite", "takes the first start's admin password from HOOKRELAY_ADMIN_PASSWORD_FILE and never prints it", "a fresh SQLite file is a first start", async () => {
    const cwd = emptyDir();
    const password = "from a file, with spaces";
    writeFileSync(join(cwd, "admin-password"), password + "\n", { mode: 0o600 });
    const proc = startBinary(cwd, ["serve", "--port", "0", "--host", "127.0.0.1"], { HOOKRELAY_ADMIN_EMAIL: "ops@example.com", HOOKRELAY_ADMIN_PASSWORD_FILE: join(cwd, "admin-password") });
    try {
      const url = await waitForUrl(() => proc.output().stderr);
      expect(proc.output().stderr).toContain("first start: admin user ops@example.com (password from HOOKRELAY_ADMIN_PASSWORD_FILE)");
      expect(proc.output().stderr + proc.output().stdout).not.toContain(password);
      const login = (pw: string) => fetch(`${url}/v1/auth/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: "ops@example.com", password: pw }) });
      expect((await login(password)).status).toBe(200);
      expect((await login(password + "\n")).status).toBe(401);
    } finally {
      proc.child.kill("SIGTERM");
      await proc.exited;
    }
    const both = startBinary(cwd, ["serve", "--port", "0"], { HOOKRELAY_ADMIN_PASSWORD: "x", HOOKRELAY_ADMIN_PASSWORD_FILE: join(cwd, "admin-password") });
    expect(await both.exited).toBe(1);
    expect(both.output().stderr.trim()).toBe("error: give the admin password or a password file, not both");
    const missing = startBinary(cwd, ["serve", "--port", "0"], { HOOKRELAY_ADMIN_PASSWORD_FILE: join(cwd, "nope") });
    expect(await missing.exited).toBe(1);
    expect(missing.output().stderr.trim()).toBe(`error: admin password file ${join(cwd, "nope")} cannot be read`);
  });

  it("stops with a one-line error and exit code 1 on a bad port", async () => {
    const proc = startBinary(emptyDir(), ["serve", "--port", "abc"]);
    expect(await proc.exited).toBe(1);
    expect(proc.output().stderr.trim()).toBe('error: port must be a whole number, got "abc"');
  });

  it("stops with an error and exit code 1 when the port is taken (its helper threads never keep it alive)", async () => {
    const taken = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("busy") });
    try {
      const proc = startBinary(emptyDir(), ["serve", "--port", String(taken.port), "--host", "127.0.0.1"]);
      const code = await Promise.race([proc.exited, Bun.sleep(8000).then(() => "still running")]);
      if (code === "still running") proc.child.kill("SIGKILL");
      expect(code).toBe(1);
      expect(proc.output().stderr).toMatch(/Failed to start server/);
    } finally {
      taken.stop(true);
    }
  });

  it("stops with a one-line error and exit code 1 on an unwritable data dir", async () => {
    const cwd = emptyDir();
    // A path below a regular file can never be created, even by root (who ignores permissions).
    writeFileSync(join(cwd, "not-a-dir"), "x");
    const bad = join(cwd, "not-a-dir/data");
    const proc = startBinary(cwd, ["serve", "--port", "0", "--data-dir", bad]);
    expect(await proc.exited).toBe(1);
    const lines = proc.output().stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^error: data dir .* is not writable$/);
  });

  it("documents every option with its variable and default in serve --help", () => {
    const r = spawnSync(binary, ["serve", "--help"], { encoding: "utf8" });
    expect(r.status).toBe(0);
    for (const v of ["HOOKRELAY_PORT", "HOOKRELAY_DATA_DIR", "HOOKRELAY_BASE_URL", "HOOKRELAY_SECRET_KEY", "HOOKRELAY_TRUST_PROXY", "HOOKRELAY_MAX_BODY_BYTES", "HOOKRELAY_LOG_LEVEL", "HOOKRELAY_LOG_FORMAT", "HOOKRELAY_RETENTION_DAYS", "HOOKRELAY_ADMIN_EMAIL", "HOOKRELAY_ADMIN_PASSWORD"]) {
      expect(r.stdout).toContain(v);
    }
    expect(r.stdout).toContain("(default: 8080)");
  });
});
