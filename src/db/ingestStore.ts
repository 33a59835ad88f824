import type { Database, Statement } from "bun:sqlite";
import { randomUUIDv7 } from "bun";
import type { Db } from "./open";
import { sqliteOf } from "./prepared";
import { inWriteTurn } from "./writeTurn";

/**
 * The ingest hot path's SQL, kept here because it is SQLite-specific: one
 * prepared lookup of the source, and a group commit that writes every event
 * received during one event-loop turn in one transaction. A request is
 * acknowledged only after the COMMIT of its batch, so every 200 is on disk
 * (WAL; synchronous=NORMAL survives a process crash, FULL a power loss), and
 * one fsync serves the whole batch.
 *
 * A second dialect implements the same two functions (findIngestSource,
 * writeEvent) with its own statements.
 */

/** The source columns ingest reads, as stored. */
export interface IngestSourceRow {
  id: string;
  org_id: string;
  env_id: string;
  status: string;
  /** `topic` sources take events only through their topic's publish. */
  type: string;
  template: string | null;
  verification_enabled: number;
  verification_type: string | null;
  verification_secret: string | null;
  verification_header: string | null;
  verification_config: string | null;
  dedup_enabled: number;
  dedup_strategy: string | null;
  dedup_field: string | null;
  dedup_window_seconds: number;
  ip_allowlist: string | null;
  ip_denylist: string | null;
  request_count: number;
  expires_at: string | null;
  request_limit: number | null;
  schema_validation_enabled: number;
  json_schema: string | null;
  schema_action: string | null;
  updated_at: string;
}

export interface EventWrite {
  sourceId: string;
  orgId: string;
  envId: string;
  method: string;
  path: string;
  query: string | null;
  contentType: string | null;
  sourceIp: string | null;
  /** JSON object text, names lower-cased. */
  headers: string;
  body: Uint8Array;
  verificationStatus: "verified" | "failed" | "skipped";
  verificationError: string | null;
  /** `unique` asks for a duplicate check against dedupKey within dedupWindowSeconds. */
  dedupStatus: "unique" | "skipped";
  dedupKey: string | null;
  dedupWindowSeconds: number;
  /** `pending` becomes `held` when the source is paused at commit time, `ignored` for a duplicate. */
  status: "pending" | "rejected";
  schemaErrors: string | null;
  eventType: string | null;
}

export type WriteResult =
  | { kind: "stored"; id: string; receivedAt: string; status: string; dedupStatus: string; duplicateOf: string | null }
  | { kind: "limit_reached" }
  | { kind: "source_gone" };

interface Pending {
  write: EventWrite;
  resolve(r: WriteResult): void;
  reject(e: unknown): void;
}

/** An event a group commit stored routed (`pending` or `ignored`), with the request it was stored from. */
export interface StoredRoutedEvent {
  id: string;
  orgId: string;
  envId: string;
  sourceId: string;
  receivedAt: string;
  write: EventWrite;
}

/**
 * Routes the events each group commit stores `pending`, inside its
 * transaction (serve's delivery router): each is inserted already routed
 * (`routed_at` set, `ignored` when nothing takes it) and its first tries are
 * queued before the COMMIT. No second transaction, no read back, and no
 * UPDATE of the row just inserted.
 */
export interface StoredEventsHook {
  /** A batch begins, inside the transaction and before its first insert. */
  begin(): StoredEventsBatch;
  /** Routing the batch threw: what it wrote was rolled back and its events are stored `pending`, unrouted. */
  failed(error: unknown): () => void;
}

export interface StoredEventsBatch {
  /** Before an event is inserted `pending`: whether any connection takes it (false: it is stored `ignored`). Reads only. */
  takes(write: EventWrite): boolean;
  /** After the batch's inserts, in a savepoint: queues the routed events' first tries. Returns what to do once committed. */
  stored(events: StoredRoutedEvent[]): () => void;
}

/** One group commit's routing: the hook's batch (null once it threw), what it threw, and the events it routed. */
interface Routing {
  batch: StoredEventsBatch | null;
  failure: { error: unknown } | null;
  routed: StoredRoutedEvent[];
}

interface Store {
  sqlite: Database;
  hook: StoredEventsHook | null;
  findSource: Statement;
  countRequest: Statement;
  sourceState: Statement;
  countEvents: Statement;
  findOriginal: Statement;
  insertEvent: Statement;
  unroute: Statement;
  queue: Pending[];
  lastMs: number;
}

const stores = new WeakMap<Db, Store>();

function storeFor(db: Db): Store {
  let s = stores.get(db);
  if (s) return s;
  const sqlite = sqliteOf(db);
  s = {
    sqlite,
    hook: null,
    findSource: sqlite.prepare(
      `SELECT id, org_id, env_id, status, type, template, verification_enabled, verification_type, verification_secret,
              verification_header, verification_config, dedup_enabled, dedup_strategy, dedup_field, dedup_window_seconds,
              ip_allowlist, ip_denylist, request_count, expires_at, request_limit, schema_validation_enabled, json_schema,
              schema_action, updated_at
         FROM sources WHERE id = ?`,
    ),
    // The request_limit check and the counting are one statement, so concurrent requests cannot overshoot.
    countRequest: sqlite.prepare(
      `UPDATE sources SET request_count = request_count + 1
        WHERE id = ? AND (request_limit IS NULL OR request_count < request_limit) RETURNING status`,
    ),
    sourceState: sqlite.prepare(`SELECT status, request_count, request_limit FROM sources WHERE id = ?`),
    // SQL increments: exact whatever else writes the row (another batch, the CLI in local mode).
    countEvents: sqlite.prepare(
      `UPDATE sources SET request_count = request_count + ?, event_count = event_count + ?, last_event_at = ? WHERE id = ?`,
    ),
    findOriginal: sqlite.prepare(
      `SELECT id FROM events
        WHERE source_id = ? AND dedup_key = ? AND received_at >= ? AND dedup_status = 'unique'
        ORDER BY received_at LIMIT 1`,
    ),
    insertEvent: sqlite.prepare(
      `INSERT INTO events (id, org_id, env_id, source_id, method, path, query, content_type, source_ip, headers, body,
                           payload_size, verification_status, verification_error, dedup_status, dedup_key, duplicate_of,
                           status, schema_errors, event_type, received_at, routed_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    // Routing failed after these were inserted routed: they go back to the background router.
    unroute: sqlite.prepare(`UPDATE events SET routed_at = NULL, status = 'pending' WHERE id IN (SELECT value FROM json_each(?))`),
    queue: [],
    lastMs: 0,
  };
  stores.set(db, s);
  return s;
}

/** Sets (or with null, removes) the hook every group commit runs before it commits. */
export function onEventsStored(db: Db, hook: StoredEventsHook | null): void {
  storeFor(db).hook = hook;
}

export function findIngestSource(db: Db, id: string): IngestSourceRow | null {
  return (storeFor(db).findSource.get(id) as IngestSourceRow | null) ?? null;
}

/** Counts a request that stores no event (a handshake); false once request_limit is reached. */
export function countIngestRequest(db: Db, sourceId: string): boolean {
  return storeFor(db).countRequest.get(sourceId) !== null;
}

/** Queues one event for the next group commit; resolves after the COMMIT that holds it. */
export function writeEvent(db: Db, now: () => Date, write: EventWrite): Promise<WriteResult> {
  const s = storeFor(db);
  return new Promise((resolve, reject) => {
    // The first event queued schedules the flush; the others join it until it takes the queue.
    if (s.queue.push({ write, resolve, reject }) === 1) flushInNextTurn(db, s, now);
  });
}

/**
 * The batch is written in the turn's write transaction (writeTurn.ts), after
 * this turn's I/O: every request whose body arrived meanwhile joins it, and
 * the delivery pump commits with it.
 */
function flushInNextTurn(db: Db, s: Store, now: () => Date) {
  let taken: Pending[] | null = null;
  const take = () => {
    taken = s.queue;
    s.queue = [];
    return taken;
  };
  writeInTurn(db, s, now, take).catch((error) => {
    // When the transaction could not even begin, the batch was never taken: it is still queued.
    const failed = taken ?? take();
    // Nothing of the batch was committed. A locked database would stay locked for each retry too: fail them all now.
    if (failed.length === 1 || isBusy(error)) {
      for (const p of failed) p.reject(error);
      return;
    }
    // Otherwise each event again alone, so one bad row fails only its own request.
    for (const p of failed) writeInTurn(db, s, now, () => [p]).catch(p.reject);
  });
}

/**
 * Writes the events `pick` hands over (inside the turn's transaction) and
 * answers each of them after the COMMIT; then announces what routing did.
 */
function writeInTurn(db: Db, s: Store, now: () => Date, pick: () => Pending[]): Promise<void> {
  let batch: Pending[] = [];
  let afterCommit = () => {};
  return inWriteTurn(db, () => {
    batch = pick();
    const written = writeQueued(s, batch, now);
    afterCommit = written.afterCommit;
    return written.results;
  }).then((results) => {
    batch.forEach((p, i) => p.resolve(results[i]!));
    // After the requests' own continuations (which announce event.created): what routing announces follows it.
    setImmediate(afterCommit);
  });
}

/** Inside the turn's transaction: the batch's events, and what routing announces once committed. */
function writeQueued(s: Store, batch: Pending[], now: () => Date): { results: WriteResult[]; afterCommit: () => void } {
  // received_at never goes backwards, so (received_at, id) keeps commit order and cursors never skip a late commit.
  const ms = Math.max(now().getTime(), s.lastMs);
  s.lastMs = ms;
  const receivedAt = new Date(ms).toISOString();
  const routing = beginRouting(s);
  const results = writeBatch(s, batch.map((p) => p.write), ms, receivedAt, routing);
  return { results, afterCommit: finishRouting(s, routing) };
}

function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return (typeof code === "string" && /^SQLITE_(BUSY|LOCKED)/.test(code)) || (error instanceof Error && /database is locked|busy/i.test(error.message));
}

function beginRouting(s: Store): Routing {
  const routing: Routing = { batch: null, failure: null, routed: [] };
  try {
    routing.batch = s.hook?.begin() ?? null;
  } catch (error) {
    routing.failure = { error };
  }
  return routing;
}

/** Whether a `pending` event is stored routed, and if so whether anything takes it; null: stored unrouted. */
function routeOne(routing: Routing, w: EventWrite): boolean | null {
  if (!routing.batch) return null;
  try {
    return routing.batch.takes(w);
  } catch (error) {
    routing.batch = null;
    routing.failure = { error };
    return null;
  }
}

/**
 * The hook's writes in a savepoint of their own: should routing fail, they
 * roll back, the events routed so far are made `pending` and unrouted again
 * for the background router, and the batch itself still commits (storing an
 * event never depends on routing it).
 */
function finishRouting(s: Store, routing: Routing): () => void {
  const hook = s.hook;
  if (!hook) return () => {};
  const fail = (error: unknown) => {
    if (routing.routed.length > 0) s.unroute.run(JSON.stringify(routing.routed.map((e) => e.id)));
    return hook.failed(error);
  };
  if (routing.failure) return fail(routing.failure.error);
  const batch = routing.batch;
  if (!batch || routing.routed.length === 0) return () => {};
  try {
    return s.sqlite.transaction(() => batch.stored(routing.routed))();
  } catch (error) {
    return fail(error);
  }
}

/**
 * Inside the write transaction (so nobody else writes meanwhile): per source,
 * read its status and request budget once, store the events that fit, and
 * move the counters once by the number stored.
 */
function writeBatch(s: Store, writes: EventWrite[], ms: number, receivedAt: string, routing: Routing): WriteResult[] {
  const sources = new Map<string, { status: string; budget: number; stored: number } | null>();
  const results = writes.map((w): WriteResult => {
    let source = sources.get(w.sourceId);
    if (source === undefined) {
      const row = s.sourceState.get(w.sourceId) as { status: string; request_count: number; request_limit: number | null } | null;
      source = row && { status: row.status, budget: row.request_limit === null ? Infinity : row.request_limit - row.request_count, stored: 0 };
      sources.set(w.sourceId, source);
    }
    if (!source) return { kind: "source_gone" };
    if (source.stored >= source.budget) return { kind: "limit_reached" };
    source.stored++;
    return insertOne(s, w, source.status, ms, receivedAt, routing);
  });
  for (const [id, source] of sources) {
    if (source && source.stored > 0) s.countEvents.run(source.stored, source.stored, receivedAt, id);
  }
  return results;
}

function insertOne(s: Store, w: EventWrite, sourceStatus: string, ms: number, receivedAt: string, routing: Routing): WriteResult {
  let dedupStatus: string = w.dedupStatus;
  let duplicateOf: string | null = null;
  if (w.dedupStatus === "unique" && w.dedupKey !== null) {
    const since = new Date(ms - w.dedupWindowSeconds * 1000).toISOString();
    const original = s.findOriginal.get(w.sourceId, w.dedupKey, since) as { id: string } | null;
    if (original) {
      dedupStatus = "duplicate";
      duplicateOf = original.id;
    }
  }
  let status = w.status === "rejected" ? "rejected" : duplicateOf ? "ignored" : sourceStatus === "paused" ? "held" : "pending";
  const taken = status === "pending" ? routeOne(routing, w) : null;
  if (taken === false) status = "ignored";
  const id = "evt_" + randomUUIDv7("hex", ms).replaceAll("-", "");
  if (taken !== null) routing.routed.push({ id, orgId: w.orgId, envId: w.envId, sourceId: w.sourceId, receivedAt, write: w });
  s.insertEvent.run(
    id,
    w.orgId,
    w.envId,
    w.sourceId,
    w.method,
    w.path,
    w.query,
    w.contentType,
    w.sourceIp,
    w.headers,
    w.body,
    w.body.byteLength,
    w.verificationStatus,
    w.verificationError,
    dedupStatus,
    w.dedupKey,
    duplicateOf,
    status,
    w.schemaErrors,
    w.eventType,
    receivedAt,
    taken === null ? null : receivedAt,
  );
  return { kind: "stored", id, receivedAt, status, dedupStatus, duplicateOf };
}
