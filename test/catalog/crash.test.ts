import { spawn, type ChildProcess } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../helpers/delivery";
import { ADMIN, tempDir } from "../helpers/server";
import { dropStore, onPostgres, storeEnv } from "../helpers/database";

/**
 * docs/catalog.md, "How a collection is built": `hookrelay serve` is killed with SIGKILL while events
 * stream in and a collection is being built from them, then restarted on
 * the same data dir. Every stored event must end up in the changelog
 * exactly once (none lost, none doubled), in received order per key.
 */
const ROOT = join(import.meta.dirname, "../..");
const BEFORE = 300;
const EVENTS = 1000;
const KEYS = 25;
let dataDir: string;
let child: ChildProcess | null = null;

beforeAll(() => {
  dataDir = tempDir("hookrelay-catalog-crash-");
});
afterAll(() => {
  child?.kill("SIGKILL");
  rmSync(dataDir, { recursive: true, force: true });
  return dropStore(dataDir);
});

async function serve(): Promise<{ url: string; proc: ChildProcess }> {
  const proc = spawn(process.execPath, ["cli/main.ts", "serve"], {
    cwd: ROOT,
    env: {
      ...process.env,
      HOOKRELAY_PORT: "0",
      HOOKRELAY_HOST: "127.0.0.1",
      // The data dir's store: on PostgreSQL runs, the same database across the restart.
      ...(await storeEnv(dataDir)),
      HOOKRELAY_ADMIN_EMAIL: ADMIN.email,
      HOOKRELAY_ADMIN_PASSWORD: ADMIN.password,
      HOOKRELAY_LOG_LEVEL: "warn",
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  child = proc;
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${out}`)), 15_000);
    proc.stderr!.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    proc.on("exit", (code) => reject(new Error(`serve exited ${code}: ${out}`)));
  });
  return { url, proc };
}

async function json(url: string, init: RequestInit = {}) {
  const res = await fetch(url, init);
  return { status: res.status, body: (await res.json()) as any };
}

async function apiKey(url: string): Promise<string> {
  const login = await fetch(`${url}/v1/auth/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(ADMIN) });
  const cookie = login.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
  const res = await json(`${url}/v1/auth/api-keys`, { method: "POST", headers: { cookie, origin: url, "content-type": "application/json" }, body: JSON.stringify({ name: "crash" }) });
  return res.body.key;
}

const keyOf = (n: number) => `key${n % KEYS}`;

describe("SIGKILL while a collection is being built", () => {
  it("loses and doubles no changelog entry, and keeps received order per key, after a restart", async () => {
    let { url, proc } = await serve();
    const key = await apiKey(url);
    const headers = { "x-api-key": key, "content-type": "application/json" };
    const source = (await json(`${url}/v1/sources`, { method: "POST", headers, body: JSON.stringify({ name: "crash" }) })).body.source;
    const send = (n: number) => fetch(`${url}/v1/ingest/${source.id}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ k: keyOf(n), n }) });

    // A backlog first, so the kill can come while it is being backfilled.
    let next = 0;
    await Promise.all(
      [1, 2, 3, 4].map(async () => {
        while (next < BEFORE) expect((await send(next++)).status).toBe(200);
      }),
    );
    const created = await json(`${url}/v1/collections`, { method: "POST", headers, body: JSON.stringify({ source_id: source.id, key_path: "k" }) });
    expect(created.status).toBe(201);
    const collection = created.body.collection.id;
    if (onPostgres) {
      // Builders on PostgreSQL read only events older than the read horizon (2 s, docs/scaling.md): let the backfill begin.
      await waitFor(async () => (await json(`${url}/v1/collections/${collection}`, { headers })).body.collection.events_processed > 0, { timeoutMs: 15_000, what: "the backfill begun" });
    }

    let killed = false;
    let restarted: Promise<void> | null = null;
    let atKill: any = null;
    const stream = async () => {
      while (next < BEFORE + EVENTS) {
        const n = next++;
        if (n === BEFORE + EVENTS / 2 && !killed) {
          killed = true;
          restarted = (async () => {
            atKill = (await json(`${url}/v1/collections/${collection}`, { headers })).body.collection;
            proc.kill("SIGKILL");
            await new Promise((r) => proc.once("exit", r));
            ({ url, proc } = await serve());
          })();
        }
        if (restarted && n > BEFORE + EVENTS / 2) await restarted;
        try {
          await send(n);
        } catch {
          // Cut off by the kill: never acknowledged; stored or not, the check below reads what was stored.
        }
      }
    };
    await Promise.all([stream(), stream(), stream(), stream()]);
    await restarted;
    expect(killed).toBe(true);
    // The builder had begun and was behind when the process died.
    expect(atKill.events_processed).toBeGreaterThan(0);
    expect(atKill.events_pending).toBeGreaterThan(0);

    const built = await waitFor(
      async () => {
        const c = (await json(`${url}/v1/collections/${collection}`, { headers })).body.collection;
        return c.events_pending === 0 && c.build_status === "live" ? c : null;
      },
      { timeoutMs: 60_000, what: "collection caught up after the restart" },
    );

    const stored: string[] = [];
    const changed = new Set<string>();
    let entries = 0;
    for (let k = 0; k < KEYS; k++) {
      const recordKey = `key${k}`;
      // The source's events holding this key, newest first: received order, reversed.
      const ids: string[] = [];
      let cursor: string | null = null;
      do {
        const q: Record<string, string> = { source_id: source.id, search: `"${recordKey}"`, limit: "100" };
        if (cursor) q.cursor = cursor;
        const page = (await json(`${url}/v1/events?${new URLSearchParams(q)}`, { headers })).body;
        ids.push(...page.events.map((e: { id: string }) => e.id));
        cursor = page.pagination.next_cursor;
      } while (cursor);
      stored.push(...ids);
      const log = (await json(`${url}/v1/collections/${collection}/records/${recordKey}/changelog?limit=100`, { headers })).body.changelog as any[];
      expect(log.map((e) => e.event_id)).toEqual(ids);
      for (let i = 0; i < log.length - 1; i++) expect(log[i].before_data).toBe(log[i + 1].after_data);
      expect(log[log.length - 1].change_type).toBe("created");
      for (const e of log) changed.add(e.event_id);
      entries += log.length;
    }
    expect(entries).toBe(changed.size);
    expect(stored.length).toBe(built.events_processed);
    expect(built.record_count).toBe(KEYS);
    console.log(`catalog crash: ${stored.length} events stored, killed at ${atKill.events_processed} processed / ${atKill.events_pending} pending (${atKill.build_status})`);
    proc.kill("SIGTERM");
    await new Promise((r) => proc.once("exit", r));
  });
});
