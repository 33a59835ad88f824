/**
 * Reliability (docs/delivery.md, "The queue": at least once), at a larger scale than test/reliability/crash.test.ts:
 * the compiled binary with two sources, one fanned out to two destinations
 * and the other to a third, events streamed in by many senders, and the
 * server killed with SIGKILL several times mid-stream and restarted on the
 * same data dir each time.
 * `npm run crash [-- --events 20000 --kills 3 --senders 32 --latency-ms 2]`
 *
 * Checks, exit code 1 when one fails:
 * - every event answered 200 reaches each destination of its source at
 *   least once;
 * - no destination receives an event of the other source
 *   (x-hookrelay-source-id): nothing goes to the wrong place;
 * - duplicates only for deliveries in flight at a kill: at most what a
 *   worker holds (HELD_PER_SLOT times the delivery concurrency) per
 *   destination and kill (docs/delivery.md).
 * CRASH_TRACE=1 prints progress every second; CRASH_KEEP=1 keeps the data
 * dir of a failed run for a look inside.
 */
import { rmSync } from "node:fs";
import { HELD_PER_SLOT } from "../src/delivery/worker";
import { adminKey, api, ensureBinary, machine, numberArg, startHookrelay, type Proc } from "./bench/lib";

const EVENTS = numberArg("events", 20_000);
const KILLS = numberArg("kills", 3);
const SENDERS = numberArg("senders", 32);
const LATENCY_MS = numberArg("latency-ms", 2);
/** The server's default (docs/configuration.md): what a crash can repeat is bounded by it. */
const CONCURRENCY = 32;

ensureBinary();
console.log(`machine: ${machine()}; ${EVENTS} events, ${KILLS} SIGKILLs, ${SENDERS} senders, receiver latency ${LATENCY_MS} ms\n`);

const started = performance.now();
/** What the receiver saw: per destination path, the event and source ids of every request. */
const received = new Map<string, { eventId: string; sourceId: string }[]>([
  ["/a", []],
  ["/b", []],
  ["/c", []],
]);
const receiver = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(req) {
    await req.arrayBuffer();
    const list = received.get(new URL(req.url).pathname);
    if (!list) return new Response("no such destination", { status: 404 });
    list.push({ eventId: req.headers.get("x-hookrelay-event-id") ?? "", sourceId: req.headers.get("x-hookrelay-source-id") ?? "" });
    // A little latency keeps deliveries in flight when a kill comes.
    if (LATENCY_MS > 0) await Bun.sleep(LATENCY_MS);
    return new Response("ok");
  },
});

if (process.env.CRASH_TRACE) {
  console.log(`receiver on ${receiver.port}`);
  setInterval(() => console.log(`t=${((performance.now() - started) / 1000).toFixed(1)} received ${[...received.values()].map((l) => l.length).join(" ")} acked ${ackedCount()} kills ${kills.length}`), 1000).unref();
}
let hr: Proc & { dataDir: string } = await startHookrelay({ HOOKRELAY_DELIVERY_CONCURRENCY: String(CONCURRENCY) });
const dataDir = hr.dataDir;
const key = await adminKey(hr.url);
/** Source 1 fans out to /a and /b, source 2 goes to /c alone. */
const sources = [(await api(hr.url, key, "POST", "/sources", { name: "crash 1" })).source.id as string, (await api(hr.url, key, "POST", "/sources", { name: "crash 2" })).source.id as string];
const routes = new Map<string, string>([
  ["/a", sources[0]!],
  ["/b", sources[0]!],
  ["/c", sources[1]!],
]);
for (const [path, sourceId] of routes) {
  const d = (await api(hr.url, key, "POST", "/destinations", { name: `receiver ${path}`, url: `http://127.0.0.1:${receiver.port}${path}` })).destination;
  await api(hr.url, key, "POST", "/connections", { name: `crash ${path}`, source_id: sourceId, destination_id: d.id });
}

/** Events answered 200, by source. */
const acked = new Map<string, Set<string>>(sources.map((id) => [id, new Set<string>()]));
const ackedCount = () => [...acked.values()].reduce((n, set) => n + set.size, 0);
const killAt = Array.from({ length: KILLS }, (_, k) => Math.round((EVENTS * (k + 1)) / (KILLS + 1)));
const kills: { at: number; acked: number; delivered: number; restartMs: number }[] = [];
let next = 0;
/** The restart in progress, if any: senders past its kill point wait for it. */
let restarting: { at: number; done: Promise<void> } | null = null;

async function killAndRestart(at: number) {
  const delivered = [...received.values()].reduce((n, l) => n + l.length, 0);
  hr.child.kill("SIGKILL");
  await new Promise((r) => hr.child.once("exit", r));
  const t = performance.now();
  hr = await startHookrelay({ HOOKRELAY_DELIVERY_CONCURRENCY: String(CONCURRENCY) }, dataDir);
  kills.push({ at, acked: ackedCount(), delivered, restartMs: Math.round(performance.now() - t) });
}

async function sender() {
  while (next < EVENTS) {
    const n = next++;
    if (killAt.includes(n)) restarting = { at: n, done: killAndRestart(n) };
    if (restarting && n > restarting.at) await restarting.done;
    try {
      const sourceId = sources[n % 2]!;
      const res = await fetch(`${hr.url}/v1/ingest/${sourceId}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ n }) });
      const body = (await res.json()) as { event_id?: string };
      if (res.status === 200 && body.event_id) acked.get(sourceId)!.add(body.event_id);
    } catch {
      // Refused or cut off by a kill: never acknowledged, so not owed.
    }
  }
}
await Promise.all(Array.from({ length: SENDERS }, sender));
const sentSeconds = (performance.now() - started) / 1000;

// Every acknowledged event at each of its destinations, or give up after two minutes.
const seenAt = (path: string) => new Set(received.get(path)!.map((r) => r.eventId));
const deadline = Date.now() + Number(process.env.CRASH_WAIT_MS ?? 120_000);
let missing: Record<string, number> = {};
for (;;) {
  missing = Object.fromEntries(
    [...received.keys()].map((path) => {
      const seen = seenAt(path);
      return [path, [...acked.get(routes.get(path)!)!].filter((id) => !seen.has(id)).length];
    }),
  );
  if (Object.values(missing).every((m) => m === 0) || Date.now() > deadline) break;
  await Bun.sleep(250);
}
const drainedSeconds = (performance.now() - started) / 1000;

const failures: string[] = [];
const rows: [string, string][] = [
  ["events sent / answered 200", `${EVENTS} / ${ackedCount()}`],
  ["SIGKILLs (at event n: acknowledged, delivered so far, restart ms)", kills.map((k) => `${k.at}: ${k.acked}, ${k.delivered}, ${k.restartMs}`).join("; ")],
  ["sending took / all delivered after (s)", `${sentSeconds.toFixed(1)} / ${drainedSeconds.toFixed(1)}`],
];
for (const [path, list] of received) {
  const sourceId = routes.get(path)!;
  const seen = seenAt(path);
  const wrong = list.filter((r) => r.sourceId !== sourceId).length;
  const duplicates = list.length - seen.size;
  const unacknowledged = [...seen].filter((id) => !acked.get(sourceId)!.has(id)).length;
  const bound = KILLS * HELD_PER_SLOT * CONCURRENCY;
  rows.push([`destination ${path}: requests / distinct events / duplicates (bound ${bound})`, `${list.length} / ${seen.size} / ${duplicates}`]);
  rows.push([`destination ${path}: acknowledged events missing / events of the other source`, `${missing[path]} / ${wrong}`]);
  rows.push([`destination ${path}: delivered though never acknowledged (stored, answer cut by a kill)`, String(unacknowledged - wrong)]);
  if (missing[path]! > 0) failures.push(`${missing[path]} acknowledged events never reached ${path}`);
  if (wrong > 0) failures.push(`${wrong} events of the other source reached ${path}`);
  if (duplicates > bound) failures.push(`${duplicates} duplicates at ${path}, more than ${bound}`);
}
if (ackedCount() < EVENTS * 0.9) failures.push(`only ${ackedCount()} of ${EVENTS} events were acknowledged`);

if (failures.length > 0 && process.env.CRASH_KEEP) {
  hr.child.kill("SIGTERM");
  await new Promise((r) => hr.child.once("exit", r));
  console.log(`data dir kept: ${dataDir}`);
} else {
  await hr.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
receiver.stop(true);

const w = Math.max(...rows.map(([k]) => k.length));
console.log(`| ${"measure".padEnd(w)} | value |`);
console.log(`|${"-".repeat(w + 2)}|-------|`);
for (const [k, v] of rows) console.log(`| ${k.padEnd(w)} | ${v} |`);
console.log(failures.length === 0 ? "\nOK: every acknowledged event delivered to each of its destinations, none to another." : `\nFAILED:\n- ${failures.join("\n- ")}`);
process.exit(failures.length === 0 ? 0 : 1);
