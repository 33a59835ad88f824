import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { newId } from "../../src/contracts/ids";
import { deliveryAttempts, destinations, events } from "../../src/db/schema";
import { transaction } from "../../src/db/transaction";
import { claimDue, LEASE_MS, type AttemptRow } from "../../src/delivery/queue";
import { recordOutcomes, type AttemptOutcome } from "../../src/delivery/outcomes";
import { insertQueuedAttempt } from "../../src/domain/deliveries";
import { createDestination } from "../helpers/delivery";
import { createSource, insertEvent, scopeOf, type TestScope } from "../helpers/rows";
import type { TestServer } from "../helpers/server";
import { useServer } from "../helpers/fixture";

/**
 * The queue's batch statements on a real database file: one statement
 * claims a batch, one records its outcomes, one settles its events.
 * The destination stays paused so the server's own worker leaves these rows
 * alone; each test makes it claimable only inside one write transaction,
 * which the worker's cannot interleave with.
 */
let server: TestServer, key: string;
let scope: TestScope;
let sourceId: string;
let destinationId: string;

useServer({}, (s) => ({ server, key } = s));
beforeAll(async () => {
  scope = await scopeOf(server, key);
  sourceId = (await createSource(server, key)).id;
  destinationId = await createDestination(server, key, { url: "http://127.0.0.1:9/never", status: "paused" });
});

const db = () => server.deps.db;

async function pendingEvent(): Promise<string> {
  const id = await insertEvent(server, scope, sourceId, { body: "{}" });
  await db().update(events).set({ status: "pending" }).where(eq(events.id, id));
  return id;
}

async function queue(eventId: string, scheduledAt = new Date(Date.now() - 1000)): Promise<string> {
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
    scheduledAt: scheduledAt.toISOString(),
    createdAt: new Date().toISOString(),
  });
  return id;
}

/** Claims what is due of the test destination, in one write transaction. */
function claim(limit: number, now = new Date(), oneEach?: ReadonlySet<string>): Promise<AttemptRow[]> {
  return transaction(db(), async () => {
    await db().update(destinations).set({ status: "active" }).where(eq(destinations.id, destinationId));
    try {
      return await claimDue(db(), { now, limit, exclude: [], oneEach });
    } finally {
      await db().update(destinations).set({ status: "paused" }).where(eq(destinations.id, destinationId));
    }
  });
}

function outcome(attempt: AttemptRow, status: "success" | "failed", extra: Partial<AttemptOutcome> = {}): AttemptOutcome {
  return {
    attempt,
    status,
    requestUrl: "http://127.0.0.1:9/never",
    requestMethod: "POST",
    requestHeaders: JSON.stringify({ "content-type": "application/json" }),
    requestBodySize: 2,
    responseStatus: status === "success" ? 200 : 500,
    responseHeaders: JSON.stringify({ "content-type": "text/plain" }),
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

const attemptRow = async (id: string) => (await db().select().from(deliveryAttempts).where(eq(deliveryAttempts.id, id)))[0]!;
const eventStatus = async (id: string) => (await db().select({ status: events.status }).from(events).where(eq(events.id, id)))[0]!.status;

describe("claiming a batch", () => {
  it("takes due rows oldest first up to the limit, marks them delivering with one lease, and leaves rows not yet due", async () => {
    const eventId = await pendingEvent();
    const ids = await Promise.all([0, 1, 2].map((i) => queue(eventId, new Date(Date.now() - 3000 + i * 1000))));
    const later = await queue(eventId, new Date(Date.now() + 60_000));
    const now = new Date();

    const first = await claim(2, now);
    expect(first.map((r) => r.id)).toEqual(ids.slice(0, 2));
    const lease = new Date(now.getTime() + LEASE_MS).toISOString();
    for (const r of first) {
      expect(r.leaseUntil).toBe(lease);
      expect(await attemptRow(r.id)).toMatchObject({ status: "delivering", leaseUntil: lease });
    }
    expect((await claim(10, now)).map((r) => r.id)).toEqual([ids[2]]);
    expect((await attemptRow(later)).status).toBe("queued");
  });

  it("takes one row at most of a rate-limited destination", async () => {
    const eventId = await pendingEvent();
    const ids = await Promise.all([0, 1, 2].map((i) => queue(eventId, new Date(Date.now() - 3000 + i * 1000))));
    expect((await claim(10, new Date(), new Set([destinationId]))).map((r) => r.id)).toEqual([ids[0]]);
    expect((await claim(10)).map((r) => r.id)).toEqual(ids.slice(1));
  });
});

describe("recording a batch of outcomes", () => {
  it("stores each attempt's details and settles each event by all its deliveries", async () => {
    const delivered = await pendingEvent();
    const failed = await pendingEvent();
    const waiting = await pendingEvent();
    const d1 = await queue(delivered);
    const f1 = await queue(failed);
    const f2 = await queue(failed);
    const w1 = await queue(waiting);
    await queue(waiting, new Date(Date.now() + 60_000)); // still outstanding afterwards
    const rows = await claim(10);
    expect(rows.map((r) => r.id).sort()).toEqual([d1, f1, f2, w1].sort());
    const byId = new Map(rows.map((r) => [r.id, r]));

    const recorded = await transaction(db(), () =>
      recordOutcomes(db(), [outcome(byId.get(d1)!, "success"), outcome(byId.get(f1)!, "success"), outcome(byId.get(f2)!, "failed"), outcome(byId.get(w1)!, "success")], new Date()),
    );

    expect(recorded.stale).toBe(0);
    expect(recorded.changedEvents.map((e) => [e.id, e.status]).sort()).toEqual(
      [
        [delivered, "delivered"],
        [failed, "failed"],
      ].sort(),
    );
    expect(await eventStatus(delivered)).toBe("delivered");
    expect(await eventStatus(failed)).toBe("failed");
    expect(await eventStatus(waiting)).toBe("pending");
    expect(await attemptRow(d1)).toMatchObject({ status: "success", responseStatus: 200, responseBody: "ok", durationMs: 3, leaseUntil: null, isDlq: 0 });
    expect(await attemptRow(f2)).toMatchObject({ status: "failed", responseStatus: 500, error: "http_500", isDlq: 1, leaseUntil: null });
    expect((await attemptRow(f2)).dlqAt).not.toBeNull();
  });

  it("queues the next try of a failure that will be retried, and leaves the event's status alone", async () => {
    const eventId = await pendingEvent();
    const first = await queue(eventId);
    const [row] = await claim(1);
    const retryAt = new Date(Date.now() + 30_000);
    await transaction(db(), () => recordOutcomes(db(), [outcome(row!, "failed", { dlq: false, retryAt })], new Date()));

    const chain = await db().select().from(deliveryAttempts).where(eq(deliveryAttempts.eventId, eventId));
    expect(chain).toHaveLength(2);
    expect(chain.find((a) => a.id === first)).toMatchObject({ status: "failed", isDlq: 0, nextRetryAt: retryAt.toISOString() });
    expect(chain.find((a) => a.id !== first)).toMatchObject({ status: "queued", attemptNumber: 2, triggerType: "retry", scheduledAt: retryAt.toISOString() });
    expect(await eventStatus(eventId)).toBe("pending");
  });

  it("carries a forced delivery's flag on to its next try", async () => {
    const eventId = await pendingEvent();
    const first = await queue(eventId);
    await db().update(deliveryAttempts).set({ forced: 1 }).where(eq(deliveryAttempts.id, first));
    const [row] = await claim(1);
    expect(row!.forced).toBe(1);
    await transaction(db(), () => recordOutcomes(db(), [outcome(row!, "failed", { dlq: false, retryAt: new Date(Date.now() + 30_000) })], new Date()));
    const chain = await db().select().from(deliveryAttempts).where(eq(deliveryAttempts.eventId, eventId)).orderBy(deliveryAttempts.attemptNumber);
    expect(chain.map((a) => [a.attemptNumber, a.forced])).toEqual([
      [1, 1],
      [2, 1],
    ]);
  });

  it("writes nothing for an outcome whose lease was taken over by a later claim", async () => {
    const eventId = await pendingEvent();
    await queue(eventId);
    const [old] = await claim(1);
    // The lease runs out (a worker that hung): the row is claimed again, with a new lease.
    const again = (await claim(100, new Date(Date.now() + LEASE_MS + 1000))).find((r) => r.id === old!.id);
    expect(again).toBeDefined();
    expect(again!.leaseUntil).not.toBe(old!.leaseUntil);

    const recorded = await transaction(db(), () => recordOutcomes(db(), [outcome(old!, "success")], new Date()));
    expect(recorded.stale).toBe(1);
    expect(recorded.changedEvents).toEqual([]);
    expect(await attemptRow(old!.id)).toMatchObject({ status: "delivering", leaseUntil: again!.leaseUntil, responseStatus: null });
    expect(await eventStatus(eventId)).toBe("pending");
  });
});

describe("settling an ordered line's head", () => {
  /** A line `lane` of three rows: the head queued, two held behind it (received one second apart). */
  async function line(lane: string): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const id = newId("attempt");
      await insertQueuedAttempt(db(), {
        id,
        orgId: scope.orgId,
        envId: scope.envId,
        eventId: await pendingEvent(),
        destinationId,
        requestUrl: "http://127.0.0.1:9/never",
        requestMethod: "POST",
        status: i === 0 ? "queued" : "held",
        attemptNumber: 1,
        triggerType: "initial",
        scheduledAt: new Date(Date.now() - 10_000 + i * 1000).toISOString(),
        orderingLane: lane,
        orderingKey: lane,
        orderingHold: 0,
        createdAt: new Date().toISOString(),
      });
      ids.push(id);
    }
    return ids;
  }

  it("claims the next row for the worker that recorded the head, in the same transaction, and leaves the one behind it held", async () => {
    const [head, next, last] = await line(`L-${newId("attempt")}`);
    const [claimed] = (await claim(10)).filter((r) => r.id === head);
    const lease = new Date(Date.now() + LEASE_MS).toISOString();
    const recorded = await transaction(db(), () => recordOutcomes(db(), [outcome(claimed!, "success")], new Date(), { claimNext: { lease, claimedBy: null } }));
    expect(recorded.claimedHeads.map((r) => r.id)).toEqual([next]);
    expect(recorded.claimedHeads[0]).toMatchObject({ leaseUntil: lease, orderingLane: claimed!.orderingLane });
    expect(recorded.promoted).toBe(0);
    expect(await attemptRow(next!)).toMatchObject({ status: "delivering", leaseUntil: lease });
    expect((await attemptRow(last!)).status).toBe("held");
    // The claimed head records like any claimed row, and the line moves on to the last.
    const after = await transaction(db(), () => recordOutcomes(db(), [outcome(recorded.claimedHeads[0]!, "success")], new Date(), { claimNext: { lease, claimedBy: null } }));
    expect(after.stale).toBe(0);
    expect(after.claimedHeads.map((r) => r.id)).toEqual([last]);
  });

  it("queues the next row, due now, when the recorder does not claim it", async () => {
    const [head, next, last] = await line(`L-${newId("attempt")}`);
    const [claimed] = (await claim(10)).filter((r) => r.id === head);
    const recorded = await transaction(db(), () => recordOutcomes(db(), [outcome(claimed!, "success")], new Date()));
    expect(recorded.promoted).toBe(1);
    expect(recorded.claimedHeads).toEqual([]);
    expect((await attemptRow(next!)).status).toBe("queued");
    expect((await attemptRow(last!)).status).toBe("held");
  });
});
