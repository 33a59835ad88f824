/**
 * `npm run soak -- --minutes N`: the compiled server under constant ingest
 * and delivery for N minutes, with a retention of minutes instead of days,
 * printing each minute the server's RSS and the database and WAL sizes.
 * Flat figures mean nothing grows without bound (docs/performance.md).
 *
 * Retention is HOOKRELAY_RETENTION_DAYS in whole days, so the soak prunes
 * from its own process (local mode, as a CLI may while serve runs) with the
 * same domain function the server's hourly task calls, on a clock shifted so
 * that the cutoff is --retention-minutes ago, every --prune-seconds.
 *
 * Options: --minutes 30, --rate 200 (events/s), --body-bytes 2048,
 * --retention-minutes 2, --prune-seconds 30, --binary dist/hookrelay.
 */
import { newThisNode } from "../src/cluster/identity";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { loadConfig } from "../src/config/config";
import { openStore } from "../src/db/openStore";
import { createApiKey } from "../src/domain/apiKeys";
import { defaultScope } from "../src/domain/bootstrap";
import { systemClock } from "../src/core/clock";
import type { Deps } from "../src/domain/deps";
import { pruneOldEvents } from "../src/domain/retention";
import { loadSecretBox } from "../src/domain/secrets";

const root = join(import.meta.dir, "..");
const { values: args } = parseArgs({
  options: {
    minutes: { type: "string", default: "30" },
    rate: { type: "string", default: "200" },
    "body-bytes": { type: "string", default: "2048" },
    "retention-minutes": { type: "string", default: "2" },
    "prune-seconds": { type: "string", default: "30" },
    binary: { type: "string", default: join(root, "dist/hookrelay") },
  },
});
const minutes = Number(args.minutes);
const rate = Number(args.rate);
const retentionMs = Number(args["retention-minutes"]) * 60_000;
const body = JSON.stringify({ type: "soak", pad: "x".repeat(Math.max(0, Number(args["body-bytes"]) - 30)) });

if (!existsSync(args.binary)) {
  const built = Bun.spawnSync([process.execPath, join(root, "scripts/build.ts")], { stdout: "inherit", stderr: "inherit" });
  if (built.exitCode !== 0) throw new Error("build failed");
}

// The receiver: answers at once, counts.
let delivered = 0;
const sink = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch: () => {
    delivered++;
    return new Response("ok");
  },
});

const dataDir = mkdtempSync(join(tmpdir(), "hookrelay-soak-"));
const serve = Bun.spawn([args.binary, "serve", "--port", "0", "--host", "127.0.0.1", "--data-dir", dataDir], {
  env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOOKRELAY_ADMIN_PASSWORD: "soak password 1234", HOOKRELAY_LOG_LEVEL: "warn", HOOKRELAY_RETENTION_DAYS: "1" },
  stdout: "inherit",
  stderr: "pipe",
});
let serveErr = "";
void (async () => {
  for await (const chunk of serve.stderr) {
    const text = new TextDecoder().decode(chunk);
    serveErr += text;
    if (serveErr.includes("listening on")) process.stderr.write(text);
  }
})();
let url = "";
for (const until = Date.now() + 15_000; !url; await Bun.sleep(20)) {
  url = /listening on (http:\/\/\S+)/.exec(serveErr)?.[1] ?? "";
  if (Date.now() > until) throw new Error(`serve did not start:\n${serveErr}`);
}

// Local mode beside the server: the key, and later the pruning.
const config = loadConfig({ dataDir });
const store = await openStore({ dataDir });
const scope = (await defaultScope(store.db))!;
const deps: Deps = {
  db: store.db,
  store,
  clock: systemClock,
  secrets: loadSecretBox(dataDir),
  bus: { publish() {}, subscribe: () => () => {} },
  settings: { baseUrl: url, retentionDays: 1, maxBodyBytes: config.maxBodyBytes, blockPrivateDestinations: false, trustProxy: "" },
  node: newThisNode(url),
};
const { key } = await createApiKey(deps, { ...scope, userId: null, via: "local", scopes: "*", role: "owner" }, { name: "soak" });
const post = async (path: string, payload: unknown) => {
  const res = await fetch(url + path, { method: "POST", headers: { "x-api-key": key, "content-type": "application/json" }, body: JSON.stringify(payload) });
  if (res.status !== 201) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, { id: string }>;
};
const source = (await post("/v1/sources", { name: "soak" })).source!;
const destination = (await post("/v1/destinations", { name: "sink", url: `http://127.0.0.1:${sink.port}/hook` })).destination!;
await post("/v1/connections", { name: "soak", source_id: source.id, destination_id: destination.id });
const ingestUrl = `${url}/v1/ingest/${source.id}`;

// Constant ingest: rate/100 requests every 10 ms.
let sent = 0;
let acked = 0;
let failed = 0;
const perTick = rate / 100;
let owed = 0;
const load = setInterval(() => {
  owed += perTick;
  for (; owed >= 1; owed--) {
    sent++;
    fetch(ingestUrl, { method: "POST", headers: { "content-type": "application/json" }, body })
      .then((r) => (r.status === 200 ? acked++ : failed++))
      .catch(() => failed++);
  }
}, 10);

// Retention of minutes: the cutoff is `retentionMs` ago.
const shifted: Deps = { ...deps, clock: { now: () => new Date(Date.now() + 86_400_000 - retentionMs) } };
let pruned = 0;
let pruning = false;
const prune = setInterval(() => {
  if (pruning) return;
  pruning = true;
  pruneOldEvents(shifted)
    .then((n) => (pruned += n))
    .catch((err) => console.error("prune failed:", err))
    .finally(() => (pruning = false));
}, Number(args["prune-seconds"]) * 1000);

const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
const size = (file: string) => (existsSync(file) ? statSync(file).size : 0);
const rssOf = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) * 1024;
const rows: string[] = [];
const header = "| minute | ingested/s | delivered/s | events kept | server RSS MiB | DB MiB | WAL MiB |";
console.log(`soak: ${minutes} min, ${rate} events/s of ${body.length} bytes, retention ${args["retention-minutes"]} min, data ${dataDir}`);
console.log(header + "\n| --- | --- | --- | --- | --- | --- | --- |");
let last = { acked: 0, delivered: 0 };
for (let minute = 1; minute <= minutes; minute++) {
  await Bun.sleep(60_000);
  const kept = (store.sqlite!.handle.query("SELECT count(*) AS n FROM events").get() as { n: number }).n;
  const db = join(dataDir, "hookrelay.db");
  const row = `| ${minute} | ${((acked - last.acked) / 60).toFixed(0)} | ${((delivered - last.delivered) / 60).toFixed(0)} | ${kept} | ${mib(rssOf(serve.pid))} | ${mib(size(db))} | ${mib(size(`${db}-wal`))} |`;
  last = { acked, delivered };
  rows.push(row);
  console.log(row);
}

clearInterval(load);
clearInterval(prune);
while (pruning) await Bun.sleep(50);
console.log(`\nsent ${sent}, acknowledged ${acked}, failed ${failed}, delivered ${delivered}, pruned ${pruned}`);
await store.close();
serve.kill("SIGTERM");
const code = await serve.exited;
sink.stop(true);
rmSync(dataDir, { recursive: true, force: true });
console.log(`serve exited with ${code}`);
process.exit(failed > 0 || code !== 0 ? 1 : 0);
