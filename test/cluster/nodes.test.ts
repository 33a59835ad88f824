import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { parseSse } from "../../cli/sse";
import { HELD_PER_SLOT } from "../../src/delivery/worker";
import { describeOnly, dropStore, storeEnv } from "../helpers/database";
import { ADMIN, tempDir } from "../helpers/server";
import { startSink, type Sink } from "../helpers/sink";

/**
 * docs/decisions.md D13: several `serve` nodes (the compiled binary, each with its own data dir and port) on
 * one PostgreSQL database, the same database URL and secret key. Every node ingests and
 * delivers; losing a node loses no acknowledged event.
 */
const ROOT = join(import.meta.dirname, "../..");
const BINARY = join(ROOT, "dist/hookrelay");
/** Each node's delivery concurrency: what a killed node can have had in flight is bounded by it. */
const CONCURRENCY = 8;

interface Node {
  url: string;
  proc: ChildProcess;
  exited: Promise<unknown>;
}

interface Cluster {
  nodes: Node[];
  key: string;
  /** Every node's data dir; the first one's names the cluster's database (test/helpers/database.ts). */
  dataDirs: string[];
}

let clusters: Cluster[] = [];
let sink: Sink;

beforeAll(() => {
  if (!existsSync(BINARY)) {
    const r = spawnSync("bun", ["scripts/build.ts"], { cwd: ROOT, stdio: "inherit" });
    if (r.status !== 0) throw new Error("build failed");
  }
});

afterEach(async () => {
  sink?.close();
  for (const c of clusters) {
    for (const n of c.nodes) n.proc.kill("SIGKILL");
    await Promise.all(c.nodes.map((n) => n.exited));
    await dropStore(c.dataDirs[0]!);
    for (const d of c.dataDirs) rmSync(d, { recursive: true, force: true });
  }
  clusters = [];
});

afterAll(() => sink?.close());

/** `hookrelay serve` from the compiled binary; resolves once it listens. */
async function startNode(env: Record<string, string>): Promise<Node> {
  const proc = spawn(BINARY, ["serve", "--port", "0", "--host", "127.0.0.1"], {
    env: {
      PATH: process.env.PATH ?? "",
      ...env,
      HOOKRELAY_ADMIN_EMAIL: ADMIN.email,
      HOOKRELAY_ADMIN_PASSWORD: ADMIN.password,
      HOOKRELAY_DELIVERY_CONCURRENCY: String(CONCURRENCY),
      HOOKRELAY_LOG_LEVEL: "warn",
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  const exited = new Promise((r) => proc.once("exit", r));
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${out}`)), 20_000);
    proc.stderr!.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    proc.once("exit", (code) => reject(new Error(`serve exited ${code}: ${out}`)));
  });
  return { url, proc, exited };
}

/**
 * `count` nodes on one new database. The first starts alone (it migrates the database and creates
 * the admin), `setup` runs against it, then the others join.
 */
async function startCluster(count: number, setup: (url: string, key: string) => Promise<void>): Promise<Cluster> {
  const dataDirs = Array.from({ length: count }, () => tempDir("hookrelay-node-"));
  const cluster: Cluster = { nodes: [], key: "", dataDirs };
  clusters.push(cluster);
  const shared = await storeEnv(dataDirs[0]!);
  expect(shared.HOOKRELAY_DATABASE_URL).toBeTruthy();
  cluster.nodes.push(await startNode({ ...shared, HOOKRELAY_DATA_DIR: dataDirs[0]! }));
  cluster.key = await apiKey(cluster.nodes[0]!.url);
  await setup(cluster.nodes[0]!.url, cluster.key);
  for (const dir of dataDirs.slice(1)) cluster.nodes.push(await startNode({ ...shared, HOOKRELAY_DATA_DIR: dir }));
  return cluster;
}

async function apiKey(url: string): Promise<string> {
  const login = await fetch(`${url}/v1/auth/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(ADMIN) });
  const cookie = login.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
  const res = await fetch(`${url}/v1/auth/api-keys`, { method: "POST", headers: { cookie, origin: url, "content-type": "application/json" }, body: JSON.stringify({ name: "cluster" }) });
  return ((await res.json()) as { key: string }).key;
}

async function api(url: string, key: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${url}/v1${path}`, { method, headers: { "x-api-key": key, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as any };
}

/** A source fanned out to the sink's /a and /b; answers the source id. */
async function fanOut(url: string, key: string, sourceFields: Record<string, unknown> = {}): Promise<string> {
  const source = (await api(url, key, "POST", "/sources", { name: "cluster", ...sourceFields })).body.source;
  for (const path of ["/a", "/b"]) {
    const destination = (await api(url, key, "POST", "/destinations", { name: `sink ${path}`, url: `${sink.url}${path}` })).body.destination;
    const connection = await api(url, key, "POST", "/connections", { name: `cluster ${path}`, source_id: source.id, destination_id: destination.id });
    expect(connection.status).toBe(201);
  }
  return source.id;
}

async function ingest(node: Node, sourceId: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${node.url}/v1/ingest/${sourceId}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as { event_id?: string; duplicate?: boolean; original_event_id?: string } };
}

/** Distinct event ids the sink received at `path`, and how many requests that took. */
function receivedAt(path: string) {
  const ids = sink.requests.filter((r) => r.path === path).map((r) => r.headers["x-hookrelay-event-id"]!);
  return { ids: new Set(ids), requests: ids.length };
}

async function until(check: () => boolean | Promise<boolean>, timeoutMs: number, what: () => string) {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what()}`);
    await Bun.sleep(50);
  }
}

/** Acknowledged events not (yet) at each destination. */
function missing(acked: Set<string>) {
  return Object.fromEntries(["/a", "/b"].map((p) => [p, [...acked].filter((id) => !receivedAt(p).ids.has(id)).length]));
}

/** Deliveries this node's own workers made that succeeded (its /metrics count only its own process). */
async function deliveredBy(node: Node): Promise<number> {
  const text = await (await fetch(`${node.url}/metrics`)).text();
  let n = 0;
  for (const m of text.matchAll(/^hookrelay_deliveries_total\{([^}]*)\} (\S+)$/gm)) if (m[1]!.includes('outcome="success"')) n += Number(m[2]);
  return n;
}

describeOnly("postgres", "several serve nodes on one database", "nodes share one PostgreSQL database; SQLite is one process's file", () => {
  it("events ingested through every node reach each of their destinations, and every node delivers a share", async () => {
    sink = startSink();
    // A little latency: deliveries overlap, so no one node's worker keeps up with the whole stream alone.
    sink.respond = () => Bun.sleep(2).then(() => new Response("ok"));
    let sourceId = "";
    const { nodes } = await startCluster(3, async (url, key) => void (sourceId = await fanOut(url, key)));

    const acked = new Set<string>();
    const EVENTS = 300;
    let next = 0;
    await Promise.all(
      Array.from({ length: 12 }, async () => {
        for (let n = next++; n < EVENTS; n = next++) {
          const res = await ingest(nodes[n % nodes.length]!, sourceId, { type: "order.created", n });
          expect(res.status).toBe(200);
          acked.add(res.body.event_id!);
        }
      }),
    );
    expect(acked.size).toBe(EVENTS);

    await until(() => Object.values(missing(acked)).every((m) => m === 0), 60_000, () => `every event at /a and /b, missing ${JSON.stringify(missing(acked))}`);
    // Nothing went out twice: no node died, so no claim was delivered by two.
    expect(receivedAt("/a").requests).toBe(EVENTS);
    expect(receivedAt("/b").requests).toBe(EVENTS);
    const shares = await Promise.all(nodes.map(deliveredBy));
    expect(shares.reduce((a, b) => a + b, 0)).toBe(2 * EVENTS);
    expect(shares.filter((s) => s > 0).length, `deliveries per node: ${shares.join(", ")}`).toBeGreaterThan(1);
  }, 120_000);

  it("kill -9 of a node mid-stream loses no acknowledged event: each is stored and reaches its destinations, through the survivors", async () => {
    sink = startSink();
    // Slower than ingest: a backlog builds, so the killed node dies holding claimed rows it has not
    // sent yet (the sink records a request on arrival, so only those can be missing).
    sink.respond = () => Bun.sleep(50).then(() => new Response("ok"));
    let sourceId = "";
    const { nodes, key } = await startCluster(3, async (url, key) => void (sourceId = await fanOut(url, key)));
    const victim = nodes[1]!;
    const survivors = [nodes[0]!, nodes[2]!];

    const acked = new Set<string>();
    const EVENTS = 600;
    const KILL_AT = 300;
    let next = 0;
    let killed: Promise<unknown> | null = null;
    await Promise.all(
      Array.from({ length: 12 }, async () => {
        for (let n = next++; n < EVENTS; n = next++) {
          if (n === KILL_AT) {
            victim.proc.kill("SIGKILL");
            killed = victim.exited;
          }
          if (killed && n > KILL_AT) await killed;
          // A load balancer's view: a request the victim could not answer goes to a survivor.
          for (let tries = 0; ; tries++) {
            const live = killed ? survivors : nodes;
            const node = live[(n + tries) % live.length]!;
            try {
              const res = await ingest(node, sourceId, { type: "order.created", n });
              if (res.status === 200) acked.add(res.body.event_id!);
              break;
            } catch {
              // Refused or cut off by the kill: never acknowledged, so not owed; sent again elsewhere.
            }
          }
        }
      }),
    );
    expect(acked.size).toBeGreaterThanOrEqual(EVENTS);
    expect(victim.proc.exitCode === null && victim.proc.signalCode === "SIGKILL").toBe(true);

    // Every 200 is stored: a survivor finds each one.
    const notStored: string[] = [];
    const ids = [...acked];
    await Promise.all(
      Array.from({ length: 8 }, async (_, w) => {
        for (let i = w; i < ids.length; i += 8) if ((await api(survivors[i % 2]!.url, key, "GET", `/events/${ids[i]}`)).status !== 200) notStored.push(ids[i]!);
      }),
    );
    expect(notStored).toEqual([]);

    // …and reaches both destinations: the victim's claims in flight are delivered by the survivors once
    // its claims are handed back (it stops heartbeating) or their lease runs out.
    await until(() => Object.values(missing(acked)).every((m) => m === 0), 90_000, () => `every acknowledged event at /a and /b, missing ${JSON.stringify(missing(acked))}`);
    // Twice only what the victim had in flight when it died: at most what its worker holds.
    for (const path of ["/a", "/b"]) {
      const { ids: distinct, requests } = receivedAt(path);
      expect(requests - distinct.size, `duplicates at ${path}`).toBeLessThanOrEqual(HELD_PER_SLOT * CONCURRENCY);
    }
  }, 180_000);

  it("two nodes receiving the same provider retry at once store one unique event, delivered once", async () => {
    sink = startSink();
    let sourceId = "";
    const { nodes } = await startCluster(3, async (url, key) => {
      sourceId = await fanOut(url, key, { dedup_enabled: true, dedup_strategy: "header", dedup_field: "x-delivery-id", dedup_window_seconds: 3600 });
    });

    const KEYS = 20;
    const uniques = new Set<string>();
    for (let k = 0; k < KEYS; k++) {
      // The same delivery id reaches every node at the same moment.
      const answers = await Promise.all(nodes.map((node) => ingest(node, sourceId, { type: "order.created", k }, { "x-delivery-id": `dlv_${k}` })));
      expect(answers.map((a) => a.status)).toEqual(nodes.map(() => 200));
      const firsts = answers.filter((a) => !a.body.duplicate);
      expect(firsts, `key dlv_${k}: ${JSON.stringify(answers.map((a) => a.body))}`).toHaveLength(1);
      const original = firsts[0]!.body.event_id!;
      for (const a of answers.filter((a) => a.body.duplicate)) expect(a.body.original_event_id).toBe(original);
      uniques.add(original);
    }

    await until(() => Object.values(missing(uniques)).every((m) => m === 0), 60_000, () => `every unique event at /a and /b, missing ${JSON.stringify(missing(uniques))}`);
    // Duplicates are stored but never delivered: the sink saw exactly the unique ids.
    for (const path of ["/a", "/b"]) expect(receivedAt(path).ids).toEqual(uniques);
  }, 120_000);

  it("GET /v1/cluster on any node lists every node, and drops one killed with -9 once its heartbeats stop", async () => {
    const { nodes, key } = await startCluster(3, async () => {});
    const listed = async (node: Node) => (await api(node.url, key, "GET", "/cluster")).body.nodes as { id: string; address: string; self: boolean; scheduler: boolean }[];
    for (const node of nodes) {
      const all = await listed(node);
      expect(all).toHaveLength(3);
      expect(all.filter((n) => n.self)).toHaveLength(1);
      expect(all.filter((n) => n.scheduler)).toHaveLength(1);
    }
    const victim = nodes[2]!;
    const victimId = (await listed(victim)).find((n) => n.self)!.id;
    victim.proc.kill("SIGKILL");
    await victim.exited;
    // NODE_TIMEOUT_MS (15 s) without a heartbeat.
    await until(async () => (await listed(nodes[0]!)).every((n) => n.id !== victimId), 30_000, () => `${victimId} dropped from /v1/cluster`);
    expect(await listed(nodes[1]!)).toHaveLength(2);
  }, 60_000);

  it("an SSE stream on node A sees an event ingested through node B", async () => {
    let sourceId = "";
    const { nodes, key } = await startCluster(2, async (url, key) => {
      sourceId = (await api(url, key, "POST", "/sources", { name: "streamed" })).body.source.id;
    });
    const controller = new AbortController();
    const res = await fetch(`${nodes[0]!.url}/v1/events/stream`, { headers: { "x-api-key": key }, signal: controller.signal });
    expect(res.status).toBe(200);
    const messages = parseSse(res.body as unknown as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]();
    try {
      const sent = await ingest(nodes[1]!, sourceId, { hello: "from node B" });
      expect(sent.status).toBe(200);
      const seen: string[] = [];
      const timeout = setTimeout(() => controller.abort(), 10_000);
      for (let m = await messages.next(); !m.done; m = await messages.next()) {
        seen.push(m.value.id ?? "");
        if (m.value.id === sent.body.event_id) break;
      }
      clearTimeout(timeout);
      expect(seen).toContain(sent.body.event_id);
    } finally {
      controller.abort();
    }
  }, 60_000);
});
