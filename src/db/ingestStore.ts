import { storeOf } from "./dialect";
import { ingestSqlOf } from "./statements";
import type { EventRouting, EventWrite, IngestSourceRow, IngestSql, StoredEventsBatch, StoredEventsHook, StoredRoutedEvent, WriteResult } from "./ingestBatch";
import type { Db } from "./db";
import type { IngestStore } from "./store";
import { committedThrough, transaction } from "./transaction";
import { inWriteTurn } from "./writeTurn";

export type { EventWrite, IngestSourceRow, StoredEventsBatch, StoredEventsHook, StoredRoutedEvent, WriteResult } from "./ingestBatch";

/**
 * The ingest hot path's store, on either dialect: the source lookup, and a
 * group commit that writes every event received during one event-loop turn
 * in one transaction. A request is acknowledged only after the COMMIT of its
 * batch, so every 200 is on disk (SQLite: WAL, synchronous=NORMAL survives a
 * process crash, FULL a power loss; PostgreSQL: its own commit), and one
 * commit serves the whole batch. The statements are the dialect's
 * (ingestSql.ts, pg/ingestSql.ts); what is decided around them is here.
 */

interface Pending {
  write: EventWrite;
  resolve(r: WriteResult): void;
  reject(e: unknown): void;
}

interface Store {
  sql: IngestSql;
  hook: StoredEventsHook | null;
  queue: Pending[];
  /** The last batch's received_at (ms): never goes backwards within the process. */
  lastMs: number;
}

const stores = new WeakMap<object, Store>();

function storeFor(db: Db): Store {
  const root = storeOf(db).root;
  let s = stores.get(root);
  if (!s) {
    s = { sql: ingestSqlOf(root), hook: null, queue: [], lastMs: 0 };
    stores.set(root, s);
  }
  return s;
}

/**
 * The ingest side of `db`'s store (Store.ingest): serve starts it with the
 * routing step every group commit runs before it commits (src/delivery/background.ts).
 */
export function ingestStoreOf(db: Db): IngestStore {
  return {
    start({ routeStored }) {
      const s = storeFor(db);
      s.hook = routeStored;
      return () => {
        if (s.hook === routeStored) s.hook = null;
      };
    },
  };
}

export function findIngestSource(db: Db, id: string): Promise<IngestSourceRow | null> {
  return storeFor(db).sql.findSource(id);
}

/** Changes when another connection (a CLI in local mode) committed; null when the dialect cannot tell (see IngestSql). */
export function ingestChangeMark(db: Db): number | null {
  return storeFor(db).sql.changeMark();
}

/** Counts a request that stores no event (a handshake); false once request_limit is reached. */
export function countIngestRequest(db: Db, sourceId: string): Promise<boolean> {
  return storeFor(db).sql.countRequest(sourceId);
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
    // Nothing of the batch was committed. A locked or unreachable database would fail each retry too: fail them all now.
    if (failed.length === 1 || failsEveryRetry(error)) {
      for (const p of failed) p.reject(error);
      return;
    }
    // Otherwise each event again alone, so one bad row fails only its own request.
    for (const p of failed) writeInTurn(db, s, now, () => [p]).catch(p.reject);
  });
}

/**
 * Writes the events `pick` hands over (inside the turn's transaction) and
 * answers each of them after the COMMIT. What routing publishes in it is
 * delivered after the requests' own continuations (which announce
 * event.created), so what routing announces follows it.
 */
async function writeInTurn(db: Db, s: Store, now: () => Date, pick: () => Pending[]): Promise<void> {
  let batch: Pending[] = [];
  const results = await inWriteTurn(db, async () => {
    batch = pick();
    return committedThrough(setImmediate, () => writeQueued(db, s, batch, now));
  });
  batch.forEach((p, i) => p.resolve(results[i]!));
}

/** Inside the turn's transaction: the batch's events, routed as they are stored. */
async function writeQueued(db: Db, s: Store, batch: Pending[], now: () => Date): Promise<WriteResult[]> {
  // received_at never goes backwards, so (received_at, id) keeps commit order and cursors never skip a late commit.
  const ms = Math.max(now().getTime(), s.lastMs);
  s.lastMs = ms;
  const writes = batch.map((p) => p.write);
  const routing = await BatchRouting.begin(s.hook, writes);
  const results = await s.sql.writeBatch(writes, { ms, receivedAt: new Date(ms).toISOString() }, routing);
  await routing.finish(db, s.sql);
  return results;
}

/** A locked (SQLite) or unreachable (PostgreSQL) database; drizzle may wrap the driver's error as its cause. */
function failsEveryRetry(error: unknown): boolean {
  for (let e: unknown = error; e; e = (e as { cause?: unknown }).cause) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && /^SQLITE_(BUSY|LOCKED)|^ERR_POSTGRES_CONNECTION/.test(code)) return true;
    if (e instanceof Error && /database is locked|busy/i.test(e.message)) return true;
  }
  return false;
}

/** One group commit's routing: the hook's batch (null once it threw), what it threw, and the events it routed. */
class BatchRouting implements EventRouting {
  routed: StoredRoutedEvent[] = [];
  /** The hook left some event unrouted (takes said null). */
  private deferred = false;
  private failure: { error: unknown } | null = null;

  private constructor(
    private readonly hook: StoredEventsHook | null,
    private batch: StoredEventsBatch | null,
  ) {}

  static async begin(hook: StoredEventsHook | null, writes: EventWrite[]): Promise<BatchRouting> {
    if (!hook) return new BatchRouting(null, null);
    const sourceIds = [...new Set(writes.filter((w) => w.status === "pending").map((w) => w.sourceId))];
    try {
      return new BatchRouting(hook, await hook.begin(sourceIds));
    } catch (error) {
      const routing = new BatchRouting(hook, null);
      routing.failure = { error };
      return routing;
    }
  }

  takes(write: EventWrite): boolean | null {
    if (!this.batch) return null;
    try {
      const taken = this.batch.takes(write);
      if (taken === null) this.deferred = true;
      return taken;
    } catch (error) {
      this.batch = null;
      this.failure = { error };
      return null;
    }
  }

  /**
   * The hook's writes in a savepoint of their own: should routing fail, they
   * roll back, the events routed so far are made `pending` and unrouted again
   * for the background router, and the batch itself still commits (storing an
   * event never depends on routing it).
   */
  async finish(db: Db, statements: IngestSql): Promise<void> {
    const hook = this.hook;
    if (!hook) return;
    const fail = async (error: unknown) => {
      if (this.routed.length > 0) await statements.unroute(this.routed.map((e) => e.id));
      hook.failed(error);
    };
    if (this.failure) return fail(this.failure.error);
    const batch = this.batch;
    if (!batch || (this.routed.length === 0 && !this.deferred)) return;
    try {
      await transaction(db, async () => batch.stored(this.routed));
    } catch (error) {
      await fail(error);
    }
  }
}
