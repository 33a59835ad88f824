import { and, eq, inArray, isNull } from "drizzle-orm";
import { preparedFor, sqliteOf } from "../db/prepared";
import { events, sources } from "../db/schema";
import { writeTransaction } from "../db/transaction";
import { iso } from "../domain/clock";
import { connectionsBySource, FilterRuleCache, insertQueuedAttempt, newQueuedAttempt, type SourceConnection } from "../domain/deliveries";
import type { Db } from "../db/open";
import type { FilterRequest } from "./filter";
import type { Deps } from "../domain/deps";
import type { Logger } from "../observability/logger";
import { eventView, type StoredRequest } from "./eventView";

/**
 * Fans stored events out to their connections. Ingest stores an event as
 * `pending` with routed_at NULL and answers at once; this turns it into one
 * queued attempt (trigger `initial`) per enabled connection of its source
 * whose filter matches and whose destination is not disabled. No match: the
 * event becomes `ignored`. A batch is one write transaction, so an event is
 * routed exactly once even across a crash.
 */
export const ROUTE_BATCH = 200;

/** Plain SQL on bun:sqlite: these run for every routed batch, where drizzle's mapping cost more than the statements. */
const statements = preparedFor((db) => {
  const sqlite = sqliteOf(db);
  return {
    // Narrow on purpose: most events never need their body here (no connection,
    // or connections without filter rules), and reading it back is most of the
    // router's cost under load.
    pending: sqlite.prepare<{ id: string; orgId: string; envId: string; sourceId: string; receivedAt: string }, [number]>(
      `SELECT id, org_id AS orgId, env_id AS envId, source_id AS sourceId, received_at AS receivedAt
         FROM events WHERE status = 'pending' AND routed_at IS NULL ORDER BY received_at LIMIT ?1`,
    ),
    request: sqlite.prepare<StoredRequest, [string]>(
      `SELECT body, headers, query, method, path, content_type AS contentType FROM events WHERE id = ?1`,
    ),
    // Guarded: a manual retry may have routed the event meanwhile.
    markRouted: sqlite.prepare<{ id: string }, [string, string, string]>(
      `UPDATE events SET routed_at = ?2, status = ?3 WHERE id = ?1 AND routed_at IS NULL AND status = 'pending' RETURNING id`,
    ),
    countConnection: sqlite.prepare<never, [string, number, string]>(
      `UPDATE connections SET event_count = event_count + ?2, last_event_at = max(coalesce(last_event_at, ''), ?3) WHERE id = ?1`,
    ),
  };
});

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
  const s = statements(db);
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
  const s = statements(db);
  const nowIso = iso(now);
  let queued = 0;
  const ignored: RoutableEvent[] = [];
  const perConnection = new Map<string, { count: number; last: string }>();
  for (const { event, matched } of plans) {
    if (!s.markRouted.get(event.id, nowIso, matched.length === 0 ? "ignored" : "pending")) continue;
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
  for (const [id, stat] of perConnection) s.countConnection.run(id, stat.count, stat.last);
  return { queued, ignored };
}

/** The event as filter rules see it, read only when a rule asks. */
function requestView(s: ReturnType<typeof statements>, id: string): FilterRequest {
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
