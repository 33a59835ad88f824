import { existsSync, readdirSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import { tempDir, type TestServer } from "../helpers/server";
import { onPostgres, TEST_SECRET_KEY } from "../helpers/database";

const root = join(import.meta.dirname, "../..");
export const BINARY = join(root, "dist/hookrelay");

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON (throws with the output when it is not exactly one JSON value). */
  json(): any;
  /** stderr parsed as JSON (the error body in --json mode). */
  errorJson(): any;
}

/**
 * A clean environment: no HOOKRELAY_* or colour variables from the caller, its
 * own config dir. On PostgreSQL runs, the suite's HOOKRELAY_SECRET_KEY, as an
 * operator sets it beside --database-url for local mode.
 */
export function cliEnv(extra: Record<string, string> = {}) {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || k.startsWith("HOOKRELAY_") || k === "NO_COLOR" || k === "FORCE_COLOR") continue;
    env[k] = v;
  }
  if (onPostgres) env.HOOKRELAY_SECRET_KEY = TEST_SECRET_KEY;
  return { ...env, XDG_CONFIG_HOME: tempDir("hookrelay-cli-config-"), ...extra };
}

/**
 * What points a CLI at one running server in each mode: remote (its URL and
 * an API key) and local (its store, with the server's base URL so that
 * ingest_url is the same in both).
 */
export function modeEnvs(server: TestServer, key: string) {
  const base = cliEnv();
  return {
    remoteEnv: { ...base, HOOKRELAY_URL: server.url, HOOKRELAY_API_KEY: key },
    localEnv: { ...base, ...server.storeEnv, HOOKRELAY_BASE_URL: server.deps.settings.baseUrl },
  };
}

/** The command's JSON output; a throw with what it printed when it did not exit 0. */
export function ok(r: CliResult) {
  if (r.code !== 0) throw new Error(`exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r.json();
}
/** The same command in remote and local mode printed the same JSON: that JSON. */
export function same([r, l]: CliResult[]) {
  const a = ok(r!);
  expect(ok(l!)).toEqual(a);
  return a;
}
/** Exit 1 with the API's error body on stderr, the same in both modes. */
export function refused([r, l]: CliResult[], code: string) {
  for (const res of [r!, l!]) {
    expect(res.code, res.stderr).toBe(1);
    expect(res.stdout).toBe("");
  }
  expect(r!.errorJson()).toEqual(l!.errorJson());
  expect(r!.errorJson().error.code).toBe(code);
  return r!.errorJson().error;
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(p) : statSync(p).mtimeMs);
  }
  return newest;
}

let binaryIsCurrent: boolean | undefined;
/**
 * Whether dist/hookrelay was built after the last change to what it is built
 * from (`npm test` builds it first). It then runs the same code as `bun
 * cli/main.ts` at a fraction of the cost: nothing to load and transpile
 * (bytecode), several hundred CLI processes in a run. Checked once per file.
 */
function currentBinary(): boolean {
  binaryIsCurrent ??= existsSync(BINARY) && statSync(BINARY).mtimeMs > Math.max(...["cli", "src", "ui"].map((d) => newestMtime(join(root, d))), statSync(join(root, "package.json")).mtimeMs);
  return binaryIsCurrent;
}

/**
 * The command line of one CLI process: the compiled binary when asked for,
 * or (`binary` unset) when it is current; otherwise from source (`bun
 * cli/main.ts`), so a changed source is what a test runs before any build.
 */
function cliCommand(args: string[], binary: boolean | undefined): { cmd: string[]; cwd: string } {
  if (binary) return { cmd: [BINARY, ...args], cwd: tmpdir() };
  if (binary === undefined && currentBinary()) return { cmd: [BINARY, ...args], cwd: root };
  return { cmd: [process.execPath, join(root, "cli/main.ts"), ...args], cwd: root };
}

/**
 * Runs the CLI as a real process: the compiled binary (`binary: true`), from
 * source (`binary: false`), or unset: the binary when it is current, else
 * from source (cliCommand).
 */
export async function cli(args: string[], opts: { env: Record<string, string>; stdin?: string; binary?: boolean }): Promise<CliResult> {
  const { cmd, cwd } = cliCommand(args, opts.binary);
  const proc = Bun.spawn(cmd, { cwd, env: opts.env, stdin: opts.stdin === undefined ? "ignore" : new TextEncoder().encode(opts.stdin), stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  const parse = (text: string, what: string) => {
    try {
      return JSON.parse(text);
    } catch {
      throw new Error(`${what} of \`hookrelay ${args.join(" ")}\` is not JSON (exit ${code}):\n${text}\nstderr:\n${stderr}`);
    }
  };
  return { code, stdout, stderr, json: () => parse(stdout, "stdout"), errorJson: () => parse(stderr, "stderr") };
}

/** Builds dist/hookrelay when it is missing (`npm test` builds it first). */
export async function ensureBinary() {
  if (existsSync(BINARY)) return;
  const proc = Bun.spawn([process.execPath, join(root, "scripts/build.ts")], { cwd: root, stdout: "ignore", stderr: "inherit" });
  if ((await proc.exited) !== 0) throw new Error("bun scripts/build.ts failed");
}

export interface RunningCli {
  lines: string[];
  stderr(): string;
  /** Resolves with the first stdout line matching, or rejects after the timeout with what was seen. */
  waitForLine(match: (line: string) => boolean, timeoutMs?: number): Promise<string>;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number>;
}

/** A long-running CLI process (tail, listen) whose stdout is read line by line. */
export function startCli(args: string[], opts: { env: Record<string, string>; binary?: boolean }): RunningCli {
  const { cmd, cwd } = cliCommand(args, opts.binary);
  const proc = Bun.spawn(cmd, { cwd, env: opts.env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const lines: string[] = [];
  let err = "";
  void (async () => {
    const decoder = new TextDecoder();
    let buf = "";
    for await (const chunk of proc.stdout) {
      buf += decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = buf.indexOf("\n")) >= 0) {
        lines.push(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
      }
    }
  })();
  void (async () => {
    for await (const chunk of proc.stderr) err += new TextDecoder().decode(chunk);
  })();
  return {
    lines,
    stderr: () => err,
    async waitForLine(match, timeoutMs = 30_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const hit = lines.find(match);
        if (hit) return hit;
        if (Date.now() > until) throw new Error(`no matching line in ${timeoutMs} ms; stdout:\n${lines.join("\n")}\nstderr:\n${err}`);
        await Bun.sleep(25);
      }
    },
    async stop() {
      proc.kill("SIGTERM");
      return proc.exited;
    },
  };
}
