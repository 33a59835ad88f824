/**
 * One scheduler at a time (docs/scaling.md, "One scheduler"): of the nodes sharing one
 * PostgreSQL database, one holds the scheduler lease and runs the
 * cluster-wide jobs; when it stops, dies or loses its connection, another
 * takes the lease over within a bounded time. And nodes starting at once on
 * an empty database create one admin, not one each.
 */
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { LEASE_RETRY_MS, LEASE_TAKEOVER_MS } from "../../src/cluster/schedulerLease";
import { SCHEDULER_LOCK } from "../../src/db/pg/lockKeys";
import { lockOwner } from "../../src/db/pg/sessionLock";
import { pgRows } from "../../src/db/pg/rows";
import { type Store } from "../../src/db/store";
import { openStore } from "../../src/db/openStore";
import { bootstrap } from "../../src/domain/bootstrap";
import { systemClock } from "../../src/core/clock";
import { organizations, users } from "../../src/db/schema";
import { sql } from "drizzle-orm";
import { cliEnv } from "../cli/helpers";
import { describeOnly, dropStore, emptyDatabaseUrl, storeEnv } from "../helpers/database";
import { waitFor } from "../helpers/delivery";
import { ADMIN, call, startTestServer, tempDir, type TestServer } from "../helpers/server";

const root = join(import.meta.dirname, "../..");
const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {});
});

/** A database the nodes of one test share, and a store of the test's own to look at it. */
async function sharedDatabase() {
  const dir = tempDir();
  const env = await storeEnv(dir);
  const observer = await openStore({ dataDir: dir, databaseUrl: env.HOOKRELAY_DATABASE_URL });
  cleanups.push(() => dropStore(dir), () => observer.close());
  return { env, observer };
}

/** A serve node in this process on the shared database (its data dir its own). */
async function node(env: Record<string, string>): Promise<TestServer> {
  const server = await startTestServer({ HOOKRELAY_DATABASE_URL: env.HOOKRELAY_DATABASE_URL!, HOOKRELAY_SECRET_KEY: env.HOOKRELAY_SECRET_KEY! });
  cleanups.push(() => server.close());
  return server;
}

const holder = (observer: Store) => lockOwner(observer.db, SCHEDULER_LOCK);

describeOnly("postgres", "the scheduler lease", "on SQLite the one node always holds it", () => {
  it("is held by one node of two, and both list the same scheduler", async () => {
    const { env, observer } = await sharedDatabase();
    const a = await node(env);
    const b = await node(env);
    expect([a.lease.held(), b.lease.held()]).toEqual([true, false]);
    expect(await holder(observer)).toBe(a.deps.node.id);
    for (const self of [a, b]) {
      const { body } = await call(self, "GET", "/v1/cluster", { key: await self.apiKey("read") });
      expect(body.nodes.map((n: { id: string; self: boolean; scheduler: boolean }) => [n.id, n.self, n.scheduler])).toEqual([
        [a.deps.node.id, self === a, true],
        [b.deps.node.id, self === b, false],
      ]);
    }
  });

  it("moves to the other node when the scheduler stops, at its next try", async () => {
    const { env, observer } = await sharedDatabase();
    const a = await node(env);
    const b = await node(env);
    expect(a.lease.held()).toBe(true);
    const stoppedAt = Date.now();
    await a.stop();
    await waitFor(async () => b.lease.held(), { timeoutMs: LEASE_RETRY_MS + 2000, what: "b to take the lease" });
    expect(Date.now() - stoppedAt).toBeLessThan(LEASE_RETRY_MS + 2000);
    expect(await holder(observer)).toBe(b.deps.node.id);
    // The stopped node left the live set at once.
    const { body } = await call(b, "GET", "/v1/cluster", { key: await b.apiKey("read") });
    expect(body.nodes.map((n: { id: string; scheduler: boolean }) => [n.id, n.scheduler])).toEqual([[b.deps.node.id, true]]);
  });

  it("moves to a survivor within a bounded time when the scheduler's process is killed", async () => {
    const { env, observer } = await sharedDatabase();
    const proc = Bun.spawn([process.execPath, join(root, "cli/main.ts"), "serve"], {
      cwd: root,
      env: cliEnv({ ...env, HOOKRELAY_DATA_DIR: tempDir(), HOOKRELAY_PORT: "0", HOOKRELAY_HOST: "127.0.0.1", HOOKRELAY_ADMIN_EMAIL: ADMIN.email, HOOKRELAY_ADMIN_PASSWORD: ADMIN.password }),
      stdout: "ignore",
      stderr: "ignore",
    });
    cleanups.push(async () => proc.kill("SIGKILL"));
    const killed = await waitFor(() => holder(observer), { timeoutMs: 20_000, what: "the serve process to take the lease" });
    const survivor = await node(env);
    expect(survivor.lease.held()).toBe(false);

    const killedAt = Date.now();
    proc.kill("SIGKILL");
    await proc.exited;
    await waitFor(async () => survivor.lease.held(), { timeoutMs: LEASE_TAKEOVER_MS, what: "the survivor to take the lease" });
    // The killed process's socket closed: no server timeout to wait for, only the survivor's next try.
    expect(Date.now() - killedAt).toBeLessThan(LEASE_RETRY_MS + 2000);
    expect(await holder(observer)).toBe(survivor.deps.node.id);
    expect(killed).not.toBe(survivor.deps.node.id);
  });

  it("is given up by a node whose lease connection breaks, and held again by one node", async () => {
    const { env, observer } = await sharedDatabase();
    const a = await node(env);
    const b = await node(env);
    const seenByA: boolean[] = [];
    a.lease.watch((held) => seenByA.push(held));
    await pgRows(observer.db, sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = ${"hookrelay " + a.deps.node.id}`);
    await waitFor(async () => seenByA.includes(false), { timeoutMs: LEASE_RETRY_MS + 2000, what: "a to notice it lost the lease" });
    const next = await waitFor(() => holder(observer), { timeoutMs: LEASE_RETRY_MS + 2000, what: "a node to take the lease again" });
    const holders = [a, b].filter((n) => n.lease.held());
    expect(holders.map((n) => n.deps.node.id)).toEqual([next]);
  });
});

describeOnly("postgres", "the admin bootstrap", "on SQLite one serve owns the data dir", () => {
  it("creates one org, environment and admin when several nodes start at once on an empty database", async () => {
    const url = await emptyDatabaseUrl();
    const stores = await Promise.all([1, 2, 3].map(() => openStore({ dataDir: tempDir(), databaseUrl: url })));
    cleanups.push(() => Promise.all(stores.map((s) => s.close())));
    const results = await Promise.all(stores.map((s) => bootstrap(s.db, systemClock, ADMIN)));
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(results.map((r) => r.email)).toEqual([ADMIN.email, ADMIN.email, ADMIN.email]);
    expect(await stores[0]!.db.select().from(organizations)).toHaveLength(1);
    expect(await stores[0]!.db.select().from(users)).toHaveLength(1);
  });
});
