import { SQL } from "bun";
import { eq, inArray } from "drizzle-orm";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { newId } from "../../src/contracts/ids";
import type { Db } from "../../src/db/db";
import { deliveryAttempts, destinations, environments, events, organizations, sources } from "../../src/db/schema";
import { type Store } from "../../src/db/store";
import { openStore } from "../../src/db/openStore";
import { transaction } from "../../src/db/transaction";
import { claimBatch, LEASE_MS, type AttemptRow } from "../../src/delivery/queue";
import { recordOutcomes, type AttemptOutcome } from "../../src/delivery/outcomes";
import { insertQueuedAttempts, type AttemptInsert } from "../../src/domain/deliveries";
import { describeOnly, emptyPgDatabase, onPostgres } from "../helpers/database";

/**
 * The delivery queue on PostgreSQL (PostgreSQL only: SQLite has one writer,
 * and test/delivery/queue.test.ts covers its claim): claims lock with FOR
 * UPDATE SKIP LOCKED and are fair across destinations, a paused
 * destination's rows are never locked, concurrent claimers never share a
 * row, and a batch's outcomes are written in one statement, lease-guarded.
 */
let cluster: { url: string; stop(): void };
let store: Store;
let dataDir: string;
/** A second connection, outside the store's pool: sees what the store's open transactions lock. */
let observer: SQL;
const db = (): Db => store.db;

const scope = { orgId: newId(), envId: newId() };
let sourceId: string;
const eventIds: string[] = [];

beforeAll(async () => {
  if (!onPostgres) return;
  cluster = await emptyPgDatabase();
  dataDir = mkdtempSync(join(tmpdir(), "hookrelay-pg-queue-"));
  store = await openStore({ dataDir, databaseUrl: cluster.url });
  observer = new SQL({ url: cluster.url, max: 1 });
  const now = new Date().toISOString();
  await db().insert(organizations).values({ id: scope.orgId, name: "o", slug: `o-${scope.orgId}`, createdAt: now });
  await db().insert(environments).values({ id: scope.envId, orgId: scope.orgId, name: "production", slug: "production", createdAt: now, updatedAt: now });
  sourceId = newId("source");
  await db().insert(sources).values({ id: sourceId, ...scope, slug: "s", name: "s", createdAt: now, updatedAt: now } as typeof sources.$inferInsert);
  for (let i = 0; i < 4; i++) {
    const id = newId("event");
    eventIds.push(id);
    await db()
      .insert(events)
      .values({ id, ...scope, sourceId, method: "POST", headers: "{}", body: Buffer.from("{}"), payloadSize: 2, verificationStatus: "none", dedupStatus: "unique", status: "pending", receivedAt: now } as typeof events.$inferInsert);
  }
}, 60_000);

afterAll(async () => {
  if (!onPostgres) return;
  await observer?.close();
  await store?.close();
  cluster?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

beforeEach(async () => {
  if (!onPostgres) return;
  await db().delete(deliveryAttempts);
  await db().delete(destinations);
  await db().update(events).set({ status: "pending" });
});

async function makeDestination(status = "active"): Promise<string> {
  const id = newId("destination");
  const now = new Date().toISOString();
  await db().insert(destinations).values({ id, ...scope, name: "d", url: "http://127.0.0.1:9/never", signingSecret: "whsec_x", status, createdAt: now, updatedAt: now });
  return id;
}

/** `n` due rows of a destination, the oldest first; answers their ids. */
async function queue(destinationId: string, n: number, eventId = eventIds[0]!, connectionId: string | null = "con_test"): Promise<string[]> {
  const base = Date.now() - 60_000;
  const rows: AttemptInsert[] = Array.from({ length: n }, (_, i) => ({
    id: newId("attempt"),
    ...scope,
    eventId,
    connectionId,
    destinationId,
    requestUrl: "http://127.0.0.1:9/never",
    requestMethod: "POST",
    status: "queued",
    attemptNumber: 1,
    triggerType: "initial",
    scheduledAt: new Date(base + i).toISOString(),
    createdAt: new Date().toISOString(),
  }));
  for (let i = 0; i < rows.length; i += 200) await insertQueuedAttempts(db(), rows.slice(i, i + 200));
  return rows.map((r) => r.id);
}

const claim = (limit: number, opts: { now?: Date; exclude?: string[]; on?: Db } = {}) =>
  transaction(opts.on ?? db(), () => claimBatch(opts.on ?? db(), { now: opts.now ?? new Date(), limit, exclude: opts.exclude ?? [] }));

/** Rows of a destination that another connection could lock now. */
async function lockableBy(destinationId: string): Promise<number> {
  const [row] = await observer`SELECT count(*)::int AS n FROM (SELECT id FROM delivery_attempts WHERE destination_id = ${destinationId} FOR UPDATE SKIP LOCKED) x`;
  return (row as { n: number }).n;
}

function outcome(attempt: AttemptRow, status: "success" | "failed", extra: Partial<AttemptOutcome> = {}): AttemptOutcome {
  return {
    attempt,
    status,
    requestUrl: "http://127.0.0.1:9/never",
    requestMethod: "POST",
    requestHeaders: "{}",
    requestBodySize: 2,
    responseStatus: status === "success" ? 200 : 500,
    responseHeaders: "{}",
    responseBody: status === "success" ? "ok" : "boom",
    durationMs: 3,
    sentAt: new Date(),
    error: status === "success" ? null : "http_500",
    errorDetail: status === "success" ? null : "destination answered HTTP 500",
    retryAt: null,
    dlq: status === "failed",
    ...extra,
  };
}

const attempt = async (id: string) => (await db().select().from(deliveryAttempts).where(eq(deliveryAttempts.id, id)))[0]!;

describeOnly("postgres", "the delivery queue on PostgreSQL", "PostgreSQL's own locking and statements, on the run's cluster", () => {
  it("gives every destination rows in the first batch although one has a 500-row backlog, and never claims a paused one's", async () => {
    const backlog = await makeDestination();
    const small = [await makeDestination(), await makeDestination(), await makeDestination(), await makeDestination()];
    const paused = await makeDestination("paused");
    await queue(backlog, 500);
    for (const d of small) await queue(d, 3);
    await queue(paused, 100);

    const first = await claim(16);
    expect(first.rows).toHaveLength(16);
    const got = new Set(first.rows.map((r) => r.destinationId));
    for (const d of small) expect(got.has(d)).toBe(true);
    // Destinations take turns: the first five rows are one of each.
    expect(new Set(first.rows.slice(0, 5).map((r) => r.destinationId)).size).toBe(5);
    for (const r of first.rows) expect(r).toMatchObject({ leaseUntil: expect.any(String), attemptNumber: 1, noRetry: 0, forced: 0 });

    // Claim after claim until nothing is due: the paused destination's rows stay queued.
    let claimed = first.rows.length;
    for (let rows = first.rows; rows.length > 0; claimed += rows.length) rows = (await claim(128)).rows;
    expect(claimed).toBe(500 + 12);
    const pausedRows = await db().select({ status: deliveryAttempts.status }).from(deliveryAttempts).where(eq(deliveryAttempts.destinationId, paused));
    expect(pausedRows.every((r) => r.status === "queued")).toBe(true);
  });

  it("fills every claim from one destination's backlog, whatever the sizes of the claims before it", async () => {
    const d = await makeDestination();
    await queue(d, 200);
    const got: number[] = [];
    // A claim that stopped on the destination its round began with once left the next an empty lap: nothing claimed, "complete".
    for (const limit of [32, 1, 32, 5, 32]) got.push((await claimBatch(db(), { now: new Date(), limit, exclude: [] })).rows.length);
    expect(got).toEqual([32, 1, 32, 5, 32]);
  });

  it("locks none of a paused destination's rows while a claim is open, and leaves an excluded destination alone", async () => {
    const active = await makeDestination();
    const excluded = await makeDestination();
    const paused = await makeDestination("paused");
    await queue(active, 5);
    await queue(excluded, 5);
    await queue(paused, 100);

    await transaction(db(), async () => {
      const { rows } = await claimBatch(db(), { now: new Date(), limit: 50, exclude: [excluded] });
      expect(rows.map((r) => r.destinationId)).toEqual(Array(5).fill(active));
      // The claim's transaction is still open: any row it had locked would be skipped here.
      expect(await lockableBy(paused)).toBe(100);
      expect(await lockableBy(excluded)).toBe(5);
      expect(await lockableBy(active)).toBe(0);
    });
  });

  it("never gives two concurrent claimers the same row", async () => {
    const ds = [await makeDestination(), await makeDestination(), await makeDestination()];
    await queue(ds[0]!, 300);
    await queue(ds[1]!, 40);
    await queue(ds[2]!, 10);
    // A second node: its own pool and its own walk over destinations.
    const other = await openStore({ dataDir, databaseUrl: cluster.url });
    try {
      // The first claimer holds its rows (its transaction open) while the second claims.
      let letGo!: () => void;
      const held = new Promise<void>((r) => (letGo = r));
      let claimedFirst!: () => void;
      const firstClaimed = new Promise<void>((r) => (claimedFirst = r));
      const first = transaction(db(), async () => {
        const batch = await claimBatch(db(), { now: new Date(), limit: 60, exclude: [] });
        claimedFirst();
        await held;
        return batch.rows;
      });
      await firstClaimed;
      const second = await claim(60, { on: other.db });
      letGo();
      const a = (await first).map((r) => r.id);
      const b = second.rows.map((r) => r.id);
      expect(a).toHaveLength(60);
      expect(b).toHaveLength(60);
      expect(a.filter((id) => b.includes(id))).toEqual([]);

      // Many claimers at once, on both nodes, until the queue is drained: every row exactly once.
      const seen = [...a, ...b];
      const drain = async (on: Db) => {
        for (;;) {
          const { rows } = await claim(25, { on });
          if (rows.length === 0) return;
          seen.push(...rows.map((r) => r.id));
        }
      };
      await Promise.all([drain(db()), drain(db()), drain(other.db), drain(other.db)]);
      expect(seen).toHaveLength(350);
      expect(new Set(seen).size).toBe(350);
    } finally {
      await other.close();
    }
  });

  it("writes nothing for an outcome whose lease ran out and was claimed again", async () => {
    const d = await makeDestination();
    await queue(d, 1);
    const [old] = (await claim(1)).rows;
    const [again] = (await claim(10, { now: new Date(Date.now() + LEASE_MS + 1000) })).rows;
    expect(again!.id).toBe(old!.id);
    expect(again!.leaseUntil).not.toBe(old!.leaseUntil);

    const recorded = await transaction(db(), () => recordOutcomes(db(), [outcome(old!, "success")], new Date()));
    expect(recorded.stale).toBe(1);
    expect(recorded.changedEvents).toEqual([]);
    expect(await attempt(old!.id)).toMatchObject({ status: "delivering", leaseUntil: again!.leaseUntil, responseStatus: null });
  });

  it("records a batch's outcomes, queues its retries and settles its events", async () => {
    const d = await makeDestination();
    const [delivered, failed, retried] = [eventIds[1]!, eventIds[2]!, eventIds[3]!];
    const [ok] = await queue(d, 1, delivered);
    const [dead] = await queue(d, 1, failed);
    const [again] = await queue(d, 1, retried);
    const stale = (await queue(d, 1, delivered))[0]!;
    const rows = (await claim(10)).rows;
    const byId = new Map(rows.map((r) => [r.id, r]));
    const retryAt = new Date(Date.now() + 30_000);
    // One of the batch lost its lease meanwhile (another claim took it over).
    await db().update(deliveryAttempts).set({ leaseUntil: "2999-01-01T00:00:00.000Z" }).where(eq(deliveryAttempts.id, stale));

    const recorded = await transaction(db(), () =>
      recordOutcomes(
        db(),
        [outcome(byId.get(ok!)!, "success"), outcome(byId.get(dead!)!, "failed"), outcome(byId.get(again!)!, "failed", { dlq: false, retryAt }), outcome(byId.get(stale)!, "success")],
        new Date(),
      ),
    );

    expect(recorded.stale).toBe(1);
    expect(recorded.retriesQueued).toBe(1);
    expect(recorded.changedEvents.map((e) => [e.id, e.status]).sort()).toEqual([[failed, "failed"]]);
    expect(await attempt(ok!)).toMatchObject({ status: "success", responseStatus: 200, responseBody: "ok", durationMs: 3, leaseUntil: null, isDlq: 0 });
    expect(await attempt(dead!)).toMatchObject({ status: "failed", responseStatus: 500, error: "http_500", isDlq: 1, leaseUntil: null });
    expect((await attempt(dead!)).dlqAt).not.toBeNull();
    expect(await attempt(stale)).toMatchObject({ status: "delivering", responseStatus: null });
    const chain = await db().select().from(deliveryAttempts).where(eq(deliveryAttempts.eventId, retried));
    expect(chain.map((a) => [a.attemptNumber, a.status, a.triggerType]).sort()).toEqual([
      [1, "failed", "initial"],
      [2, "queued", "retry"],
    ]);
    expect(chain.find((a) => a.attemptNumber === 1)!.nextRetryAt).toBe(retryAt.toISOString());
    // The delivered event still has a delivery outstanding (the stale one): its status waits.
    const statuses = await db().select({ id: events.id, status: events.status }).from(events).where(inArray(events.id, [delivered, retried]));
    expect(statuses.map((e) => e.status)).toEqual(["pending", "pending"]);
  });

  it("settles a delivery without a connection (an application endpoint's) through message counters and endpoint health", async () => {
    const d = await makeDestination();
    const [id] = await queue(d, 1, eventIds[1]!, null);
    const [row] = (await claim(1)).rows;
    expect(row!.id).toBe(id);
    const recorded = await transaction(db(), () => recordOutcomes(db(), [outcome(row!, "failed", { error: "timeout" })], new Date(), { endpointDisableAfterMs: 0 }));
    // No message row for this event: the engine settles it by its attempts.
    expect(recorded.changedEvents.map((e) => [e.id, e.status])).toEqual([[eventIds[1], "failed"]]);
    expect(recorded.disabledDestinations).toEqual([]);
  });
});
