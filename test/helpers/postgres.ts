import { chownSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A throwaway PostgreSQL 15 cluster on 127.0.0.1, as docs/postgres.md describes. */
export type PgCluster = {
  url: string;
  /** The port it listens on (kept across halt and resume). */
  port: number;
  stop(): void;
  /** Shuts the server down (as an operator or a crash would: `-m fast` by default), keeping its data. */
  halt(mode?: "fast" | "immediate"): void;
  /** Starts the halted server again on the same data dir and port. */
  resume(): void;
};

const bin = "/usr/lib/postgresql/15/bin";

/** Why a cluster cannot be started here, or null when it can. */
export function pgUnavailable(): string | null {
  if (!existsSync(join(bin, "initdb"))) return `PostgreSQL 15 is not installed (no ${bin}/initdb; apt-get install postgresql)`;
  // initdb refuses to run as root; as root the cluster belongs to the postgres user.
  if (process.getuid?.() === 0 && Bun.spawnSync(["id", "-u", "postgres"]).exitCode !== 0) return "running as root and there is no postgres user";
  return null;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on("error", reject);
  });
}

function run(argv: string[]) {
  const asRoot = process.getuid?.() === 0;
  const result = Bun.spawnSync(asRoot ? ["runuser", "-u", "postgres", "--", ...argv] : argv, { stdout: "pipe", stderr: "pipe" });
  if (result.exitCode !== 0) throw new Error(`${argv.join(" ")} failed:\n${result.stdout}${result.stderr}`);
}

/**
 * Settings for a cluster that lives for one test run: enough connections for
 * many servers at once (each pools up to 10), and no fsync (a crash of the
 * machine loses nothing a throwaway cluster must keep; a SIGKILL of hookrelay
 * does not touch PostgreSQL's durability).
 */
export const TEST_RUN_SETTINGS = ["-c max_connections=400", "-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off", "-c shared_buffers=64MB"];

/**
 * A fresh cluster on a free port. With `started: false` it is initialised
 * but not running: resume() starts it (a test of what happens while the
 * database is not there yet).
 */
export async function startPgCluster(opts: { settings?: string[]; started?: boolean } = {}): Promise<PgCluster> {
  const dir = mkdtempSync(join(tmpdir(), "hookrelay-pg-"));
  if (process.getuid?.() === 0) {
    const uid = Number(Bun.spawnSync(["id", "-u", "postgres"]).stdout.toString());
    const gid = Number(Bun.spawnSync(["id", "-g", "postgres"]).stdout.toString());
    chownSync(dir, uid, gid);
  }
  const data = join(dir, "data");
  const port = await freePort();
  run([join(bin, "initdb"), "-D", data, "-U", "hookrelay", "-A", "trust", "-E", "UTF8", "--no-locale"]);
  const start = () => run([join(bin, "pg_ctl"), "-D", data, "-l", join(dir, "log"), "-w", "-o", [`-c listen_addresses=127.0.0.1 -p ${port} -k ${dir}`, ...(opts.settings ?? [])].join(" "), "start"]);
  start();
  let running = true;
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    try {
      if (running) run([join(bin, "pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  try {
    run([join(bin, "createdb"), "-h", "127.0.0.1", "-p", String(port), "-U", "hookrelay", "hookrelay"]);
  } catch (err) {
    stop();
    throw err;
  }
  const halt = (mode: "fast" | "immediate" = "fast") => {
    run([join(bin, "pg_ctl"), "-D", data, "-m", mode, "-w", "stop"]);
    running = false;
  };
  const resume = () => {
    start();
    running = true;
  };
  if (opts.started === false) halt();
  return { url: `postgres://hookrelay@127.0.0.1:${port}/hookrelay`, port, stop, halt, resume };
}
