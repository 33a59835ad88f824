import { takeTurns, walkBudget } from "../claimTurns";
import { and, eq, gt, min, sql, type SQL } from "drizzle-orm";
import { storeOf } from "../dialect";
import type { AttemptRow, ClaimedEvent, DestinationForDelivery } from "../deliverySql";
import type { Db } from "../db";
import type { ClaimedBatch, ClaimRequest, EventStatusChange, OutcomeRecord, QueueStore } from "../queueStore";
import { applicationEndpoints, applications, deliveryAttempts, destinations } from "../schema";
import { getTableColumns } from "drizzle-orm";
import { NODE_TIMEOUT_MS } from "../../core/node";

/**
 * The delivery queue on PostgreSQL: several claimers (pumps of one node, or
 * nodes) may claim side by side, so rows are picked with FOR UPDATE SKIP
 * LOCKED, and each statement works on a whole batch (a round trip costs
 * 0.1–0.2 ms: docs/decisions.md D17). Nothing here is prepared ahead: statements run
 * on `db`, which inside transaction() is the transaction's connection.
 * bigint columns are cast to int where read raw (Bun.SQL reads int8 as text).
 */
export function pgQueue(db: Db): QueueStore {
  return {
    claim: (request) => claimPg(db, request),
    release: (rows) => releasePg(db, rows),
    // Several nodes share the queue: another live node's claims are never taken at start-up.
    releaseOrphaned: (now) => releaseGonePg(db, now),
    releaseGone: (now) => releaseGonePg(db, now),
    async releaseClaimsOf(nodeId) {
      const rows = await db
        .update(deliveryAttempts)
        .set({ status: "queued", leaseUntil: null, claimedBy: null })
        .where(and(eq(deliveryAttempts.status, "delivering"), eq(deliveryAttempts.claimedBy, nodeId)))
        .returning({ id: deliveryAttempts.id });
      return rows.length;
    },
    loadEvents: (eventIds) => loadEventsPg(db, eventIds),
    destinationForDelivery: (id) => destinationForDeliveryPg(db, id),
    recordOutcomes: (outcomes) => recordOutcomesPg(db, outcomes),
    refreshEventStatuses: (eventIds) => refreshEventStatusesPg(db, eventIds),
    async nextScheduledAfter(now) {
      const [row] = await db
        .select({ at: min(deliveryAttempts.scheduledAt) })
        .from(deliveryAttempts)
        .where(and(eq(deliveryAttempts.status, "queued"), gt(deliveryAttempts.scheduledAt, now)));
      return row?.at ?? null;
    },
    async oldestQueued() {
      const [row] = await db.select({ at: min(deliveryAttempts.scheduledAt) }).from(deliveryAttempts).where(eq(deliveryAttempts.status, "queued"));
      return row?.at ?? null;
    },
  };
}

type Row = Record<string, unknown>;
const run = async <T = Row>(db: Db, query: SQL): Promise<T[]> => (await (db as unknown as { execute(q: SQL): Promise<T[]> }).execute(query)) as T[];
/** A JS array as one array parameter (drizzle would otherwise spread it into a list). */
const array = (values: readonly unknown[]): SQL => sql`${sql.param(values)}`;

/** AttemptRow's columns of `delivery_attempts a`, named as AttemptRow names them. */
export const PG_CLAIMED_COLUMNS = `a.id, a.org_id AS "orgId", a.env_id AS "envId", a.event_id AS "eventId", a.connection_id AS "connectionId",
  a.destination_id AS "destinationId", a.request_url AS "requestUrl", a.request_method AS "requestMethod",
  a.attempt_number::int AS "attemptNumber", a.trigger_type AS "triggerType", a.no_retry::int AS "noRetry", a.forced::int AS forced,
  a.job_id AS "jobId", a.lease_until AS "leaseUntil",
  a.ordering_lane AS "orderingLane", a.ordering_key AS "orderingKey", a.ordering_hold::int AS "orderingHold"`;
const CLAIMED = sql.raw(PG_CLAIMED_COLUMNS);

// ---------------------------------------------------------------- the claim


/** Where this process's walk over destinations stands: it goes round them in id order, claim after claim. */
interface WalkState {
  cursor?: string;
  lap?: { start?: string; wrapped: boolean };
}
const walks = new WeakMap<object, WalkState>();

/**
 * A fair claim (docs/decisions.md D17), in three steps:
 *
 * 1. Walk: from where the last claim stopped, a loose index scan over
 *    attempts_due (a recursive CTE, one index seek per destination) reads
 *    each destination with queued rows and its oldest row's due time, at
 *    most WALK_VISITS_PER_ROW per row asked for. Nothing is locked. Paused,
 *    excluded and not-yet-due destinations are passed over.
 * 2. Lock and claim: for the destinations the walk chose, `LIMIT k … FOR
 *    UPDATE SKIP LOCKED` rows of each (k per destination, passed as arrays
 *    and joined LATERAL), marked `delivering` with the lease in the same
 *    statement. While the walk is part way round, k is 1 (one row of each
 *    destination, claim after claim); once it has been round them all with
 *    room left, the room is shared in equal parts, round after round, so a
 *    destination's LIMIT stays close to what it is given (docs/decisions.md
 *    D17: at k=64 a claim locked 3,200 rows to hand out 64). A paused destination
 *    never reaches this step, and the statement checks again, so its rows
 *    are never locked. Rows another claimer holds are skipped, not waited for.
 * 3. Expired leases fill what room is left, also SKIP LOCKED.
 *
 * Rows within a destination go oldest first and destinations take turns.
 * Unlike SQLite, a walk stopped part way round does not fill its room from
 * the oldest due rows (on PostgreSQL that scan would read through a paused
 * destination's backlog): it answers `complete: false` and the next claim
 * goes on round.
 */
async function claimPg(db: Db, request: ClaimRequest): Promise<ClaimedBatch> {
  const { limit, now, claimedBy } = request;
  const cap = (d: string) => (request.oneEach?.has(d) ? 1 : limit);
  const walk = await walkDestinations(db, request);
  const lists = new Map<string, AttemptRow[]>(walk.chosen.map((d) => [d, []]));
  let count = 0;
  // First round: one row of each; when the walk has been round them all, an equal share of the batch.
  let shares = walk.lapDone ? share(limit, walk.chosen, cap, lists) : new Map(walk.chosen.map((d) => [d, 1]));
  while (shares.size > 0) {
    const got = await lockAndClaim(db, shares, now, request.lease, claimedBy);
    const more: string[] = [];
    for (const [d, k] of shares) {
      const rows = got.get(d) ?? [];
      lists.get(d)!.push(...rows);
      count += rows.length;
      // A destination that gave all it was asked may have more; it is asked again only once the walk has been round them all.
      if (walk.lapDone && rows.length === k && lists.get(d)!.length < cap(d)) more.push(d);
    }
    if (count >= limit) break;
    shares = share(limit - count, more, cap, lists);
  }
  let rows = takeTurns(lists.values(), limit);
  if (rows.length < limit) rows = rows.concat(await claimExpired(db, now, request.lease, claimedBy, limit - rows.length));
  return { rows, complete: walk.lapDone };
}

/** `room` rows shared out as evenly as each destination's cap allows (none gets more than its part: nothing is locked beyond the batch). */
function share(room: number, among: readonly string[], cap: (d: string) => number, lists: ReadonlyMap<string, AttemptRow[]>): Map<string, number> {
  const out = new Map<string, number>();
  const each = Math.floor(room / Math.max(1, among.length));
  let extra = room - each * among.length;
  for (const d of among) {
    const want = Math.min(each + (extra > 0 ? 1 : 0), cap(d) - (lists.get(d)?.length ?? 0));
    if (extra > 0) extra--;
    if (want > 0) out.set(d, want);
  }
  return out;
}

/**
 * Step 1: the destinations to claim from, in walk order (at most `limit`),
 * and whether the walk has now been round all of them (this claim or the
 * earlier ones of its round).
 */
async function walkDestinations(db: Db, request: ClaimRequest): Promise<{ chosen: string[]; lapDone: boolean }> {
  const key = storeOf(db).root;
  const state = walks.get(key) ?? {};
  walks.set(key, state);
  const budget = walkBudget(request.limit);
  const lap = state.lap ?? { start: state.cursor, wrapped: false };
  const chosen: string[] = [];
  let visits = 0;
  let lapDone = false;
  let after = state.cursor ?? "";
  walking: while (chosen.length < request.limit && visits < budget) {
    const want = budget - visits;
    const seen = await run<{ destinationId: string; scheduledAt: string; paused: boolean }>(
      db,
      sql`WITH RECURSIVE walk (destination_id, scheduled_at, n) AS (
            (SELECT destination_id, scheduled_at, 1 FROM delivery_attempts
              WHERE status = 'queued' AND destination_id > ${after} ORDER BY destination_id, scheduled_at LIMIT 1)
            UNION ALL
            SELECT nxt.destination_id, nxt.scheduled_at, walk.n + 1 FROM walk CROSS JOIN LATERAL
              (SELECT destination_id, scheduled_at FROM delivery_attempts
                WHERE status = 'queued' AND destination_id > walk.destination_id ORDER BY destination_id, scheduled_at LIMIT 1) nxt
             WHERE walk.n < ${want}
          )
          SELECT w.destination_id AS "destinationId", w.scheduled_at AS "scheduledAt", coalesce(d.status = 'paused', false) AS paused
            FROM walk w LEFT JOIN destinations d ON d.id = w.destination_id ORDER BY w.n`,
    );
    for (const r of seen) {
      const d = r.destinationId;
      if (lap.wrapped && lap.start !== undefined && d > lap.start) {
        lapDone = true;
        break walking;
      }
      visits++;
      state.cursor = d;
      if (!r.paused && !request.exclude.has(d) && r.scheduledAt <= request.now) chosen.push(d);
      // Back at the destination the round began with: the round is done (a claim that stopped on it must not leave
      // the next one a lap with nothing left to visit, answering "complete" with nothing claimed).
      if (lap.wrapped && d === lap.start) {
        lapDone = true;
        break walking;
      }
      if (chosen.length >= request.limit) break walking;
    }
    if (seen.length === want) break; // the budget is spent
    // Past the last destination id.
    if (lap.start === undefined || lap.wrapped) {
      lapDone = true;
      break;
    }
    lap.wrapped = true;
    after = "";
  }
  state.lap = lapDone ? undefined : lap;
  return { chosen, lapDone };
}

/** Step 2: `k` due rows of each destination, locked (SKIP LOCKED) and claimed in one statement; by destination, oldest first. */
async function lockAndClaim(db: Db, shares: ReadonlyMap<string, number>, now: string, lease: string, claimedBy: string | null): Promise<Map<string, AttemptRow[]>> {
  const rows = await run<AttemptRow & { scheduledAt: string }>(
    db,
    sql`WITH picked AS (
          SELECT r.id FROM unnest(${array([...shares.keys()])}::text[], ${array([...shares.values()])}::int[]) AS e (destination_id, k)
          CROSS JOIN LATERAL (
            SELECT id FROM delivery_attempts
             WHERE status = 'queued' AND destination_id = e.destination_id AND scheduled_at <= ${now}
             ORDER BY scheduled_at LIMIT e.k
             FOR UPDATE SKIP LOCKED) r
          WHERE NOT EXISTS (SELECT 1 FROM destinations p WHERE p.id = e.destination_id AND p.status = 'paused')
        )
        UPDATE delivery_attempts a SET status = 'delivering', lease_until = ${lease}, claimed_by = ${claimedBy}
          FROM picked WHERE a.id = picked.id
        RETURNING ${CLAIMED}, a.scheduled_at AS "scheduledAt"`,
  );
  const out = new Map<string, AttemptRow[]>();
  rows.sort((x, y) => (x.scheduledAt < y.scheduledAt ? -1 : x.scheduledAt > y.scheduledAt ? 1 : 0));
  for (const { scheduledAt: _, ...row } of rows) {
    const list = out.get(row.destinationId) ?? [];
    list.push(row);
    out.set(row.destinationId, list);
  }
  return out;
}

/** Step 3: rows whose claim's lease ran out (a worker that died or hung), given a new lease; a paused destination's are left. */
async function claimExpired(db: Db, now: string, lease: string, claimedBy: string | null, n: number): Promise<AttemptRow[]> {
  return run<AttemptRow>(
    db,
    sql`WITH expired AS (
          SELECT id FROM delivery_attempts x
           WHERE status = 'delivering' AND lease_until < ${now}
             AND NOT EXISTS (SELECT 1 FROM destinations p WHERE p.id = x.destination_id AND p.status = 'paused')
           ORDER BY lease_until LIMIT ${n}
           FOR UPDATE SKIP LOCKED
        )
        UPDATE delivery_attempts a SET lease_until = ${lease}, claimed_by = ${claimedBy} FROM expired WHERE a.id = expired.id
        RETURNING ${CLAIMED}`,
  );
}


// ---------------------------------------------------------------- releasing, loading

/** Claimed rows back to the queue in one statement, each only while its claim holds it. */
async function releasePg(db: Db, rows: readonly Pick<AttemptRow, "id" | "leaseUntil">[]): Promise<void> {
  if (rows.length === 0) return;
  await run(
    db,
    sql`UPDATE delivery_attempts a SET status = 'queued', lease_until = NULL, claimed_by = NULL
          FROM unnest(${array(rows.map((r) => r.id))}::text[], ${array(rows.map((r) => r.leaseUntil))}::text[]) AS u (id, lease_until)
         WHERE a.id = u.id AND a.status = 'delivering' AND a.lease_until = u.lease_until`,
  );
}

/**
 * Claims no live node holds, back to the queue: those of nodes that are gone
 * (heartbeat older than NODE_TIMEOUT_MS, or stopped: src/cluster/nodes.ts)
 * and those whose lease ran out. A row whose claimer is not in `nodes` at all
 * (claimed by the CLI's local mode) waits for its lease. Rows another claimer
 * is writing are skipped, not waited for: the next round sees them.
 * The attempt that was in flight on a dead node may be sent a second time:
 * the one exception to "no row is delivered twice".
 */
async function releaseGonePg(db: Db, now: string): Promise<number> {
  const liveSince = new Date(Date.parse(now) - NODE_TIMEOUT_MS).toISOString();
  const rows = await run<{ id: string }>(
    db,
    sql`WITH orphaned AS (
          SELECT a.id FROM delivery_attempts a
           WHERE a.status = 'delivering'
             AND (a.lease_until < ${now}
                  OR a.claimed_by IN (SELECT n.id FROM nodes n WHERE n.last_heartbeat_at < ${liveSince} OR n.stopped_at IS NOT NULL))
           FOR UPDATE SKIP LOCKED
        )
        UPDATE delivery_attempts a SET status = 'queued', lease_until = NULL, claimed_by = NULL
          FROM orphaned WHERE a.id = orphaned.id AND a.status = 'delivering'
        RETURNING a.id`,
  );
  return rows.length;
}

async function loadEventsPg(db: Db, eventIds: readonly string[]): Promise<ClaimedEvent[]> {
  if (eventIds.length === 0) return [];
  const rows = await run<ClaimedEvent>(
    db,
    sql`SELECT id, source_id AS "sourceId", headers, body, method, path, query, content_type AS "contentType"
          FROM events WHERE id = ANY(${array(eventIds)}::text[])`,
  );
  for (const r of rows) if (!(r.body instanceof Uint8Array)) r.body = new Uint8Array(r.body as ArrayBufferLike);
  return rows;
}

/** The destination and, when an application endpoint delivers through it, the endpoint's and application's settings (see deliverySql.destinationForDelivery). */
async function destinationForDeliveryPg(db: Db, destinationId: string): Promise<DestinationForDelivery | undefined> {
  const [row] = await db
    .select({
      ...getTableColumns(destinations),
      endpointId: applicationEndpoints.id,
      endpointExpiresAt: applicationEndpoints.expiresAt,
      previousSecret: applicationEndpoints.previousSecret,
      previousUntil: applicationEndpoints.previousSecretExpiresAt,
      applicationRateLimit: applications.rateLimit,
      portalHeld: applicationEndpoints.portalHeld,
      allowPrivateEndpoints: applications.allowPrivateEndpoints,
    })
    .from(destinations)
    .leftJoin(applicationEndpoints, eq(applicationEndpoints.destinationId, destinations.id))
    .leftJoin(applications, eq(applications.id, applicationEndpoints.applicationId))
    .where(eq(destinations.id, destinationId))
    .limit(1);
  return row;
}

// ---------------------------------------------------------------- recording

/**
 * A batch's outcomes in one UPDATE … FROM unnest(…) (docs/decisions.md D17: 65k rows/s
 * against 5.7k for a statement per row). Lease-guarded as on SQLite: a row
 * re-claimed after its lease ran out belongs to the new claim, and is not
 * written; RETURNING says which were.
 */
async function recordOutcomesPg(db: Db, outcomes: readonly OutcomeRecord[]): Promise<Set<string>> {
  if (outcomes.length === 0) return new Set();
  const column = <T>(pick: (o: OutcomeRecord) => T) => array(outcomes.map(pick));
  const rows = await run<{ id: string }>(
    db,
    sql`UPDATE delivery_attempts a
           SET status = u.status, request_url = u.request_url, request_method = u.request_method, request_headers = u.request_headers,
               request_body_size = u.request_body_size, response_status = u.response_status, response_headers = u.response_headers,
               response_body = u.response_body, duration_ms = u.duration_ms, error = u.error, error_detail = u.error_detail,
               next_retry_at = u.next_retry_at, is_dlq = u.is_dlq, dlq_at = u.dlq_at, sent_at = u.sent_at, lease_until = NULL
          FROM unnest(
                 ${column((o) => o.attempt.id)}::text[], ${column((o) => o.attempt.leaseUntil)}::text[], ${column((o) => o.status)}::text[],
                 ${column((o) => o.requestUrl)}::text[], ${column((o) => o.requestMethod)}::text[], ${column((o) => o.requestHeaders)}::text[],
                 ${column((o) => o.requestBodySize)}::bigint[], ${column((o) => o.responseStatus)}::bigint[], ${column((o) => o.responseHeaders)}::text[],
                 ${column((o) => o.responseBody)}::text[], ${column((o) => o.durationMs)}::bigint[], ${column((o) => o.error)}::text[],
                 ${column((o) => o.errorDetail)}::text[], ${column((o) => o.nextRetryAt)}::text[], ${column((o) => o.isDlq)}::bigint[],
                 ${column((o) => o.dlqAt)}::text[], ${column((o) => o.sentAt)}::text[]
               ) AS u (id, lease_until, status, request_url, request_method, request_headers, request_body_size, response_status, response_headers,
                       response_body, duration_ms, error, error_detail, next_retry_at, is_dlq, dlq_at, sent_at)
         WHERE a.id = u.id AND a.status = 'delivering' AND a.lease_until = u.lease_until
        RETURNING a.id`,
  );
  return new Set(rows.map((r) => r.id));
}

/** As deliverySql.refreshEventStatuses, with PostgreSQL's FILTER for SQLite's boolean sums. */
async function refreshEventStatusesPg(db: Db, eventIds: readonly string[]): Promise<EventStatusChange[]> {
  if (eventIds.length === 0) return [];
  return run<EventStatusChange>(
    db,
    sql`UPDATE events SET status = s.next
          FROM (SELECT event_id,
                       CASE WHEN sum(is_dlq) > 0 THEN 'failed' WHEN count(*) FILTER (WHERE status = 'success') > 0 THEN 'delivered' END AS next,
                       count(*) FILTER (WHERE status IN ('queued', 'delivering', 'held')) AS outstanding
                  FROM delivery_attempts
                 WHERE event_id = ANY(${array(eventIds)}::text[]) AND coalesce(trigger_type, '') <> 'replay'
                 GROUP BY event_id) AS s
         WHERE events.id = s.event_id AND s.outstanding = 0 AND s.next IS NOT NULL AND events.status <> s.next AND events.status <> 'rejected'
        RETURNING events.id, events.org_id AS "orgId", events.env_id AS "envId", events.source_id AS "sourceId", events.status`,
  );
}
