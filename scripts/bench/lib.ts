/** Shared pieces of the benchmarks: the compiled binary as a child process, a load generator, RSS. */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const root = join(import.meta.dir, "../..");
/** HOOKRELAY_BENCH_BINARY compares another build (an A/B of two commits) without touching dist/. */
export const binary = process.env.HOOKRELAY_BENCH_BINARY ?? join(root, "dist/hookrelay");
export const ADMIN = { email: "bench@localhost", password: "bench-password-123" };

/** `--name <number>` from the command line, or `def`. */
export function numberArg(name: string, def: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
}

export function ensureBinary() {
  if (existsSync(binary) && !process.argv.includes("--rebuild")) return;
  const r = spawnSync("bun", ["scripts/build.ts"], { cwd: root, stdio: "inherit" });
  if (r.status !== 0) throw new Error("build failed");
}

export interface Proc {
  child: ChildProcess;
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * Starts dist/hookrelay serve on a fresh temp data dir (or on `dataDir`, a restart); resolves once it listens.
 * BENCH_CPU_PROFILE=<dir> runs the sources under `bun --cpu-prof` instead, writing a profile there on exit.
 * BENCH_ECHO=1 copies the server's stderr to ours (its log, at level warn).
 */
export async function startHookrelay(env: Record<string, string> = {}, dataDir = mkdtempSync(join(tmpdir(), "hookrelay-bench-"))): Promise<Proc & { dataDir: string }> {
  const profileDir = process.env.BENCH_CPU_PROFILE;
  const command = profileDir ? ["bun", "--cpu-prof", `--cpu-prof-dir=${profileDir}`, join(root, "cli/main.ts")] : [binary];
  const child = spawn(command[0]!, [...command.slice(1), "serve", "--port", "0", "--host", "127.0.0.1", "--data-dir", dataDir, "--log-level", "warn"], {
    env: { ...process.env, HOOKRELAY_ADMIN_EMAIL: ADMIN.email, HOOKRELAY_ADMIN_PASSWORD: ADMIN.password, ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  const url = await listenUrl(child, /listening on (http:\/\/\S+)/);
  return {
    child,
    url,
    pid: child.pid!,
    dataDir,
    async stop() {
      child.kill("SIGTERM");
      await new Promise((r) => child.once("exit", r));
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A bare Bun.serve that answers 200 and stores nothing: the ceiling to compare against. */
export function startBareServer(): Promise<Proc> {
  const code = `const s = Bun.serve({ port: 0, hostname: "127.0.0.1", async fetch(req) { await req.arrayBuffer(); return Response.json({ success: true }); } }); console.error("listening on http://127.0.0.1:" + s.port);`;
  return startBunProcess(["-e", code]);
}

/** `bun <args>` in a child process that prints `listening on <url>` on stderr once it serves. */
export async function startBunProcess(args: string[]): Promise<Proc> {
  const child = spawn("bun", args, { stdio: ["ignore", "ignore", "pipe"] });
  const url = await listenUrl(child, /listening on (http:\/\/\S+)/);
  return {
    child,
    url,
    pid: child.pid!,
    async stop() {
      child.kill("SIGTERM");
      await new Promise((r) => child.once("exit", r));
    },
  };
}

function listenUrl(child: ChildProcess, pattern: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    const timer = setTimeout(() => reject(new Error(`no listen line: ${text}`)), 15_000);
    child.stderr!.on("data", (d) => {
      if (process.env.BENCH_ECHO) process.stderr.write(d);
      text += d;
      const m = pattern.exec(text);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once("exit", (code) => reject(new Error(`exited ${code}: ${text}`)));
  });
}

/** Peak resident set size of a process so far, in MiB (Linux VmHWM). */
export function peakRssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round((kb / 1024) * 10) / 10;
}

/** Resident set size now, in MiB (Linux VmRSS). */
export function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round((kb / 1024) * 10) / 10;
}

/** Resident memory now by kind, in MiB: anonymous (heaps, caches), file-backed (the mapped binary), shared memory (SQLite's WAL index). */
export function rssPartsMiB(pid: number): { rss: number; anon: number; file: number; shmem: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const mib = (field: string) => Math.round((Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / 1024) * 10) / 10;
  return { rss: mib("VmRSS"), anon: mib("RssAnon"), file: mib("RssFile"), shmem: mib("RssShmem") };
}

/**
 * Starts the peak (VmHWM) over from the current RSS (Linux: `5` into
 * clear_refs), so a later peakRssMiB covers only what came after. Used to
 * leave out the first start's admin password hash (argon2id takes 64 MiB
 * for a moment), which has nothing to do with the load being measured.
 */
export function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5");
    return true;
  } catch {
    return false;
  }
}

/** CPU seconds used so far (user + system): the whole process, and its main thread alone. */
export function cpuSeconds(pid: number): { process: number; main: number } {
  // Fields 14 and 15 of /proc/<pid>/stat, counted after the parenthesised command name.
  const ticks = (path: string) => {
    const fields = readFileSync(path, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  };
  return { process: ticks(`/proc/${pid}/stat`), main: ticks(`/proc/${pid}/task/${pid}/stat`) };
}

export interface LoadResult {
  requestsPerSec: number;
  p50: number;
  p99: number;
  ok2xx: number;
  non2xx: number;
  errors: number;
}

/**
 * autocannon (an npm devDependency, run under Node so it does not compete
 * with Bun's event loop in the same process) against one URL.
 */
export function load(opts: LoadOptions): LoadResult {
  const r = spawnSync("node", autocannonArgs(opts), { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`autocannon failed: ${r.stderr}`);
  return loadResult(r.stdout);
}

/** The same as load(), without blocking: several at once load several servers (e.g. the nodes of a cluster). */
export function loadAsync(opts: LoadOptions): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = spawn("node", autocannonArgs(opts), { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout!.on("data", (d) => (out += d));
    child.stderr!.on("data", (d) => (err += d));
    child.once("exit", (code) => (code === 0 ? resolve(loadResult(out)) : reject(new Error(`autocannon failed: ${err}`))));
  });
}

export interface LoadOptions {
  url: string;
  connections: number;
  seconds: number;
  body: string;
  headers: Record<string, string>;
  rate?: number;
  idReplacement?: boolean;
}

function autocannonArgs(opts: LoadOptions): string[] {
  const args = [join(root, "node_modules/autocannon/autocannon.js"), "-j", "-c", String(opts.connections), "-d", String(opts.seconds), "-m", "POST", "-b", opts.body];
  // `[<id>]` in the body becomes a fresh id per request.
  if (opts.idReplacement) args.push("-I");
  for (const [k, v] of Object.entries(opts.headers)) args.push("-H", `${k}=${v}`);
  if (opts.rate) args.push("-R", String(opts.rate));
  args.push(opts.url);
  return args;
}

function loadResult(stdout: string): LoadResult {
  const j = JSON.parse(stdout);
  return {
    requestsPerSec: Math.round(j["2xx"] / j.duration),
    p50: j.latency.p50,
    p99: j.latency.p99,
    ok2xx: j["2xx"],
    non2xx: j.non2xx,
    errors: j.errors + j.timeouts,
  };
}

export async function api(base: string, key: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${base}/v1${path}`, { method, headers: { "x-api-key": key, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  const json = (await res.json()) as any;
  if (!res.ok) throw new Error(`${method} ${path} → ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** Logs in and creates an API key on a fresh instance. */
export async function adminKey(base: string): Promise<string> {
  const login = await fetch(`${base}/v1/auth/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(ADMIN) });
  const cookie = login.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
  const res = await fetch(`${base}/v1/auth/api-keys`, { method: "POST", headers: { cookie, origin: base, "content-type": "application/json" }, body: JSON.stringify({ name: "bench" }) });
  return ((await res.json()) as { key: string }).key;
}

export const machine = () => {
  const cpu = readFileSync("/proc/cpuinfo", "utf8").match(/model name\s*:\s*(.+)/)?.[1] ?? "unknown CPU";
  const cores = readFileSync("/proc/cpuinfo", "utf8").match(/^processor/gm)?.length ?? 0;
  const memGiB = Math.round(Number(/MemTotal:\s+(\d+)/.exec(readFileSync("/proc/meminfo", "utf8"))?.[1] ?? 0) / 1024 / 1024);
  return `${cores} cores (${cpu}), ${memGiB} GiB, Bun ${Bun.version}`;
};

/** A series of /metrics, whatever its labels (every series carries the node label). */
export async function metric(base: string, name: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, "m").exec(text);
  return m ? Number(m[1]) : NaN;
}

export async function until(check: () => Promise<boolean>, timeoutMs: number, what: string) {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await Bun.sleep(50);
  }
}
