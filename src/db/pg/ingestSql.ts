import { eq, sql } from "drizzle-orm";
import { newEventId, storedAs, type EventWrite, type IngestSourceRow, type IngestSql, type WriteResult } from "../ingestBatch";
import type { Db } from "../db";
import { sources } from "../schema";
import { countSourcesLater } from "./counters";
import { pgArray, pgRows } from "./rows";

/**
 * Ingest's statements on PostgreSQL. A batch costs the same few round trips
 * whatever its size: the sources' state, the dedup locks and lookups, one
 * multi-row INSERT. Several nodes, and several turns of this one, write at
 * once, and none of them waits on a row every batch touches:
 * - de-duplication: a transaction-scoped advisory lock per (source, dedup
 *   key) the batch asks about, taken in one fixed order before the lookup,
 *   so two nodes receiving the same provider retry store one unique event
 *   (the second's lookup runs after the first's COMMIT), and batches of
 *   other keys of the same source do not wait;
 * - request_limit: only the sources that have one are locked (in id order)
 *   until the COMMIT, and counted inside the batch: the budget stays exact
 *   across nodes;
 * - the other sources' counters are added after the COMMIT by this node's
 *   counter flush (src/db/pg/counters.ts).
 */
export function pgIngestSql(db: Db): IngestSql {
  return {
    changeMark: () => null,
    async findSource(id) {
      const [row] = await db
        .select({
          id: sources.id,
          org_id: sources.orgId,
          env_id: sources.envId,
          status: sources.status,
          type: sources.type,
          template: sources.template,
          verification_enabled: sources.verificationEnabled,
          verification_type: sources.verificationType,
          verification_secret: sources.verificationSecret,
          verification_header: sources.verificationHeader,
          verification_config: sources.verificationConfig,
          dedup_enabled: sources.dedupEnabled,
          dedup_strategy: sources.dedupStrategy,
          dedup_field: sources.dedupField,
          dedup_window_seconds: sources.dedupWindowSeconds,
          ip_allowlist: sources.ipAllowlist,
          ip_denylist: sources.ipDenylist,
          request_count: sources.requestCount,
          expires_at: sources.expiresAt,
          request_limit: sources.requestLimit,
          schema_validation_enabled: sources.schemaValidationEnabled,
          json_schema: sources.jsonSchema,
          schema_action: sources.schemaAction,
          updated_at: sources.updatedAt,
        })
        .from(sources)
        .where(eq(sources.id, id))
        .limit(1);
      return (row as IngestSourceRow | undefined) ?? null;
    },

    async countRequest(sourceId) {
      // The request_limit check and the counting are one statement (the row lock orders concurrent ones).
      const rows = await pgRows(
        db,
        sql`UPDATE sources SET request_count = request_count + 1
             WHERE id = ${sourceId} AND (request_limit IS NULL OR request_count < request_limit) RETURNING status`,
      );
      return rows.length > 0;
    },

    async writeBatch(writes, at, routing) {
      const budgets = await sourceBudgets(db, [...new Set(writes.map((w) => w.sourceId))]);
      const results: (WriteResult | null)[] = writes.map((w) => {
        const source = budgets.get(w.sourceId);
        if (!source) return { kind: "source_gone" };
        if (source.stored >= source.budget) return { kind: "limit_reached" };
        source.stored++;
        return null;
      });
      const admitted = writes.flatMap((w, i) => (results[i] === null ? [{ w, i }] : []));
      await lockDedupKeys(db, admitted.map((a) => a.w));
      const originals = await findOriginals(db, admitted.map((a) => a.w), at.ms);

      // The batch's own events count as originals too, for the later events of it with the same key.
      const firstOfBatch = new Map<string, string>();
      const rows = admitted.map(({ w, i }) => {
        const id = newEventId(at.ms);
        let dedupStatus: string = w.dedupStatus;
        let duplicateOf: string | null = null;
        if (w.dedupStatus === "unique" && w.dedupKey !== null) {
          const key = dedupLookupKey(w, at.ms);
          duplicateOf = originals.get(key) ?? firstOfBatch.get(key) ?? null;
          if (duplicateOf) dedupStatus = "duplicate";
          else firstOfBatch.set(key, id);
        }
        const { status, routedAt } = storedAs(w, { id, sourceStatus: budgets.get(w.sourceId)!.status, duplicateOf, receivedAt: at.receivedAt }, routing);
        results[i] = { kind: "stored", id, receivedAt: at.receivedAt, status, dedupStatus, duplicateOf };
        return { id, w, dedupStatus, duplicateOf, status, routedAt };
      });
      await insertEvents(db, rows, at.receivedAt);
      await countEvents(db, budgets, at.receivedAt);
      return results as WriteResult[];
    },

    async unroute(eventIds) {
      await pgRows(db, sql`UPDATE events SET routed_at = NULL, status = 'pending' WHERE id = ANY(${pgArray(eventIds)}::text[])`);
    },
  };
}

type Budget = { status: string; limited: boolean; budget: number; stored: number };

/**
 * The batch's sources with what each may still take. Only those with a
 * request_limit are locked (in id order, so two batches cannot deadlock)
 * until the COMMIT: their budget is spent exactly; the others are read
 * without a lock, so batches of a busy source on several nodes never queue
 * on its row.
 */
async function sourceBudgets(db: Db, ids: string[]): Promise<Map<string, Budget>> {
  ids.sort();
  const rows = await pgRows<{ id: string; status: string; limited: boolean }>(
    db,
    sql`SELECT id, status, request_limit IS NOT NULL AS limited FROM sources WHERE id = ANY(${pgArray(ids)}::text[])`,
  );
  const out = new Map(rows.map((r) => [r.id, { status: r.status, limited: r.limited, budget: Infinity, stored: 0 }]));
  const limited = rows.filter((r) => r.limited).map((r) => r.id).sort();
  if (limited.length === 0) return out;
  const locked = await pgRows<{ id: string; status: string; left: string | null }>(
    db,
    sql`SELECT id, status, request_limit - request_count AS left FROM sources WHERE id = ANY(${pgArray(limited)}::text[]) ORDER BY id FOR UPDATE`,
  );
  for (const id of limited) out.delete(id);
  for (const r of locked) out.set(r.id, { status: r.status, limited: true, budget: r.left === null ? Infinity : Number(r.left), stored: 0 });
  return out;
}

/** The advisory-lock namespace (pg_advisory_xact_lock's first int4) of ingest's dedup keys; other locks use the one-bigint form. */
const DEDUP_LOCK_SPACE = 0x68726464; // "hrdd"

/**
 * Locks each (source, dedup key) the batch looks up until the COMMIT, in
 * ascending order (two batches with keys in common cannot deadlock). A
 * concurrent batch with the same key, on any node, waits here until this
 * one has committed, and its lookup then finds this one's event. Keys are
 * hashed to 32 bits: two keys that collide only wait on each other.
 */
async function lockDedupKeys(db: Db, writes: EventWrite[]): Promise<void> {
  const keys = new Set<number>();
  for (const w of writes) {
    if (w.dedupStatus !== "unique" || w.dedupKey === null) continue;
    keys.add(Number(BigInt.asIntN(32, Bun.hash.wyhash(`${w.sourceId}\u0000${w.dedupKey}`))));
  }
  if (keys.size === 0) return;
  const ordered = [...keys].sort((a, b) => a - b);
  // unnest hands the keys over in array order; each row's lock is taken as it comes.
  await pgRows(db, sql`SELECT count(pg_advisory_xact_lock(${DEDUP_LOCK_SPACE}::int4, k)) FROM unnest(${pgArray(ordered)}::int4[]) AS k`);
}

/** A lookup of the original of `w`: its source, key and window. */
const dedupLookupKey = (w: EventWrite, ms: number) => `${w.sourceId}\u0000${w.dedupKey}\u0000${sinceOf(w, ms)}`;
const sinceOf = (w: EventWrite, ms: number) => new Date(ms - w.dedupWindowSeconds * 1000).toISOString();

/** The oldest unique event within its window for each distinct key of the batch, in one query. */
async function findOriginals(db: Db, writes: EventWrite[], ms: number): Promise<Map<string, string>> {
  const lookups = new Map<string, { sourceId: string; key: string; since: string }>();
  for (const w of writes) {
    if (w.dedupStatus !== "unique" || w.dedupKey === null) continue;
    lookups.set(dedupLookupKey(w, ms), { sourceId: w.sourceId, key: w.dedupKey, since: sinceOf(w, ms) });
  }
  const found = new Map<string, string>();
  if (lookups.size === 0) return found;
  const asked = [...lookups.values()];
  const rows = await pgRows<{ i: string; id: string }>(
    db,
    sql`SELECT q.i, o.id
          FROM unnest(${pgArray(asked.map((l) => l.sourceId))}::text[], ${pgArray(asked.map((l) => l.key))}::text[],
                      ${pgArray(asked.map((l) => l.since))}::text[]) WITH ORDINALITY AS q(source_id, dedup_key, since, i)
          CROSS JOIN LATERAL (
            SELECT e.id FROM events e
             WHERE e.source_id = q.source_id AND e.dedup_key = q.dedup_key AND e.received_at >= q.since AND e.dedup_status = 'unique'
             ORDER BY e.received_at, e.id LIMIT 1) o`,
  );
  const keys = [...lookups.keys()];
  for (const r of rows) found.set(keys[Number(r.i) - 1]!, r.id);
  return found;
}

type EventRow = { id: string; w: EventWrite; dedupStatus: string; duplicateOf: string | null; status: string; routedAt: string | null };

/** The batch's events in one INSERT: a column per array, unnest makes the rows. */
async function insertEvents(db: Db, rows: EventRow[], receivedAt: string) {
  if (rows.length === 0) return;
  const column = (pick: (r: EventRow) => unknown) => pgArray(rows.map(pick));
  await pgRows(
    db,
    sql`INSERT INTO events (id, org_id, env_id, source_id, method, path, query, content_type, source_ip, headers, body,
                            payload_size, verification_status, verification_error, dedup_status, dedup_key, duplicate_of,
                            status, schema_errors, event_type, received_at, routed_at)
        SELECT id, org_id, env_id, source_id, method, path, query, content_type, source_ip, headers, body,
               length(body), verification_status, verification_error, dedup_status, dedup_key, duplicate_of,
               status, schema_errors, event_type, ${receivedAt}, routed_at
          FROM unnest(${column((r) => r.id)}::text[], ${column((r) => r.w.orgId)}::text[], ${column((r) => r.w.envId)}::text[],
                      ${column((r) => r.w.sourceId)}::text[], ${column((r) => r.w.method)}::text[], ${column((r) => r.w.path)}::text[],
                      ${column((r) => r.w.query)}::text[], ${column((r) => r.w.contentType)}::text[], ${column((r) => r.w.sourceIp)}::text[],
                      ${column((r) => r.w.headers)}::text[], ${column((r) => r.w.body)}::bytea[],
                      ${column((r) => r.w.verificationStatus)}::text[], ${column((r) => r.w.verificationError)}::text[],
                      ${column((r) => r.dedupStatus)}::text[], ${column((r) => r.w.dedupKey)}::text[], ${column((r) => r.duplicateOf)}::text[],
                      ${column((r) => r.status)}::text[], ${column((r) => r.w.schemaErrors)}::text[], ${column((r) => r.w.eventType)}::text[],
                      ${column((r) => r.routedAt)}::text[])
            AS e(id, org_id, env_id, source_id, method, path, query, content_type, source_ip, headers, body,
                 verification_status, verification_error, dedup_status, dedup_key, duplicate_of,
                 status, schema_errors, event_type, routed_at)`,
  );
}

/**
 * Each source's counters moved once, by what the batch stored of it: inside
 * the batch for a source with a request_limit (its row is locked already, and
 * request_count is its budget), after the COMMIT by the counter flush for the
 * others (src/db/pg/counters.ts).
 */
async function countEvents(db: Db, budgets: Map<string, Budget>, receivedAt: string) {
  const counted = [...budgets].filter(([, b]) => b.stored > 0);
  const now = counted.filter(([, b]) => b.limited);
  countSourcesLater(db, new Map(counted.filter(([, b]) => !b.limited).map(([id, b]) => [id, { requests: b.stored, events: b.stored, last: receivedAt }])));
  if (now.length === 0) return;
  await pgRows(
    db,
    sql`UPDATE sources s SET request_count = s.request_count + c.n, event_count = s.event_count + c.n, last_event_at = ${receivedAt}
          FROM unnest(${pgArray(now.map(([id]) => id))}::text[], ${pgArray(now.map(([, b]) => b.stored))}::int8[]) AS c(id, n)
         WHERE s.id = c.id`,
  );
}
