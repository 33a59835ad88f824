import { findIngestSource, type IngestSourceRow } from "../db/ingestStore";
import type { Deps } from "../domain/deps";

/**
 * On PostgreSQL each request's source lookup is a round trip (0.1–0.2 ms,
 * and a pool connection): a node reads a source at most once a second
 * instead, and an edit on any node drops the copy at once (source.updated
 * crosses nodes on the bus). What must be exact is checked again inside the
 * write: the status (held when paused) and an ephemeral source's
 * request_limit. SQLite reads the row every time: a prepared lookup costs
 * microseconds, and a CLI in local mode edits it without telling the bus.
 */
const TTL_MS = 1_000;

interface Cache {
  rows: Map<string, { row: IngestSourceRow; until: number }>;
}
const caches = new WeakMap<Deps["bus"], Cache>();

function cacheOf(deps: Deps): Cache {
  let cache = caches.get(deps.bus);
  if (!cache) {
    const made: Cache = { rows: new Map() };
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
  if (!deps.store.shared) return findIngestSource(deps.db, id);
  const cache = cacheOf(deps);
  const now = Date.now();
  const hit = cache.rows.get(id);
  if (hit && hit.until > now) return hit.row;
  const row = await findIngestSource(deps.db, id);
  if (row) cache.rows.set(id, { row, until: now + TTL_MS });
  else cache.rows.delete(id);
  return row;
}
