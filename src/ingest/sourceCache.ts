import { findIngestSource, ingestChangeMark, type IngestSourceRow } from "../db/ingestStore";
import type { Deps } from "../domain/deps";

/**
 * Source settings held in memory: a node reads a source at most once a
 * second instead of on every request (on SQLite the lookup was about 7% of an
 * ingest request's CPU, docs/performance.md; on PostgreSQL a round trip and a
 * pool connection). A copy is dropped at once when the source changes:
 * - an edit through any node's API publishes source.updated, which crosses
 *   nodes on the bus (and `bus.resumed` after missed notifications drops all);
 * - a CLI in local mode edits without the bus: on SQLite its commit moves the
 *   database's change mark (`PRAGMA data_version`), and every copy is dropped;
 *   on PostgreSQL the second's bound covers it.
 * What must be exact is checked again inside the write: the status (held
 * when paused), that the source still exists, and an ephemeral source's
 * request_limit.
 */
const TTL_MS = 1_000;
/** Only existing sources are kept; past this many the copies start over (a bound, not an expected size). */
const MAX_CACHED = 10_000;

interface Cache {
  rows: Map<string, { row: IngestSourceRow; until: number }>;
  mark: number | null;
}
const caches = new WeakMap<Deps["bus"], Cache>();

function cacheOf(deps: Deps): Cache {
  let cache = caches.get(deps.bus);
  if (!cache) {
    const made: Cache = { rows: new Map(), mark: null };
    deps.bus.subscribe((m) => {
      if (m.type === "source.updated") made.rows.delete(m.sourceId);
      // Notifications missed while the node was not listening: nothing cached can be trusted.
      else if (m.type === "bus.resumed") made.rows.clear();
    });
    caches.set(deps.bus, (cache = made));
  }
  return cache;
}

export async function ingestSource(deps: Deps, id: string): Promise<IngestSourceRow | null> {
  const cache = cacheOf(deps);
  const mark = ingestChangeMark(deps.db);
  if (mark !== cache.mark) {
    cache.rows.clear();
    cache.mark = mark;
  }
  const now = Date.now();
  const hit = cache.rows.get(id);
  if (hit && hit.until > now) return hit.row;
  const row = await findIngestSource(deps.db, id);
  if (row) {
    if (cache.rows.size >= MAX_CACHED) cache.rows.clear();
    cache.rows.set(id, { row, until: now + TTL_MS });
  } else cache.rows.delete(id);
  return row;
}
