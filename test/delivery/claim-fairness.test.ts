import { itOnly } from "../helpers/database";
import { inArray } from "drizzle-orm";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { newId } from "../../src/contracts/ids";
import { deliveryAttempts, destinations } from "../../src/db/schema";
import { transaction } from "../../src/db/transaction";
import { claimBatch, type ClaimResult } from "../../src/delivery/queue";
import { insertQueuedAttempt } from "../../src/domain/deliveries";
import { createSource, insertEvent, scopeOf, type TestScope } from "../helpers/rows";
import type { TestServer } from "../helpers/server";
import { useServer } from "../helpers/fixture";

/**
 * The claim at outbound's scale (docs/performance.md, "Outbound fan-out") on a real database file:
 * thousands of destinations with rows waiting, one destination's backlog,
 * paused destinations. Destinations are written straight to the table,
 * paused, so the server's own worker leaves their rows alone; each claim
 * makes this test's destinations claimable inside one write transaction,
 * which the worker's cannot interleave with.
 */
let server: TestServer, key: string;
let scope: TestScope;
let eventId: string;
let mine: string[] = [];

useServer({}, (s) => ({ server, key } = s));
beforeAll(async () => {
  scope = await scopeOf(server, key);
  const source = await createSource(server, key);
  eventId = await insertEvent(server, scope, source.id, { body: "{}" });
});
beforeEach(async () => {
  await db().delete(deliveryAttempts);
  mine = [];
  // A claim over an empty queue ends any round an earlier test's claims left part done.
  await claimBatch(db(), { now: new Date(), limit: 1, exclude: [] });
});

const db = () => server.deps.db;
const past = (ms: number) => new Date(Date.now() - ms).toISOString();

/** `n` paused destinations, in id order (ids are time-ordered). */
async function makeDestinations(n: number): Promise<string[]> {
  const now = new Date().toISOString();
  const rows = Array.from({ length: n }, () => ({
    id: newId("destination"),
    orgId: scope.orgId,
    envId: scope.envId,
    name: "d",
    url: "http://127.0.0.1:9/never",
    signingSecret: "whsec_x",
    status: "paused",
    createdAt: now,
    updatedAt: now,
  }));
  for (let i = 0; i < rows.length; i += 500) await db().insert(destinations).values(rows.slice(i, i + 500));
  const ids = rows.map((r) => r.id);
  mine.push(...ids);
  return ids;
}

async function queue(destinationId: string, scheduledAt: string): Promise<string> {
  const id = newId("attempt");
  await insertQueuedAttempt(db(), {
    id,
    orgId: scope.orgId,
    envId: scope.envId,
    eventId,
    destinationId,
    requestUrl: "http://127.0.0.1:9/never",
    requestMethod: "POST",
    status: "queued",
    attemptNumber: 1,
    triggerType: "initial",
    scheduledAt,
    createdAt: new Date().toISOString(),
  });
  return id;
}

/** One claim with this test's destinations active except `stayPaused`. */
function claim(limit: number, stayPaused: string[] = []): Promise<ClaimResult> {
  const active = mine.filter((d) => !stayPaused.includes(d));
  const setStatus = async (ids: string[], status: string) => {
    for (let i = 0; i < ids.length; i += 500) await db().update(destinations).set({ status }).where(inArray(destinations.id, ids.slice(i, i + 500)));
  };
  return transaction(db(), async () => {
    await setStatus(active, "active");
    try {
      return await claimBatch(db(), { now: new Date(), limit, exclude: [] });
    } finally {
      await setStatus(active, "paused");
    }
  });
}

describe("claiming across many destinations", () => {
  it("goes round every destination, one row each, before any gives a second, claim after claim", async () => {
    const ids = await makeDestinations(300);
    for (const d of ids) for (let i = 0; i < 3; i++) await queue(d, past(10_000 - i));
    const seen: string[] = [];
    for (let c = 0; c < 6; c++) {
      const { rows } = await claim(50);
      expect(rows).toHaveLength(50);
      seen.push(...rows.map((r) => r.destinationId));
    }
    expect(new Set(seen).size).toBe(300);
  });

  it("lets the others through although one destination's backlog holds every one of the oldest due rows", async () => {
    const [backlog, ...others] = await makeDestinations(21);
    for (let i = 0; i < 500; i++) await queue(backlog!, past(60_000 - i));
    for (const d of others) await queue(d, past(1000));
    const { rows } = await claim(30);
    expect(rows).toHaveLength(30);
    const got = new Set(rows.map((r) => r.destinationId));
    for (const d of others) expect(got.has(d)).toBe(true);
    expect(rows.filter((r) => r.destinationId === backlog)).toHaveLength(10);
  });

  it("leaves a paused destination's backlog alone and still finds the others' rows behind it", async () => {
    const [paused, ...others] = await makeDestinations(6);
    for (let i = 0; i < 500; i++) await queue(paused!, past(60_000 - i));
    const theirs = await Promise.all(others.map((d) => queue(d, past(1000))));
    const result = await claim(10, [paused!]);
    expect(result.rows.map((r) => r.id).sort()).toEqual([...theirs].sort());
    expect(result.complete).toBe(true);
  });

  itOnly("sqlite", "stops part way round when most destinations have nothing due, takes the oldest due rows, and goes on with the next claim", "PostgreSQL's claim does not fill a batch from the oldest due rows (that scan would lock through a paused destination's backlog): it answers complete: false and the next claim goes on round (test/db/pg-queue.test.ts)", async () => {
    const ids = await makeDestinations(2000);
    for (const d of ids.slice(0, -1)) await queue(d, new Date(Date.now() + 3600_000).toISOString());
    const last = ids[ids.length - 1]!;
    const due: string[] = [];
    for (let i = 0; i < 500; i++) due.push(await queue(last, past(50_000 - i)));

    // A claim of 5 visits at most 64 destinations (WALK_MIN_VISITS): the due rows come from the oldest.
    const first = await claim(5);
    expect(first.complete).toBe(false);
    expect(first.rows.map((r) => r.id)).toEqual(due.slice(0, 5));

    // Claim after claim the walk goes on round the 2000 destinations, until the round is complete.
    let claims = 1;
    let result: ClaimResult;
    const taken = first.rows.map((r) => r.id);
    do {
      result = await claim(5);
      expect(result.rows).toHaveLength(5);
      taken.push(...result.rows.map((r) => r.id));
      claims++;
    } while (!result.complete && claims < 100);
    expect(result.complete).toBe(true);
    expect(claims).toBeGreaterThanOrEqual(Math.floor(2000 / 64));
    expect(claims).toBeLessThanOrEqual(Math.ceil(2000 / 64) + 1);
    expect(new Set(taken)).toEqual(new Set(due.slice(0, taken.length)));
  });

  it("takes every due row at once when there are no more than the batch, across destinations, in turns", async () => {
    const ids = await makeDestinations(4);
    const rows: string[] = [];
    for (const [n, d] of ids.entries()) for (let i = 0; i <= n; i++) rows.push(await queue(d, past(9000 - i)));
    const result = await claim(20);
    expect(result.complete).toBe(true);
    expect(result.rows.map((r) => r.id).sort()).toEqual([...rows].sort());
    // The first four are one of each destination.
    expect(new Set(result.rows.slice(0, 4).map((r) => r.destinationId)).size).toBe(4);
  });
});
