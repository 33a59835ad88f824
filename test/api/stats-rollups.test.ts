/**
 * GET /v1/stats reads hourly rollups the database keeps as rows are written
 * (src/db/schema/rollups.ts). These tests change stored rows the ways the
 * product does (a status change, retention, a cascade, the upgrade that
 * creates the rollups over rows already stored) and check the answer and
 * the rollups against the rows themselves.
 */
import { and, eq, lt, sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { manualClock } from "../../src/core/clock";
import { attemptHours, deliveryAttempts, eventHours, events } from "../../src/db/schema";
import { pruneOldEvents } from "../../src/domain/retention";
import { migrations, pgMigrations } from "../../src/generated/migrations.gen";
import { onPostgres } from "../helpers/database";
import { pipeline, sendEvent, waitForEventStatus, type Pipeline } from "../helpers/delivery";
import { useServer } from "../helpers/fixture";
import { insertEvent, scopeOf, type TestScope } from "../helpers/rows";
import { call, type TestServer } from "../helpers/server";
import type { Sink } from "../helpers/sink";

const HOUR = 3600_000;
const NOW = Date.parse("2026-03-10T08:20:00.000Z");
/** Bucket index of an hour in the window that ends with NOW's hour. */
const slot = (iso: string) => 23 - (Date.parse("2026-03-10T08:00:00.000Z") - Date.parse(iso)) / HOUR;

const clock = manualClock(new Date("2026-03-10T03:10:00.000Z"));
let server: TestServer, key: string, sink: Sink, scope: TestScope;
let toggle: Pipeline, steady: Pipeline;
let failing = true;
let turnedAround: string;

const stats = async () => {
  const res = await call(server, "GET", "/v1/stats", { key });
  expect(res.status).toBe(200);
  return res.body;
};

useServer({ clock, sink: true, env: { HOOKRELAY_RETENTION_DAYS: "7" } }, (s) => ({ server, key, sink } = s));
beforeAll(async () => {
  scope = await scopeOf(server, key);
  sink.respond = async (req) => {
    if (req.path === "/toggle" && failing) return new Response("no", { status: 400 });
    if (req.path === "/steady") await Bun.sleep((JSON.parse(req.body) as { sleep: number }).sleep);
    return new Response("ok");
  };
  toggle = await pipeline(server, key, { url: `${sink.url}/toggle`, destination: { name: "Toggle", max_retries: 0 } });
  steady = await pipeline(server, key, { url: `${sink.url}/steady`, destination: { name: "Steady" } });
  turnedAround = await sendEvent(server, toggle.sourceId, { n: 1 });
  await waitForEventStatus(server, key, turnedAround, ["failed"]);
  clock.set(new Date("2026-03-10T05:40:00.000Z"));
  for (const sleep of [5, 30, 60, 90]) await waitForEventStatus(server, key, await sendEvent(server, steady.sourceId, { sleep }), ["delivered"]);
  clock.set(new Date(NOW));
});

/** The rollups summed over shards, against the same figures counted from the stored rows. */
async function expectRollupsMatchRows() {
  const { db } = server.deps;
  const inScope = (t: typeof eventHours | typeof attemptHours | typeof events | typeof deliveryAttempts) => and(eq(t.orgId, scope.orgId), eq(t.envId, scope.envId));
  const hourOfReceived = sql<string>`substr(${events.receivedAt}, 1, 13)`;
  const rolledEvents = await db
    .select({ hour: eventHours.hour, status: eventHours.status, n: sql<number>`sum(${eventHours.n})`.mapWith(Number) })
    .from(eventHours)
    .where(inScope(eventHours))
    .groupBy(eventHours.hour, eventHours.status)
    .having(sql`sum(${eventHours.n}) <> 0`);
  const counted = await db.select({ hour: hourOfReceived, status: events.status, n: sql<number>`count(*)`.mapWith(Number) }).from(events).where(inScope(events)).groupBy(hourOfReceived, events.status);
  const byKey = (rows: { hour: string; status: string }[]) => [...rows].sort((x, y) => `${x.hour}${x.status}`.localeCompare(`${y.hour}${y.status}`));
  expect(byKey(rolledEvents)).toEqual(byKey(counted));

  const hourOfSent = sql<string>`substr(${deliveryAttempts.sentAt}, 1, 13)`;
  const rolledAttempts = await db
    .select({
      hour: attemptHours.hour,
      status: sql<string>`${attemptHours.destinationId} || ' ' || ${attemptHours.status}`,
      n: sql<number>`sum(${attemptHours.n})`.mapWith(Number),
      sumMs: sql<number>`sum(${attemptHours.sumMs})`.mapWith(Number),
    })
    .from(attemptHours)
    .where(inScope(attemptHours))
    .groupBy(attemptHours.hour, attemptHours.destinationId, attemptHours.status)
    .having(sql`sum(${attemptHours.n}) <> 0`);
  const finished = await db
    .select({
      hour: hourOfSent,
      status: sql<string>`${deliveryAttempts.destinationId} || ' ' || ${deliveryAttempts.status}`,
      n: sql<number>`count(*)`.mapWith(Number),
      sumMs: sql<number>`coalesce(sum(${deliveryAttempts.durationMs}), 0)`.mapWith(Number),
    })
    .from(deliveryAttempts)
    .where(and(inScope(deliveryAttempts), sql`${deliveryAttempts.status} in ('success', 'failed')`, sql`${deliveryAttempts.sentAt} is not null`))
    .groupBy(hourOfSent, deliveryAttempts.destinationId, deliveryAttempts.status);
  expect(byKey(rolledAttempts)).toEqual(byKey(finished));
}

describe("stats rollups at upgrade: the migration fills them from the rows already stored", () => {
  it("gives the same answer after the rollups are dropped and their migrations run again over the stored rows", async () => {
    const before = await stats();
    expect(before.events_received_24h).toBe(5);
    const { db } = server.deps;
    const exec = (statement: string) => (onPostgres ? (db as any).execute(sql.raw(statement)) : (db as any).run(sql.raw(statement)));
    const dropping = onPostgres
      ? ["DROP FUNCTION event_hours_apply() CASCADE", "DROP FUNCTION attempt_hours_apply() CASCADE"]
      : ["events_hour_insert", "events_hour_delete", "events_hour_update", "attempts_hour_insert", "attempts_hour_delete", "attempts_hour_update"].map((t) => `DROP TRIGGER ${t}`);
    for (const statement of [...dropping, "DROP TABLE event_hours", "DROP TABLE attempt_hours", "DROP TABLE duration_buckets"]) await exec(statement);
    // Rows written while there are no rollups, as before the upgrade.
    await insertEvent(server, scope, steady.sourceId, { body: "{}", receivedAt: "2026-03-10T07:15:00.000Z" });
    const upgrade = (onPostgres ? pgMigrations : migrations).filter((m) => /stats_rollup/.test(m.tag));
    expect(upgrade).toHaveLength(2);
    for (const m of upgrade) for (const statement of m.sql) if (statement.trim()) await exec(statement);

    const after = await stats();
    expect(after.events_received_24h).toBe(6);
    expect(after.buckets[slot("2026-03-10T07:00:00.000Z")].received).toBe(1);
    expect({ ...after, buckets: undefined, events_received_24h: undefined }).toEqual({ ...before, buckets: undefined, events_received_24h: undefined });
    await expectRollupsMatchRows();
  });
});

describe("stats rollups after a status change", () => {
  it("moves an event from failed to delivered in the hour it was received; its failed attempt stays counted in its own hour", async () => {
    const before = await stats();
    const h03 = slot("2026-03-10T03:00:00.000Z");
    expect(before.buckets[h03]).toMatchObject({ received: 1, delivered: 0, failed: 1, deliveries_failed: 1 });
    failing = false;
    clock.set(new Date("2026-03-10T06:05:00.000Z"));
    try {
      expect((await call(server, "POST", `/v1/events/${turnedAround}/retry`, { key })).status).toBeLessThan(300);
      await waitForEventStatus(server, key, turnedAround, ["delivered"]);
    } finally {
      clock.set(new Date(NOW));
    }
    const after = await stats();
    expect(after.buckets[h03]).toMatchObject({ received: 1, delivered: 1, failed: 0, deliveries_failed: 1 });
    expect(after.deliveries_succeeded_24h).toBe(before.deliveries_succeeded_24h + 1);
    expect(after.deliveries_failed_24h).toBe(before.deliveries_failed_24h);
    await expectRollupsMatchRows();
  });
});

describe("stats rollups after deletes", () => {
  it("retention deletes the old rows and the rollups of their hours; the window's figures stay", async () => {
    const before = await stats();
    const old = "2026-03-01T10:30:00.000Z";
    const eventId = await insertEvent(server, scope, steady.sourceId, { body: "{}", receivedAt: old });
    await server.deps.db.insert(deliveryAttempts).values({
      id: "da_" + "5".repeat(32), orgId: scope.orgId, envId: scope.envId, eventId, destinationId: steady.destinationId,
      requestUrl: "http://x", requestMethod: "POST", status: "success", durationMs: 40, scheduledAt: old, sentAt: old, createdAt: old,
    });
    const oldRollups = async () =>
      (await server.deps.db.$count(eventHours, lt(eventHours.hour, "2026-03-02"))) + (await server.deps.db.$count(attemptHours, lt(attemptHours.hour, "2026-03-02")));
    expect(await oldRollups()).toBeGreaterThan(0);
    await expectRollupsMatchRows();

    expect(await pruneOldEvents(server.deps)).toBe(1);
    expect(await oldRollups()).toBe(0);
    expect(await stats()).toEqual(before);
    await expectRollupsMatchRows();
  });

  it("deleting a source takes its events and attempts out of the window's figures", async () => {
    const before = await stats();
    const h05 = slot("2026-03-10T05:00:00.000Z");
    expect(before.buckets[h05].received).toBe(4);
    expect(before.slowest_destinations.map((d: any) => d.destination_name)).toContain("Steady");
    expect((await call(server, "DELETE", `/v1/sources/${steady.sourceId}`, { key })).status).toBeLessThan(300);
    const after = await stats();
    expect(after.buckets[h05]).toMatchObject({ received: 0, delivered: 0 });
    expect(after.deliveries_succeeded_24h).toBe(before.deliveries_succeeded_24h - 4);
    expect(after.slowest_destinations.map((d: any) => d.destination_name)).not.toContain("Steady");
    await expectRollupsMatchRows();
  });
});
