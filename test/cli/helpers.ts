import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { tempDir } from "../helpers/server";
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

/** Runs the CLI as a real process: from source (`bun cli/main.ts`) or the compiled binary. */
export async function cli(args: string[], opts: { env: Record<string, string>; stdin?: string; binary?: boolean }): Promise<CliResult> {
  const cmd = opts.binary ? [BINARY, ...args] : [process.execPath, join(root, "cli/main.ts"), ...args];
  const proc = Bun.spawn(cmd, { cwd: opts.binary ? tmpdir() : root, env: opts.env, stdin: opts.stdin === undefined ? "ignore" : new TextEncoder().encode(opts.stdin), stdout: "pipe", stderr: "pipe" });
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
  const cmd = opts.binary ? [BINARY, ...args] : [process.execPath, join(root, "cli/main.ts"), ...args];
  const proc = Bun.spawn(cmd, { cwd: opts.binary ? tmpdir() : root, env: opts.env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
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
