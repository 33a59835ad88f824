/**
 * Outbound fan-out at scale (docs/performance.md, "Outbound fan-out"): the same number of
 * deliveries queued for one endpoint, and spread over `endpoints` endpoints
 * of one application (every endpoint a path of one local receiver).
 * `npm run bench:fanout [-- --endpoints 10000 --messages 10 --claim-rows 20000 --concurrency 32]`
 *
 * For each of the two queues (built in-process through the domain, on a fresh
 * data dir, with no server running):
 * 1. fan-out: how long creating each message took (its event, its message
 *    row and one queued delivery per endpoint, in one write turn);
 * 2. claim: the queue's claim (claimDue, batches of 128 as the worker takes
 *    them) run in-process inside a transaction that is rolled back: time per
 *    row claimed, over the first `claim-rows` rows;
 * 3. drain: the compiled binary (`serve`) started on that data dir delivers
 *    the backlog to the receiver: deliveries per second, and the server's CPU
 *    per delivery (from /proc, the whole process and its main thread).
 * The single-endpoint queue is the baseline the fan-out is held to.
 */
import { newThisNode } from "../src/cluster/identity";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore } from "../src/db/openStore";
import { claimDue } from "../src/delivery/queue";
import { createApplication } from "../src/outbound/applications";
import { bootstrap, defaultScope } from "../src/domain/bootstrap";
import { systemClock } from "../src/core/clock";
import type { Deps, Scope } from "../src/domain/deps";
import { createEndpoint } from "../src/outbound/endpoints";
import { createMessage } from "../src/outbound/fanout";
import { loadSecretBox } from "../src/domain/secrets";
import { ADMIN, cpuSeconds, ensureBinary, machine, numberArg, root, startBunProcess, startHookrelay, type Proc } from "./bench/lib";

const endpoints = numberArg("endpoints", 10_000);
const messagesPerEndpoint = numberArg("messages", 10);
const claimRows = numberArg("claim-rows", 20_000);
const concurrency = numberArg("concurrency", 32);
const deliveries = endpoints * messagesPerEndpoint;
const CLAIM_BATCH = 128;

ensureBinary();
console.log(`machine: ${machine()}; ${deliveries} deliveries each run; delivery concurrency ${concurrency}\n`);
const sink = await startBunProcess([join(root, "scripts/bench/sink.ts")]);

interface Result {
  label: string;
  fanoutMsPerMessage: number;
  claimUsPerRow: number;
  claimed: number;
  drainPerSecond: number;
  cpuUsPerDelivery: { process: number; main: number };
}

const single = await scenario(`1 endpoint, ${deliveries} messages`, 1, deliveries);
const fanout = await scenario(`${endpoints} endpoints, ${messagesPerEndpoint} messages`, endpoints, messagesPerEndpoint);
await sink.stop();

console.log("\n| queue | fan-out ms / message | claim µs / row (rows timed) | drain deliveries/s | server CPU µs / delivery, process / main |");
console.log("|---|---|---|---|---|");
for (const r of [single, fanout]) {
  console.log(
    `| ${r.label} | ${r.fanoutMsPerMessage.toFixed(2)} | ${r.claimUsPerRow.toFixed(2)} (${r.claimed}) | ${Math.round(r.drainPerSecond)} | ${Math.round(r.cpuUsPerDelivery.process)} / ${Math.round(r.cpuUsPerDelivery.main)} |`,
  );
}
console.log(`\nfan-out against one endpoint: claim ${(fanout.claimUsPerRow / single.claimUsPerRow).toFixed(2)}× the time per row, drain ${Math.round((fanout.drainPerSecond / single.drainPerSecond) * 100)}% of the rate`);

async function scenario(label: string, endpointCount: number, messageCount: number): Promise<Result> {
  console.log(`${label}:`);
  const dataDir = mkdtempSync(join(tmpdir(), "hookrelay-bench-fanout-"));
  const store = await openStore({ dataDir });
  const deps: Deps = {
    db: store.db,
    store,
    clock: systemClock,
    secrets: loadSecretBox(dataDir),
    bus: { publish() {}, subscribe: () => () => {} },
    // One application with every endpoint: far past the default cap of 20 (HOOKRELAY_MAX_ENDPOINTS_PER_APP).
    settings: { baseUrl: "http://localhost", retentionDays: 30, maxBodyBytes: 5 * 1024 * 1024, blockPrivateDestinations: false, trustProxy: "", maxEndpointsPerApp: endpoints },
    node: newThisNode("http://localhost"),
  };
  await bootstrap(store.db, systemClock, ADMIN);
  const env = (await defaultScope(store.db))!;
  const scope: Scope = { orgId: env.orgId, envId: env.envId, userId: null, via: "local", scopes: "*", role: "owner" };
  const { application } = await createApplication(deps, scope, { name: "bench", uid: "bench" });
  let started = performance.now();
  for (let i = 0; i < endpointCount; i++) await createEndpoint(deps, scope, application.id, { url: `${sink.url}/e/${i}` });
  console.log(`  ${endpointCount} endpoints created in ${Math.round(performance.now() - started)} ms`);

  // Messages go in groups that share write turns, as concurrent API requests would.
  started = performance.now();
  const group = endpointCount === 1 ? 200 : 1;
  for (let sent = 0; sent < messageCount; sent += group) {
    const n = Math.min(group, messageCount - sent);
    await Promise.all(Array.from({ length: n }, (_, i) => createMessage(deps, scope, application.id, { event_type: "order.created", payload: { n: sent + i, data: { id: "ord_123", amount: 4200 } } })));
  }
  const fanoutMsPerMessage = (performance.now() - started) / messageCount;
  console.log(`  ${messageCount} messages sent: ${fanoutMsPerMessage.toFixed(2)} ms a message`);

  // The claim, in-process, on the queue as it stands; rolled back so the drain starts from the same queue.
  store.sqlite!.handle.exec("BEGIN IMMEDIATE");
  let claimed = 0;
  let claimNs = 0;
  try {
    while (claimed < claimRows) {
      const t = Bun.nanoseconds();
      const rows = await claimDue(store.db, { now: new Date(), limit: CLAIM_BATCH, exclude: [] });
      claimNs += Bun.nanoseconds() - t;
      if (rows.length === 0) break;
      claimed += rows.length;
    }
  } finally {
    store.sqlite!.handle.exec("ROLLBACK");
  }
  const claimUsPerRow = claimNs / 1000 / claimed;
  console.log(`  claim: ${claimUsPerRow.toFixed(2)} µs a row over ${claimed} rows`);
  await store.close();

  await fetch(`${sink.url}/reset`, { method: "POST" });
  const hr = await startHookrelay({ HOOKRELAY_DELIVERY_CONCURRENCY: String(concurrency) }, dataDir);
  const cpuBefore = cpuSeconds(hr.pid);
  const drainStart = performance.now();
  for (;;) {
    const { count } = (await (await fetch(`${sink.url}/stats`)).json()) as { count: number };
    if (count >= deliveries) break;
    if (performance.now() - drainStart > 900_000) throw new Error(`drain stalled at ${count} of ${deliveries}`);
    await Bun.sleep(50);
  }
  const seconds = (performance.now() - drainStart) / 1000;
  const cpuAfter = cpuSeconds(hr.pid);
  await stop(hr);
  rmSync(dataDir, { recursive: true, force: true });
  const drainPerSecond = deliveries / seconds;
  const cpuUsPerDelivery = { process: ((cpuAfter.process - cpuBefore.process) * 1e6) / deliveries, main: ((cpuAfter.main - cpuBefore.main) * 1e6) / deliveries };
  console.log(`  drain: ${Math.round(drainPerSecond)} deliveries/s (${seconds.toFixed(1)} s); server CPU ${Math.round(cpuUsPerDelivery.process)} / ${Math.round(cpuUsPerDelivery.main)} µs a delivery`);
  return { label, fanoutMsPerMessage, claimUsPerRow, claimed, drainPerSecond, cpuUsPerDelivery };
}

/** Stops the server without removing the data dir (the scenario does that). */
async function stop(p: Proc) {
  p.child.kill("SIGTERM");
  await new Promise((r) => p.child.once("exit", r));
}
