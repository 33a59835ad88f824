/**
 * Start-up: from exec of `dist/hookrelay serve` to its first 200 on /healthz
 * (docs/performance.md, "Start-up"), on a new data dir and on an existing one.
 * `bun scripts/bench-startup.ts [--runs 15]`
 *
 * Each run spawns the binary on a free port and polls /healthz every
 * millisecond from this process; the time is from just before the spawn to
 * the first 200. The existing data dir was made by a first start (migrated,
 * the admin created, the secret key written), then the server stopped. The
 * new-dir runs include the first start's work: migrations, the key file, the
 * admin's password hash. Runs alternate new, existing, so a drift of the
 * machine's speed touches both alike; medians and min–max are printed.
 *
 * Beside the time, the CPU the process used over its whole run (start, the
 * first 200, then SIGTERM and its stop), from the kernel's accounting once it
 * exited: on a shared machine CPU moves less than wall time.
 * `--vs <binary>` runs another build in turn with this one (A = that build,
 * B = HOOKRELAY_BENCH_BINARY or dist/hookrelay), each run of A followed by
 * the same run of B, and prints the ratio A/B pair by pair.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ADMIN, binary, ensureBinary, machine, numberArg } from "./bench/lib";

const runs = numberArg("runs", 15);

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
    s.on("error", reject);
  });
}

interface Run {
  ms: number;
  cpuMs: number;
}

async function startOnce(bin: string, dataDir: string): Promise<Run> {
  const port = await freePort();
  const t0 = performance.now();
  const child = Bun.spawn([bin, "serve", "--port", String(port), "--host", "127.0.0.1", "--data-dir", dataDir, "--log-level", "warn"], {
    env: { ...process.env, HOOKRELAY_ADMIN_EMAIL: ADMIN.email, HOOKRELAY_ADMIN_PASSWORD: ADMIN.password },
    stdio: ["ignore", "ignore", "ignore"],
  });
  let exited = false;
  void child.exited.then(() => (exited = true));
  let ms = 0;
  try {
    for (;;) {
      if (exited) throw new Error("serve exited before answering");
      try {
        const res = await fetch(`http://127.0.0.1:${port}/healthz`);
        if (res.status === 200) {
          ms = performance.now() - t0;
          break;
        }
      } catch {}
      if (performance.now() - t0 > 15_000) throw new Error("no 200 within 15 s");
      await Bun.sleep(1);
    }
  } finally {
    child.kill("SIGTERM");
    await child.exited;
  }
  const usage = child.resourceUsage()!;
  return { ms, cpuMs: Number(usage.cpuTime.user + usage.cpuTime.system) / 1000 };
}

const median = (t: number[]) => [...t].sort((a, b) => a - b)[Math.floor(t.length / 2)]!;
const range = (t: number[]) => `min ${Math.min(...t).toFixed(0)}, max ${Math.max(...t).toFixed(0)}`;

ensureBinary();
const vsAt = process.argv.indexOf("--vs");
const builds = vsAt > 0 ? { A: process.argv[vsAt + 1]!, B: binary } : { B: binary };
console.log(`machine: ${machine()}; ${runs} runs each, alternating${vsAt > 0 ? `; A = ${builds.A}, B = ${builds.B}` : ""}`);
const results: Record<string, { new: Run[]; existing: Run[] }> = {};
const existing: Record<string, string> = {};
for (const [name, bin] of Object.entries(builds)) {
  results[name] = { new: [], existing: [] };
  existing[name] = mkdtempSync(join(tmpdir(), "hookrelay-startup-"));
  await startOnce(bin, existing[name]!);
}
for (let i = 0; i < runs; i++) {
  for (const kind of ["new", "existing"] as const) {
    for (const [name, bin] of Object.entries(builds)) {
      const dir = kind === "new" ? mkdtempSync(join(tmpdir(), "hookrelay-startup-")) : existing[name]!;
      results[name]![kind].push(await startOnce(bin, dir));
      if (kind === "new") rmSync(dir, { recursive: true, force: true });
    }
  }
}
for (const dir of Object.values(existing)) rmSync(dir, { recursive: true, force: true });
for (const [name, r] of Object.entries(results)) {
  for (const kind of ["new", "existing"] as const) {
    const ms = r[kind].map((x) => x.ms);
    const cpu = r[kind].map((x) => x.cpuMs);
    const label = vsAt > 0 ? `${name} ` : "";
    console.log(`${label}${kind.padEnd(8)} data dir: median ${median(ms).toFixed(0)} ms (${range(ms)}); CPU of the run median ${median(cpu).toFixed(0)} ms (${range(cpu)})`);
  }
}
if (vsAt > 0) {
  for (const kind of ["new", "existing"] as const) {
    const ratio = (f: (x: Run) => number) => results.A![kind].map((a, i) => f(a) / f(results.B![kind][i]!));
    const show = (t: number[]) => `median ${median(t).toFixed(2)} (min ${Math.min(...t).toFixed(2)}, max ${Math.max(...t).toFixed(2)})`;
    console.log(`A/B ${kind.padEnd(8)} data dir: time ${show(ratio((x) => x.ms))}; CPU ${show(ratio((x) => x.cpuMs))}`);
  }
}
