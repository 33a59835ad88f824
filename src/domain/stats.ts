import { inScope } from "./scope";
import { and, asc, count, eq, gte, inArray, isNotNull, isNull, lt, sql, type SQL } from "drizzle-orm";
import { STATS_WINDOW_HOURS, type StatsBody, type StatsBucket } from "../contracts/stats";
import { attemptHours as ah, connections, deliveryAttempts as a, destinations, durationBuckets, eventHours as eh, issues, sources } from "../db/schema";
import { sumOf } from "../db/portableSql";
import { iso } from "../core/clock";
import { histogramMedian } from "./durationHistogram";
import type { Deps, Scope } from "./deps";

const HOUR = 3600_000;
const SLOWEST = 5;

/**
 * The window: the current clock hour (UTC) and the 23 before it, so the
 * hourly buckets line up with the clock and their sum is the window's total.
 */
export function statsWindow(now: Date) {
  const currentHour = Math.floor(now.getTime() / HOUR) * HOUR;
  const starts = Array.from({ length: STATS_WINDOW_HOURS }, (_, i) => new Date(currentHour - (STATS_WINDOW_HOURS - 1 - i) * HOUR));
  return { starts, since: iso(starts[0]!), until: iso(new Date(currentHour + HOUR)) };
}

/**
 * The dashboard in one call. Events by hour of received_at and finished
 * attempts by the hour they were made (sent_at) come from the hourly
 * rollups the database keeps as rows are written (src/db/schema/rollups.ts),
 * so the cost is that of 24 hours × destinations × duration buckets, not of
 * the window's events (docs/decisions.md D25); the queue and DLQ are read as
 * they are now. Everything is bounded by the caller's org and env.
 */
export async function getStats({ db, clock }: Deps, scope: Scope): Promise<StatsBody> {
  const now = clock.now();
  const { starts, since, until } = statsWindow(now);
  const attemptScope = and(inScope(a, scope));
  const inWindow = (t: typeof eh | typeof ah) => inScope(t, scope, gte(t.hour, since.slice(0, 13)), lt(t.hour, until.slice(0, 13)));
  // Literal conditions, written as the partial indexes attempts_due, attempts_leased and attempts_dlq_scope
  // are, so the planner can see they apply (it does not look inside bound values).
  const inDlq = sql`${a.isDlq} = 1`;
  const scopeDestinations = db.select({ id: destinations.id }).from(destinations).where(and(inScope(destinations, scope)));
  // Only rows already due are waiting: a retry scheduled for later is not late.
  const pendingQueue = (where: SQL | undefined) =>
    db
      .select({ depth: count(), oldestDue: sql<string | null>`min(case when ${a.scheduledAt} <= ${iso(now)} then ${a.scheduledAt} end)` })
      .from(a)
      .where(where);

  const [eventsByHour, attemptsByHour, byDestination, [dlq], [queued], [delivering], sourceCount, destinationCount, connectionCount, openIssues] = await Promise.all([
    db.select({ hour: eh.hour, status: eh.status, n: sumOf(eh.n) }).from(eh).where(inWindow(eh)).groupBy(eh.hour, eh.status),
    // By outcome and hour: the totals, and failures by hour so the chart shows a destination failing while
    // its events still wait for retries.
    db.select({ hour: ah.hour, status: ah.status, n: sumOf(ah.n) }).from(ah).where(inWindow(ah)).groupBy(ah.hour, ah.status),
    timedByDestination(db, inWindow(ah)),
    db
      .select({ n: count() })
      .from(a)
      .where(and(attemptScope, inDlq)),
    // Queued rows per destination of the scope (attempts_due); rows in flight are few (attempts_leased).
    pendingQueue(and(sql`${a.status} = 'queued'`, inArray(a.destinationId, scopeDestinations))),
    // A delivering row always holds a lease: saying so lets the planner read attempts_leased as a range
    // rather than walk every attempt of the environment through attempts_scope_created.
    pendingQueue(and(sql`${a.status} = 'delivering'`, isNotNull(a.leaseUntil), attemptScope)),
    db.$count(sources, and(inScope(sources, scope))),
    // The operator's destinations: application endpoints deliver through hidden ones (docs/outbound.md).
    db.$count(destinations, and(inScope(destinations, scope), isNull(destinations.applicationId))),
    db.$count(connections, and(inScope(connections, scope))),
    db.$count(issues, and(inScope(issues, scope), eq(issues.status, "open"))),
  ]);

  const slowest = byDestination
    .map((d) => ({ ...d, avgMs: d.sumMs / d.timed }))
    .sort((x, y) => y.avgMs - x.avgMs || (x.destinationId < y.destinationId ? -1 : 1))
    .slice(0, SLOWEST);
  const ids = slowest.map((d) => d.destinationId);
  const [names, histogram, bounds] = ids.length
    ? await Promise.all([
        db.select({ id: destinations.id, name: destinations.name }).from(destinations).where(inArray(destinations.id, ids)),
        durationsOf(db, and(inWindow(ah), inArray(ah.destinationId, ids))),
        db.select({ lowerMs: durationBuckets.lowerMs }).from(durationBuckets).orderBy(asc(durationBuckets.lowerMs)),
      ])
    : [[], [], []];
  const nameOf = new Map(names.map((d) => [d.id, d.name]));
  const lowerBounds = bounds.map((b) => b.lowerMs);

  const received = new Map<string, number>();
  const byStatus = new Map<string, number>();
  for (const r of eventsByHour) {
    received.set(r.hour, (received.get(r.hour) ?? 0) + r.n);
    byStatus.set(`${r.hour} ${r.status}`, r.n);
  }
  const failures = new Map(attemptsByHour.filter((r) => r.status === "failed").map((r) => [r.hour, r.n]));
  const buckets: StatsBucket[] = starts.map((start) => {
    const hour = iso(start).slice(0, 13);
    return {
      start: iso(start),
      received: received.get(hour) ?? 0,
      delivered: byStatus.get(`${hour} delivered`) ?? 0,
      failed: byStatus.get(`${hour} failed`) ?? 0,
      deliveries_failed: failures.get(hour) ?? 0,
    };
  });
  const total = (status: string) => attemptsByHour.reduce((n, r) => n + (r.status === status ? r.n : 0), 0);
  const succeeded = total("success");
  const failed = total("failed");
  const dueSince = [queued?.oldestDue, delivering?.oldestDue].filter((at): at is string => !!at).sort()[0];
  const oldestDue = dueSince ? Date.parse(dueSince) : null;

  return {
    window_hours: STATS_WINDOW_HOURS,
    buckets,
    events_received_24h: buckets.reduce((n, b) => n + b.received, 0),
    deliveries_succeeded_24h: succeeded,
    deliveries_failed_24h: failed,
    success_rate: succeeded + failed > 0 ? succeeded / (succeeded + failed) : null,
    dlq_size: dlq?.n ?? 0,
    queue_depth: (queued?.depth ?? 0) + (delivering?.depth ?? 0),
    oldest_pending_seconds: oldestDue === null ? 0 : Math.max(0, Math.floor((now.getTime() - oldestDue) / 1000)),
    slowest_destinations: slowest.map((d) => ({
      destination_id: d.destinationId,
      destination_name: nameOf.get(d.destinationId) ?? null,
      p50_ms: Math.round(histogramMedian(histogram.filter((h) => h.destinationId === d.destinationId), lowerBounds) ?? 0),
      avg_ms: Math.round(d.avgMs),
      max_ms: d.maxMs ?? 0,
      attempts: d.timed,
    })),
    open_issues: openIssues,
    counts: { sources: sourceCount, destinations: destinationCount, connections: connectionCount },
  };
}

/**
 * Durations per destination and bucket over the window: a bucket that
 * deletes emptied (n summed to 0) is left out, so its stale extremes do not
 * count.
 */
function durationsOf(db: Deps["db"], where: SQL | undefined) {
  return db
    .select({
      destinationId: ah.destinationId,
      lowerMs: ah.bucket,
      // Aliased: timedByDestination reads these through a subquery.
      n: sumOf(ah.n).as("n"),
      sumMs: sumOf(ah.sumMs).as("sum_ms"),
      minMs: sql<number | null>`min(${ah.minMs})`.mapWith(Number).as("min_ms"),
      maxMs: sql<number | null>`max(${ah.maxMs})`.mapWith(Number).as("max_ms"),
    })
    .from(ah)
    .where(and(where, gte(ah.bucket, 0)))
    .groupBy(ah.destinationId, ah.bucket)
    .having(sql`sum(${ah.n}) > 0`);
}

/**
 * Per destination with timed attempts in the window: how many, the sum of
 * their durations (the exact average) and the largest. One row per
 * destination, whatever the number of hours and buckets behind it.
 */
function timedByDestination(db: Deps["db"], where: SQL | undefined) {
  const perBucket = durationsOf(db, where).as("per_bucket");
  return db
    .select({
      destinationId: perBucket.destinationId,
      timed: sql<number>`sum(${perBucket.n})`.mapWith(Number),
      sumMs: sql<number>`sum(${perBucket.sumMs})`.mapWith(Number),
      maxMs: sql<number | null>`max(${perBucket.maxMs})`.mapWith(Number),
    })
    .from(perBucket)
    .groupBy(perBucket.destinationId);
}
