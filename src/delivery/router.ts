import { and, eq, inArray, isNull } from "drizzle-orm";
import type { StoredRequestRow } from "../db/deliverySql";
import { type UnroutedEvent } from "../db/routingSql";
import { routingSql } from "../db/statements";
import { events, sources } from "../db/schema";
import { onCommit, transaction } from "../db/transaction";
import { iso } from "../core/clock";
import { connectionsBySource, FilterRuleCache, insertQueuedAttempts, newQueuedAttemptThrough, type AttemptInsert, type SourceConnection } from "../domain/deliveries";
import type { Db } from "../db/db";
import type { EventWrite, StoredEventsBatch } from "../db/ingestStore";
import type { FilterRequest } from "../rules/filter";
import type { Deps } from "../domain/deps";
import type { Logger } from "../observability/logger";
import { eventView } from "../rules/eventView";
import { orderingKeyOf, orderingLane } from "../rules/orderingKey";
import { inLine, placeInLines } from "../domain/ordering";

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
export type RoutableEvent = UnroutedEvent;

/** What one routed batch came to, for the announcements after its commit. */
export interface RoutedBatch {
  queued: number;
  ignored: RoutableEvent[];
}

/** An event and the connections it goes through, with its ordering key on each (null where unordered or missing). */
type Plan = { event: RoutableEvent; matched: SourceConnection[]; keys: (string | null)[] };

/** Routes one batch of pending events; returns how many events it looked at. */
export async function routePendingEvents(deps: Deps, opts: { limit?: number; rules?: FilterRuleCache; logger?: Logger } = {}): Promise<number> {
  const { db, clock } = deps;
  const batch = await routingSql(db).pending(opts.limit ?? ROUTE_BATCH);
  if (batch.length === 0) return 0;
  const plans = await planRoutes(db, batch, opts.rules ?? new FilterRuleCache(), opts.logger);
  const routed = await transaction(db, () => applyRoutes(db, plans, clock.now()));
  announceRouted(deps, routed);
  return batch.length;
}

/**
 * Routes the events of one ingest group commit inside its transaction (see
 * StoredEventsHook): the connections of the batch's sources are read once
 * when it begins, `takes` decides before each event is inserted, from the
 * request in memory, so the row is written routed (or `ignored`) once;
 * `stored` queues the first tries after the inserts. No second transaction,
 * no read back, no wake-up delay. An event a regex rule must decide is
 * stored unrouted instead: regex rules run in the sandbox, which the
 * transaction must not wait for, so the background router takes it
 * (`deferred` wakes it after the commit).
 */
export async function ingestRouting(
  deps: Pick<Deps, "db" | "clock" | "bus">,
  sourceIds: string[],
  rules: FilterRuleCache,
  logger?: Logger,
  deferred?: () => void,
): Promise<StoredEventsBatch> {
  const bySource = await connectionsBySource(deps.db, sourceIds);
  const asked = new Set(sourceIds);
  const matchedOf = new Map<EventWrite, Omit<Plan, "event">>();
  let deferring = false;
  return {
    takes(write) {
      // Deciding without the source's connections would store its events `ignored`: fail, and the router takes them.
      if (!asked.has(write.sourceId)) throw new Error(`routing began without the connections of ${write.sourceId}`);
      let seen: FilterRequest | null = null;
      const matched: SourceConnection[] = [];
      const view = () => (seen ??= eventView(write));
      for (const c of bySource.get(write.sourceId) ?? []) {
        if (!eligible(c)) continue;
        const verdict = rules.matchesNow(c, view, logger);
        if (verdict === null) {
          deferring = true;
          return null;
        }
        if (verdict) matched.push(c);
      }
      matchedOf.set(write, { matched, keys: keysOf(matched, view) });
      return matched.length > 0;
    },
    async stored(events) {
      const plans = events.map((event) => ({ event, ...(matchedOf.get(event.write) ?? { matched: [], keys: [] }) }));
      // Stored routed already, `ignored` ones included (their event.created says so): no status to change.
      const routed = await applyRoutes(deps.db, plans, deps.clock.now(), { stored: true });
      // Inside ingest's transaction: deps.bus delivers once it has committed (src/db/committedBus.ts).
      announceRouted(deps, routed);
      if (deferring && deferred) onCommit(deps.db, deferred);
    },
  };
}

/** After the routing transaction committed: wake the delivery worker, tell live views about ignored events. */
function announceRouted(deps: Pick<Deps, "bus">, routed: RoutedBatch) {
  if (routed.queued > 0) deps.bus.publish({ type: "delivery.queued" });
  for (const e of routed.ignored) deps.bus.publish({ type: "event.updated", orgId: e.orgId, envId: e.envId, eventId: e.id, sourceId: e.sourceId });
}

/**
 * The connections each event goes through. The requests are read in one go,
 * and only those of events some filter rule must look at. Before the
 * routing transaction: regex rules await the sandbox. A connection whose
 * regex ran out of time matches none of the batch's later events, so one
 * bad pattern costs a batch one deadline, not one per event.
 */
async function planRoutes(db: Db, events: RoutableEvent[], rules: FilterRuleCache, logger?: Logger): Promise<Plan[]> {
  const bySource = await connectionsBySource(db, [...new Set(events.map((e) => e.sourceId))]);
  const candidatesOf = (e: RoutableEvent) => (bySource.get(e.sourceId) ?? []).filter(eligible);
  const filtered = events.filter((e) => candidatesOf(e).some((c) => rules.readsRequest(c, logger) || keyed(c)));
  const requests = await routingSql(db).requests(filtered.map((e) => e.id));
  const outOfTime = new Set<string>();
  const plans: Plan[] = [];
  for (const event of events) {
    let seen: FilterRequest | null = null;
    const view = () => (seen ??= requestView(requests.get(event.id)));
    const matched: SourceConnection[] = [];
    for (const c of candidatesOf(event)) {
      if (outOfTime.has(c.id)) continue;
      const verdict = rules.matchesNow(c, view, logger) ?? (await rules.matches(c, view, logger, () => outOfTime.add(c.id)));
      if (verdict) matched.push(c);
    }
    plans.push({ event, matched, keys: keysOf(matched, view) });
  }
  return plans;
}

/** An ordered connection whose key is read from the event. */
const keyed = (c: SourceConnection) => c.ordered === 1 && c.orderingKey !== null;

function keysOf(matched: readonly SourceConnection[], view: () => FilterRequest): (string | null)[] {
  return matched.map((c) => (keyed(c) ? orderingKeyOf(c.orderingKey, view) : null));
}

/** Enabled, and its destination not disabled. */
const eligible = (c: SourceConnection) => c.enabled === 1 && c.destinationStatus !== "disabled";

/**
 * Inside a write transaction: marks the events routed (or ignored) unless
 * they were `stored` so, queues their first tries, counts them per
 * connection: one statement each on PostgreSQL.
 */
async function applyRoutes(db: Db, plans: Plan[], now: Date, opts: { stored?: boolean } = {}): Promise<RoutedBatch> {
  const s = routingSql(db);
  const ignored: RoutableEvent[] = [];
  let routing = plans;
  if (!opts.stored) {
    const marks = plans.map((p) => ({ id: p.event.id, status: p.matched.length === 0 ? ("ignored" as const) : ("pending" as const) }));
    const marked = await s.markRouted(marks, iso(now));
    routing = plans.filter((p) => marked.has(p.event.id));
    for (const p of routing) if (p.matched.length === 0) ignored.push(p.event);
  }
  const attempts: AttemptInsert[] = [];
  const perConnection = new Map<string, { id: string; count: number; last: string }>();
  for (const { event, matched, keys } of routing) {
    for (const [i, c] of matched.entries()) {
      const row = newQueuedAttemptThrough(event, c, { triggerType: "initial", now });
      if (c.ordered === 1) inLine(row, { lane: orderingLane(c.id, keys[i] ?? null), key: keys[i] ?? null, block: c.onDlq === "block", receivedAt: event.receivedAt });
      attempts.push(row);
      const stat = perConnection.get(c.id) ?? { id: c.id, count: 0, last: "" };
      stat.count++;
      if (event.receivedAt > stat.last) stat.last = event.receivedAt;
      perConnection.set(c.id, stat);
    }
  }
  await placeInLines(db, attempts);
  await insertQueuedAttempts(db, attempts);
  await s.countConnections([...perConnection.values()]);
  return { queued: attempts.length, ignored };
}

/** The event as filter rules see it. Retention may prune an event between the batch read and here; such an event matches nothing. */
function requestView(row: StoredRequestRow | undefined): FilterRequest {
  return row ? eventView(row) : { body: null, headers: {}, query: {}, method: "", path: "" };
}

/**
 * A paused source's events are stored `held`; when the source is active
 * again they become `pending` and are routed like new ones (docs/decisions.md D5).
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
