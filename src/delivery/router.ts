import { and, asc, eq, inArray, isNull, sql } from "drizzle-orm";
import { ph, preparedFor } from "../db/prepared";
import { connections, events, sources } from "../db/schema";
import { writeTransaction } from "../db/transaction";
import { iso } from "../domain/clock";
import { connectionsBySource, FilterRuleCache, insertQueuedAttempt, newQueuedAttempt } from "../domain/deliveries";
import type { Deps } from "../domain/deps";
import type { Logger } from "../observability/logger";
import { eventView } from "./eventView";

/**
 * Fans stored events out to their connections. Ingest stores an event as
 * `pending` with routed_at NULL and answers at once; this turns it into one
 * queued attempt (trigger `initial`) per enabled connection of its source
 * whose filter matches and whose destination is not disabled. No match: the
 * event becomes `ignored`. A batch is one write transaction, so an event is
 * routed exactly once even across a crash.
 */
export const ROUTE_BATCH = 200;

const statements = preparedFor((db) => ({
  // Narrow on purpose: most events never need their body here (no connection,
  // or connections without filter rules), and reading it back is most of the
  // router's cost under load.
  pending: db
    .select({ id: events.id, orgId: events.orgId, envId: events.envId, sourceId: events.sourceId, receivedAt: events.receivedAt })
    .from(events)
    .where(and(eq(events.status, "pending"), isNull(events.routedAt)))
    .orderBy(asc(events.receivedAt))
    .limit(sql.placeholder("limit"))
    .prepare(),
  request: db
    .select({ body: events.body, headers: events.headers, query: events.query, method: events.method, path: events.path, contentType: events.contentType })
    .from(events)
    .where(eq(events.id, sql.placeholder("id")))
    .prepare(),
  // Guarded: a manual retry may have routed the event meanwhile.
  markRouted: db
    .update(events)
    .set({ routedAt: ph("now"), status: ph("status") })
    .where(and(eq(events.id, sql.placeholder("id")), isNull(events.routedAt), eq(events.status, "pending")))
    .returning({ id: events.id })
    .prepare(),
  countConnection: db
    .update(connections)
    .set({
      eventCount: sql`${connections.eventCount} + ${sql.placeholder("count")}`,
      lastEventAt: sql`max(coalesce(${connections.lastEventAt}, ''), ${sql.placeholder("last")})`,
    })
    .where(eq(connections.id, sql.placeholder("id")))
    .prepare(),
}));

/** Routes one batch of pending events; returns how many events it looked at. */
export async function routePendingEvents(deps: Deps, opts: { limit?: number; rules?: FilterRuleCache; logger?: Logger } = {}): Promise<number> {
  const { db, clock, bus } = deps;
  const rules = opts.rules ?? new FilterRuleCache();
  const s = statements(db);
  const batch = await s.pending.all({ limit: opts.limit ?? ROUTE_BATCH });
  if (batch.length === 0) return 0;

  const bySource = await connectionsBySource(db, [...new Set(batch.map((e) => e.sourceId))]);
  const plans = batch.map((event) => {
    let view: ReturnType<typeof eventView> | null = null;
    const candidates = (bySource.get(event.sourceId) ?? []).filter((c) => c.enabled === 1 && c.destinationStatus !== "disabled");
    const matched = candidates.filter((c) => rules.matches(c, () => (view ??= requestView(s, event.id)), opts.logger));
    return { event, matched };
  });

  const now = clock.now();
  const nowIso = iso(now);
  const { queued, ignored } = writeTransaction(db, () => {
    let queued = 0;
    const ignored: typeof batch = [];
    const perConnection = new Map<string, { count: number; last: string }>();
    for (const { event, matched } of plans) {
      if (!s.markRouted.get({ id: event.id, now: nowIso, status: matched.length === 0 ? "ignored" : "pending" })) continue;
      if (matched.length === 0) ignored.push(event);
      for (const c of matched) {
        insertQueuedAttempt(
          db,
          newQueuedAttempt({
            orgId: event.orgId,
            envId: event.envId,
            eventId: event.id,
            connectionId: c.id,
            destinationId: c.destinationId,
            requestUrl: c.destinationUrl,
            requestMethod: c.destinationMethod,
            triggerType: "initial",
            now,
          }),
        );
        queued++;
        const stat = perConnection.get(c.id) ?? { count: 0, last: "" };
        stat.count++;
        if (event.receivedAt > stat.last) stat.last = event.receivedAt;
        perConnection.set(c.id, stat);
      }
    }
    for (const [id, stat] of perConnection) s.countConnection.run({ id, ...stat });
    return { queued, ignored };
  });

  if (queued > 0) bus.publish({ type: "delivery.queued" });
  for (const e of ignored) bus.publish({ type: "event.updated", orgId: e.orgId, envId: e.envId, eventId: e.id, sourceId: e.sourceId });
  return batch.length;
}

/** The event as filter rules see it, read only when a rule asks. */
function requestView(s: ReturnType<typeof statements>, id: string) {
  const row = s.request.get({ id });
  // Retention may prune an event between the batch read and here; such an event matches nothing.
  return row ? eventView(row) : { body: null, headers: {}, query: {}, method: "", path: "" };
}

/**
 * A paused source's events are stored `held`; when the source is active
 * again they become `pending` and are routed like new ones (issue 4, item 7).
 * Runs on `source.updated` and on the safety poll (a CLI in local mode may
 * have changed the source without this process hearing of it).
 */
export async function releaseHeldEvents(deps: Deps, sourceId?: string): Promise<number> {
  const active = deps.db
    .select({ id: sources.id })
    .from(sources)
    .where(and(eq(sources.status, "active"), sourceId ? eq(sources.id, sourceId) : undefined));
  const released = await deps.db
    .update(events)
    .set({ status: "pending" })
    .where(and(eq(events.status, "held"), isNull(events.routedAt), inArray(events.sourceId, active)))
    .returning({ id: events.id, orgId: events.orgId, envId: events.envId, sourceId: events.sourceId });
  for (const e of released) deps.bus.publish({ type: "event.updated", orgId: e.orgId, envId: e.envId, eventId: e.id, sourceId: e.sourceId });
  return released.length;
}
