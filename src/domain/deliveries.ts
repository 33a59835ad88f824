import type { FilterRule } from "../contracts/connections";
import type { TriggerType } from "../contracts/deliveryAttempts";
import { newId } from "../contracts/ids";
import type { Db } from "../db/db";
import { type SourceConnection } from "../db/routingSql";
import { routingSql } from "../db/statements";
import { deliveryAttempts } from "../db/schema";
// Pure leaf modules shared with the workers (as in domain/connections.ts).
import type { FilterRequest } from "../rules/filter";
import { filterChecks, FilterLimitError, parseFilterRules, regexChecksInSandbox } from "../rules/filter";
import type { Logger } from "../observability/logger";
import { iso } from "../core/clock";
import { errorMessage } from "../contracts/errors";

/**
 * What routing and retrying share: which connections an event goes
 * through, and the queued row that starts a delivery chain.
 */
export type AttemptInsert = typeof deliveryAttempts.$inferInsert;
export type { SourceConnection };

/** A fresh queued row: the first try of a chain. Retries of it count on from attempt_number 1. */
export function newQueuedAttempt(fields: {
  orgId: string;
  envId: string;
  eventId: string;
  connectionId: string | null;
  destinationId: string;
  requestUrl: string;
  requestMethod: string;
  triggerType: Exclude<TriggerType, "retry">;
  now: Date;
  jobId?: string | null;
  /** An operator forced the delivery of a rejected event. */
  forced?: boolean;
}): AttemptInsert {
  const now = iso(fields.now);
  return {
    id: newId("attempt"),
    orgId: fields.orgId,
    envId: fields.envId,
    eventId: fields.eventId,
    connectionId: fields.connectionId,
    destinationId: fields.destinationId,
    requestUrl: fields.requestUrl,
    requestMethod: fields.requestMethod,
    status: "queued",
    attemptNumber: 1,
    triggerType: fields.triggerType,
    scheduledAt: now,
    // Replays are recorded but never retried (spec, Replay).
    noRetry: fields.triggerType === "replay" ? 1 : 0,
    forced: fields.forced ? 1 : 0,
    jobId: fields.jobId ?? null,
    createdAt: now,
  };
}

/** The first try of an event through one of its source's connections (routing, manual retry). */
export function newQueuedAttemptThrough(
  event: { id: string; orgId: string; envId: string },
  connection: SourceConnection,
  fields: { triggerType: Exclude<TriggerType, "retry">; now: Date; jobId?: string | null; forced?: boolean },
): AttemptInsert {
  return newQueuedAttempt({
    orgId: event.orgId,
    envId: event.envId,
    eventId: event.id,
    connectionId: connection.id,
    destinationId: connection.destinationId,
    requestUrl: connection.destinationUrl,
    requestMethod: connection.destinationMethod,
    ...fields,
  });
}

/**
 * Inserts a queued row (in the caller's transaction). On SQLite the row is
 * written before this returns (the one connection; a statement prepared
 * once).
 */
export function insertQueuedAttempt(db: Db, row: AttemptInsert): Promise<void> {
  return routingSql(db).insertAttempts([row]);
}

/** Inserts queued rows: one multi-row INSERT on PostgreSQL, the prepared insert per row on SQLite. */
export function insertQueuedAttempts(db: Db, rows: readonly AttemptInsert[]): Promise<void> {
  return routingSql(db).insertAttempts(rows);
}

/**
 * The connections of these sources with what a queued row needs of their
 * destination, oldest first, in one statement: the router asks for every
 * batch it routes.
 */
export async function connectionsBySource(db: Db, sourceIds: string[]): Promise<Map<string, SourceConnection[]>> {
  const out = new Map<string, SourceConnection[]>();
  if (sourceIds.length === 0) return out;
  for (const r of await routingSql(db).connectionsOf(sourceIds)) {
    const list = out.get(r.sourceId) ?? [];
    list.push(r);
    out.set(r.sourceId, list);
  }
  return out;
}

/** Parsed filter rules per connection version: parsing validates with zod, too slow to repeat per event. */
export class FilterRuleCache {
  private readonly cache = new Map<string, { version: string; rules: FilterRule[] | null }>();

  /** The rules, [] for none, or null when the stored rules no longer parse (the connection then matches nothing). */
  get(conn: { id: string; filterRules: string | null; updatedAt: string }, logger?: Logger): FilterRule[] | null {
    const version = `${conn.updatedAt}\u0000${conn.filterRules ?? ""}`;
    const hit = this.cache.get(conn.id);
    if (hit && hit.version === version) return hit.rules;
    let rules: FilterRule[] | null;
    try {
      rules = conn.filterRules ? parseFilterRules(conn.filterRules) : [];
    } catch {
      logger?.warn("connection filter_rules do not parse; the connection matches nothing", { connection_id: conn.id });
      rules = null;
    }
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(conn.id, { version, rules });
    return rules;
  }

  /** Whether matching an event against the connection reads its request (any rule at all does). */
  readsRequest(conn: { id: string; filterRules: string | null; updatedAt: string }, logger?: Logger): boolean {
    return (this.get(conn, logger)?.length ?? 0) > 0;
  }

  /**
   * Whether the event passes the connection's filter, decided in this
   * thread; null when a regex rule is left to decide, which only the sandbox
   * may run (`matches`). `view` is built only when a rule needs it.
   */
  matchesNow(conn: Pick<SourceConnection, "id" | "filterRules" | "updatedAt">, view: () => FilterRequest, logger?: Logger): boolean | null {
    const checks = this.checks(conn, view, logger);
    return checks === false ? false : checks.length === 0 ? true : null;
  }

  /**
   * Whether the event passes the connection's filter, regex rules included
   * (in the sandbox, under its deadline). A regex that misses the deadline
   * counts as no match, with a warning naming the connection.
   */
  async matches(conn: Pick<SourceConnection, "id" | "filterRules" | "updatedAt">, view: () => FilterRequest, logger?: Logger, onLimit?: () => void): Promise<boolean> {
    const checks = this.checks(conn, view, logger);
    if (checks === false) return false;
    try {
      return await regexChecksInSandbox(checks);
    } catch (err) {
      const limit = err instanceof FilterLimitError;
      if (limit) onLimit?.();
      logger?.warn(limit ? "a regex filter rule ran out of time; treated as no match" : "filter evaluation failed; treated as no match", {
        connection_id: conn.id,
        error: errorMessage(err),
      });
      return false;
    }
  }

  private checks(conn: Pick<SourceConnection, "id" | "filterRules" | "updatedAt">, view: () => FilterRequest, logger?: Logger) {
    const rules = this.get(conn, logger);
    if (rules === null) return false;
    if (rules.length === 0) return [];
    try {
      return filterChecks(rules, view());
    } catch (err) {
      logger?.warn("filter evaluation failed; treated as no match", { connection_id: conn.id, error: errorMessage(err) });
      return false;
    }
  }
}

/**
 * Which connections each event passes, decided before a write transaction:
 * a regex rule awaits the sandbox, which must not happen while the
 * transaction holds the write turn (ingest waits on it).
 */
export async function filterVerdicts<E extends { id: string }>(
  items: { event: E; connections: SourceConnection[]; view: () => FilterRequest }[],
  rules: FilterRuleCache,
  logger?: Logger,
): Promise<(eventId: string, connectionId: string) => boolean> {
  const passed = new Set<string>();
  for (const { event, connections, view } of items) {
    let seen: FilterRequest | null = null;
    for (const c of connections) if (await rules.matches(c, () => (seen ??= view()), logger)) passed.add(`${event.id}\u0000${c.id}`);
  }
  return (eventId, connectionId) => passed.has(`${eventId}\u0000${connectionId}`);
}
