import { and, desc, eq, gt, gte, lt, or, sql, type SQL } from "drizzle-orm";
import type { ListEventsQuery } from "../contracts/events";
import type { Db } from "../db/db";
import { bodyContains } from "../db/portableSql";
import { events } from "../db/schema";
import type { Scope } from "./deps";
import { inScope } from "./scope";

/**
 * How many of the newest events (of the caller's environment, within
 * `after`/`before` when given) a search looks through. Matching text inside
 * bodies has no index to use, so every body in the window is read (once: the
 * matches' keys give both the page and `pagination.total`, src/domain/events.ts),
 * and the window keeps a search from costing time in proportion to everything
 * ever stored, and bounds the keys held in memory (docs/ingest.md,
 * "Events API"; docs/performance.md, "Reads at scale"). Older events are found
 * by narrowing `after`/`before` to their time, or by id with GET /v1/events/{id}.
 */
export const SEARCH_WINDOW_EVENTS = 10_000;

/** `search`: an event id prefix (with or without `evt_`), or text in the body, case-insensitive for ASCII. */
export function searchCondition(db: Db, term: string): SQL {
  const inBody = bodyContains(db, events.body, term);
  const idPrefix = /^(?:evt_)?([0-9a-f]{1,32})$/i.exec(term);
  return idPrefix ? or(sql`${events.id} LIKE ${`evt_${idPrefix[1]!.toLowerCase()}%`}`, inBody)! : inBody;
}

/**
 * The oldest (received_at, id) a search reaches: the SEARCH_WINDOW_EVENTS-th
 * newest event of the scope within the time filters, read from
 * events_scope_received without touching a body; no bound when there are
 * fewer events than that.
 */
export async function searchWindow(db: Db, scope: Scope, q: ListEventsQuery): Promise<SQL | undefined> {
  const [edge] = await db
    .select({ t: events.receivedAt, id: events.id })
    .from(events)
    .where(
      inScope(
        events,
        scope,
        q.after ? gte(events.receivedAt, new Date(q.after).toISOString()) : undefined,
        q.before ? lt(events.receivedAt, new Date(q.before).toISOString()) : undefined,
      ),
    )
    .orderBy(desc(events.receivedAt), desc(events.id))
    .limit(1)
    .offset(SEARCH_WINDOW_EVENTS - 1);
  if (!edge) return undefined;
  // The plain range lets the planner stop at the edge; the tie-break keeps the window exactly that many events.
  return and(gte(events.receivedAt, edge.t), or(gt(events.receivedAt, edge.t), gte(events.id, edge.id)));
}
