import { and, eq, inArray, isNull } from "drizzle-orm";
import { deliverySql } from "../db/deliverySql";
import { events, sources } from "../db/schema";
import { writeTransaction } from "../db/transaction";
import { iso } from "../domain/clock";
import { connectionsBySource, FilterRuleCache, insertQueuedAttempt, newQueuedAttemptThrough, type SourceConnection } from "../domain/deliveries";
import type { Db } from "../db/open";
import type { FilterRequest } from "./filter";
import type { Deps } from "../domain/deps";
import type { Logger } from "../observability/logger";
import { eventView, type StoredRequest } from "./eventView";

/**
 * Fans stored events out to their connections: one queued attempt (trigger
 * `initial`) per enabled connection of the event's source whose filter
 * matches and whose destination is not disabled; no match, and the event
 * becomes `ignored`. Events this process stores are routed inside ingest's
 * own group commit (routeStoredEvents, from the request in memory); the
 * background router (routePendingEvents) takes the rest: held events once
 * their source is active again, events a CLI stored in local mode, and any
 * batch whose routing at ingest failed. Either way routing is one write
 * transaction with the event, so an event is routed exactly once even
 * across a crash.
 */
export const ROUTE_BATCH = 200;

/** What routing needs of a stored event. */
export interface RoutableEvent {
  id: string;
  orgId: string;
  envId: string;
  sourceId: string;
  receivedAt: string;
}

/** What one routed batch came to, for the announcements after its commit. */
export interface RoutedBatch {
  queued: number;
  ignored: RoutableEvent[];
}

/** Routes one batch of pending events; returns how many events it looked at. */
export async function routePendingEvents(deps: Deps, opts: { limit?: number; rules?: FilterRuleCache; logger?: Logger } = {}): Promise<number> {
  const { db, clock } = deps;
  const s = deliverySql(db);
  const batch = s.pending.all(opts.limit ?? ROUTE_BATCH);
  if (batch.length === 0) return 0;
  const rules = opts.rules ?? new FilterRuleCache();
  const plans = planRoutes(db, batch, (event) => requestView(s, event.id), rules, opts.logger);
  const routed = writeTransaction(db, () => applyRoutes(db, plans, clock.now()));
  announceRouted(deps, routed);
  return batch.length;
}

/**
 * Routes events inside the transaction that stores them (ingest's group
 * commit): no second transaction, no read back, no wake-up delay. `request`
 * gives an event's request from memory when a filter rule needs it.
 */
export function routeStoredEvents<E extends RoutableEvent>(db: Db, events: E[], request: (event: E) => StoredRequest, clock: Deps["clock"], rules: FilterRuleCache, logger?: Logger): RoutedBatch {
  if (events.length === 0) return { queued: 0, ignored: [] };
  return applyRoutes(db, planRoutes(db, events, (e) => eventView(request(e)), rules, logger), clock.now());
}

/** After the routing transaction committed: wake the delivery worker, tell live views about ignored events. */
export function announceRouted(deps: Pick<Deps, "bus">, routed: RoutedBatch) {
  if (routed.queued > 0) deps.bus.publish({ type: "delivery.queued" });
  for (const e of routed.ignored) deps.bus.publish({ type: "event.updated", orgId: e.orgId, envId: e.envId, eventId: e.id, sourceId: e.sourceId });
}

/** The connections each event goes through: enabled, destination not disabled, filter matching. */
function planRoutes<E extends RoutableEvent>(db: Db, events: E[], view: (event: E) => FilterRequest, rules: FilterRuleCache, logger?: Logger) {
  const bySource = connectionsBySource(db, [...new Set(events.map((e) => e.sourceId))]);
  return events.map((event) => {
    let seen: FilterRequest | null = null;
    const candidates = (bySource.get(event.sourceId) ?? []).filter((c) => c.enabled === 1 && c.destinationStatus !== "disabled");
    const matched = candidates.filter((c) => rules.matches(c, () => (seen ??= view(event)), logger));
    return { event: event as RoutableEvent, matched };
  });
}

/** Inside a write transaction: marks each event routed (or ignored), queues its first tries, counts them per connection. */
function applyRoutes(db: Db, plans: { event: RoutableEvent; matched: SourceConnection[] }[], now: Date): RoutedBatch {
  const s = deliverySql(db);
  const nowIso = iso(now);
  let queued = 0;
  const ignored: RoutableEvent[] = [];
  const perConnection = new Map<string, { count: number; last: string }>();
  for (const { event, matched } of plans) {
    if (!s.markRouted.get(event.id, nowIso, matched.length === 0 ? "ignored" : "pending")) continue;
    if (matched.length === 0) ignored.push(event);
    for (const c of matched) {
      insertQueuedAttempt(db, newQueuedAttemptThrough(event, c, { triggerType: "initial", now }));
      queued++;
      const stat = perConnection.get(c.id) ?? { count: 0, last: "" };
      stat.count++;
      if (event.receivedAt > stat.last) stat.last = event.receivedAt;
      perConnection.set(c.id, stat);
    }
  }
  for (const [id, stat] of perConnection) s.countConnection.run(id, stat.count, stat.last);
  return { queued, ignored };
}

/** The event as filter rules see it, read only when a rule asks. */
function requestView(s: ReturnType<typeof deliverySql>, id: string): FilterRequest {
  const row = s.request.get(id);
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
