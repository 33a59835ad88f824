import { inScope } from "./scope";
import { and, count, eq, gte, inArray, isNotNull, isNull, lt, sql, type AnyColumn, type SQL } from "drizzle-orm";
import { STATS_WINDOW_HOURS, type StatsBody, type StatsBucket } from "../contracts/stats";
import { connections, deliveryAttempts as a, destinations, events as e, issues, sources } from "../db/schema";
import { iso } from "../core/clock";
import type { Deps, Scope } from "./deps";

const HOUR = 3600_000;
const SLOWEST = 5;
/** How long before its window an attempt may have been queued and still count (docs/api.md, Stats). */
const ATTEMPT_WAIT_DAYS = 7;

/**
 * The window: the current clock hour (UTC) and the 23 before it, so the
 * hourly buckets line up with the clock and their sum is the window's total.
 */
export function statsWindow(now: Date) {
  const currentHour = Math.floor(now.getTime() / HOUR) * HOUR;
  const starts = Array.from({ length: STATS_WINDOW_HOURS }, (_, i) => new Date(currentHour - (STATS_WINDOW_HOURS - 1 - i) * HOUR));
  return { starts, since: iso(starts[0]!), until: iso(new Date(currentHour + HOUR)) };
}

/** Times are stored as ISO 8601 UTC text, so the hour is the first 13 characters ("2026-01-01T05"). */
const hourOf = (col: AnyColumn) => sql<string>`substr(${col}, 1, 13)`;
/** SUM of a condition, 0 over no rows; numbers even where a driver returns SUM as a string. */
const countWhere = (cond: SQL) => sql<number>`coalesce(sum(case when ${cond} then 1 else 0 end), 0)`.mapWith(Number);

/**
 * The dashboard in one call, with SQL aggregates over indexed columns:
 * events by hour of received_at, finished attempts by the hour they were made (sent_at), and the queue and
 * DLQ as they are now. Everything is bounded by the caller's org and env.
 */
export async function getStats({ db, clock }: Deps, scope: Scope): Promise<StatsBody> {
  const now = clock.now();
  const { starts, since, until } = statsWindow(now);
  const eventScope = and(inScope(e, scope));
  const attemptScope = and(inScope(a, scope));
  // Finished attempts count in the hour they were made (sent_at), not the hour they were queued: a retry
  // queued at 05:59 that fails at 06:01 is a 06:00 failure. created_at only narrows the rows to read
  // through attempts_scope_created: an attempt is made at most ATTEMPT_WAIT_DAYS after it was queued.
  const attemptWindow = and(attemptScope, gte(a.createdAt, iso(new Date(Date.parse(since) - ATTEMPT_WAIT_DAYS * 24 * HOUR))), lt(a.createdAt, until), gte(a.sentAt, since), lt(a.sentAt, until));
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

  const [byHour, failuresByHour, byDestination, [dlq], [queued], [delivering], sourceCount, destinationCount, connectionCount, openIssues] = await Promise.all([
    db
      .select({
        hour: hourOf(e.receivedAt),
        received: count(),
        delivered: countWhere(eq(e.status, "delivered")),
        failed: countWhere(eq(e.status, "failed")),
      })
      .from(e)
      .where(and(eventScope, gte(e.receivedAt, since), lt(e.receivedAt, until)))
      .groupBy(hourOf(e.receivedAt)),
    // Failed attempts by hour, so the chart shows a destination failing while its events still wait for retries.
    db
      .select({ hour: hourOf(a.sentAt), failed: count() })
      .from(a)
      .where(and(attemptWindow, eq(a.status, "failed")))
      .groupBy(hourOf(a.sentAt)),
    // One pass over the window's attempts gives the outcome totals and the per-destination times, median included.
    attemptsByDestination(db, attemptWindow),
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
    .filter((d) => d.timed > 0)
    .sort((x, y) => (y.avgMs ?? 0) - (x.avgMs ?? 0) || (x.destinationId < y.destinationId ? -1 : 1))
    .slice(0, SLOWEST);
  const ids = slowest.map((d) => d.destinationId);
  const names = ids.length ? await db.select({ id: destinations.id, name: destinations.name }).from(destinations).where(inArray(destinations.id, ids)) : [];
  const nameOf = new Map(names.map((d) => [d.id, d.name]));

  const hours = new Map(byHour.map((r) => [r.hour, r]));
  const failures = new Map(failuresByHour.map((r) => [r.hour, r.failed]));
  const buckets: StatsBucket[] = starts.map((start) => {
    const hour = iso(start).slice(0, 13);
    const r = hours.get(hour);
    return { start: iso(start), received: r?.received ?? 0, delivered: r?.delivered ?? 0, failed: r?.failed ?? 0, deliveries_failed: failures.get(hour) ?? 0 };
  });
  const succeeded = byDestination.reduce((n, d) => n + d.succeeded, 0);
  const failed = byDestination.reduce((n, d) => n + d.failed, 0);
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
      p50_ms: Math.round(d.p50Ms ?? 0),
      avg_ms: Math.round(d.avgMs ?? 0),
      max_ms: d.maxMs ?? 0,
      attempts: d.timed,
    })),
    open_issues: openIssues,
    counts: { sources: sourceCount, destinations: destinationCount, connections: connectionCount },
  };
}

/**
 * Per destination: finished attempts by outcome, and the count, average,
 * median and maximum of the durations. The median comes from ranking each
 * destination's durations (window functions: SQLite 3.25+, PostgreSQL) and
 * averaging the middle one (odd count) or two (even count), in the same pass
 * over the rows.
 */
function attemptsByDestination(db: Deps["db"], attemptWindow: SQL | undefined) {
  const durationOrder = sql`case when ${a.durationMs} is null then 1 else 0 end, ${a.durationMs}`;
  const ranked = db
    .select({
      destinationId: a.destinationId,
      status: a.status,
      durationMs: a.durationMs,
      // Rows without a duration sort last in every dialect, so positions 1..timed are the durations in order.
      // Both use the same partition and order, so the rows are sorted once.
      position: sql<number>`row_number() over (partition by ${a.destinationId} order by ${durationOrder})`.as("position"),
      timed: sql<number>`count(${a.durationMs}) over (partition by ${a.destinationId} order by ${durationOrder} rows between unbounded preceding and unbounded following)`.as("timed"),
    })
    .from(a)
    .where(attemptWindow)
    .as("ranked");
  const middle = sql`${ranked.position} in ((${ranked.timed} + 1) / 2, (${ranked.timed} + 2) / 2)`;
  return db
    .select({
      destinationId: ranked.destinationId,
      succeeded: countWhere(eq(ranked.status, "success")),
      failed: countWhere(eq(ranked.status, "failed")),
      timed: count(ranked.durationMs),
      avgMs: sql<number | null>`avg(${ranked.durationMs})`.mapWith(Number),
      p50Ms: sql<number | null>`avg(case when ${middle} then ${ranked.durationMs} end)`.mapWith(Number),
      maxMs: sql<number | null>`max(${ranked.durationMs})`.mapWith(Number),
    })
    .from(ranked)
    .groupBy(ranked.destinationId);
}
