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
 */
import { spawn } from "node:child_process";
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

async function startOnce(dataDir: string): Promise<number> {
  const port = await freePort();
  const t0 = performance.now();
  const child = spawn(binary, ["serve", "--port", String(port), "--host", "127.0.0.1", "--data-dir", dataDir, "--log-level", "warn"], {
    env: { ...process.env, HOOKRELAY_ADMIN_EMAIL: ADMIN.email, HOOKRELAY_ADMIN_PASSWORD: ADMIN.password },
    stdio: ["ignore", "ignore", "ignore"],
  });
  let exited = false;
  child.once("exit", () => (exited = true));
  try {
    for (;;) {
      if (exited) throw new Error("serve exited before answering");
      try {
        const res = await fetch(`http://127.0.0.1:${port}/healthz`);
        if (res.status === 200) return performance.now() - t0;
      } catch {}
      if (performance.now() - t0 > 15_000) throw new Error("no 200 within 15 s");
      await Bun.sleep(1);
    }
  } finally {
    child.kill("SIGTERM");
    await new Promise((r) => (exited ? r(null) : child.once("exit", r)));
  }
}

ensureBinary();
console.log(`machine: ${machine()}; ${runs} runs each, alternating`);
const existing = mkdtempSync(join(tmpdir(), "hookrelay-startup-"));
await startOnce(existing);
const times = { new: [] as number[], existing: [] as number[] };
for (let i = 0; i < runs; i++) {
  const fresh = mkdtempSync(join(tmpdir(), "hookrelay-startup-"));
  times.new.push(await startOnce(fresh));
  rmSync(fresh, { recursive: true, force: true });
  times.existing.push(await startOnce(existing));
}
rmSync(existing, { recursive: true, force: true });
for (const [name, t] of Object.entries(times)) {
  const s = [...t].sort((a, b) => a - b);
  console.log(`${name.padEnd(8)} data dir: median ${s[Math.floor(s.length / 2)]!.toFixed(0)} ms (min ${s[0]!.toFixed(0)}, max ${s[s.length - 1]!.toFixed(0)})`);
}
