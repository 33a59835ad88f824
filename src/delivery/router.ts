import { and, eq, inArray, isNull } from "drizzle-orm";
import { deliverySql } from "../db/deliverySql";
import { events, sources } from "../db/schema";
import { writeTransaction } from "../db/transaction";
import { iso } from "../domain/clock";
import { connectionsBySource, FilterRuleCache, insertQueuedAttempt, newQueuedAttemptThrough, type SourceConnection } from "../domain/deliveries";
import type { Db } from "../db/open";
import type { EventWrite, StoredEventsBatch } from "../db/ingestStore";
import type { FilterRequest } from "./filter";
import type { Deps } from "../domain/deps";
import type { Logger } from "../observability/logger";
import { eventView } from "./eventView";

/**
 * Fans stored events out to their connections: one queued attempt (trigger
 * `initial`) per enabled connection of the event's source whose filter
 * matches and whose destination is not disabled; no match, and the event
 * becomes `ignored`. Events this process stores are routed inside ingest's
 * own group commit (ingestRouting, from the request in memory); the
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
 * Routes the events of one ingest group commit inside its transaction (see
 * StoredEventsHook): `takes` decides before each event is inserted, from the
 * request in memory, so the row is written routed (or `ignored`) once;
 * `stored` queues the first tries after the inserts. No second transaction,
 * no read back, no wake-up delay.
 */
export function ingestRouting(deps: Pick<Deps, "db" | "clock" | "bus">, rules: FilterRuleCache, logger?: Logger): StoredEventsBatch {
  const bySource = new Map<string, SourceConnection[]>();
  const matchedOf = new Map<EventWrite, SourceConnection[]>();
  return {
    takes(write) {
      let candidates = bySource.get(write.sourceId);
      if (!candidates) {
        candidates = connectionsBySource(deps.db, [write.sourceId]).get(write.sourceId) ?? [];
        bySource.set(write.sourceId, candidates);
      }
      const matched = matchingConnections(candidates, () => eventView(write), rules, logger);
      matchedOf.set(write, matched);
      return matched.length > 0;
    },
    stored(events) {
      const plans = events.map((event) => ({ event, matched: matchedOf.get(event.write) ?? [] }));
      // Stored routed already, `ignored` ones included (their event.created says so): no status to change.
      const routed = applyRoutes(deps.db, plans, deps.clock.now(), { stored: true });
      return () => announceRouted(deps, routed);
    },
  };
}

/** After the routing transaction committed: wake the delivery worker, tell live views about ignored events. */
function announceRouted(deps: Pick<Deps, "bus">, routed: RoutedBatch) {
  if (routed.queued > 0) deps.bus.publish({ type: "delivery.queued" });
  for (const e of routed.ignored) deps.bus.publish({ type: "event.updated", orgId: e.orgId, envId: e.envId, eventId: e.id, sourceId: e.sourceId });
}

/** The connections each event goes through. */
function planRoutes<E extends RoutableEvent>(db: Db, events: E[], view: (event: E) => FilterRequest, rules: FilterRuleCache, logger?: Logger) {
  const bySource = connectionsBySource(db, [...new Set(events.map((e) => e.sourceId))]);
  return events.map((event) => ({ event, matched: matchingConnections(bySource.get(event.sourceId) ?? [], () => view(event), rules, logger) }));
}

/** Of a source's connections, those an event goes through: enabled, destination not disabled, filter matching. */
function matchingConnections(candidates: SourceConnection[], view: () => FilterRequest, rules: FilterRuleCache, logger?: Logger): SourceConnection[] {
  let seen: FilterRequest | null = null;
  return candidates.filter((c) => c.enabled === 1 && c.destinationStatus !== "disabled" && rules.matches(c, () => (seen ??= view()), logger));
}

/**
 * Inside a write transaction: marks each event routed (or ignored) unless it
 * was `stored` so, queues its first tries, counts them per connection.
 */
function applyRoutes(db: Db, plans: { event: RoutableEvent; matched: SourceConnection[] }[], now: Date, opts: { stored?: boolean } = {}): RoutedBatch {
  const s = deliverySql(db);
  const nowIso = iso(now);
  let queued = 0;
  const ignored: RoutableEvent[] = [];
  const perConnection = new Map<string, { count: number; last: string }>();
  for (const { event, matched } of plans) {
    if (!opts.stored) {
      if (!s.markRouted.get(event.id, nowIso, matched.length === 0 ? "ignored" : "pending")) continue;
      if (matched.length === 0) ignored.push(event);
    }
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
