import type { StoredRequestRow } from "./deliverySql";
import type { deliveryAttempts } from "./schema";

/**
 * The routing hot path's SQL (src/delivery/router.ts, src/domain/deliveries.ts):
 * one async interface, SQLite's statements in sqlite/routingSql.ts,
 * PostgreSQL's in pg/routingSql.ts. Each call takes a whole batch: PostgreSQL answers it in
 * one statement (arrays, `= ANY`, `unnest`); SQLite runs its tuned prepared
 * statements once per row, which on one local connection is cheaper than
 * parsing a JSON list (measured on the delivery path, deliverySql.ts).
 */
export interface RoutingSql {
  /** Unrouted events, oldest first. Narrow on purpose: most events never need their body to be routed. */
  pending(limit: number): Promise<UnroutedEvent[]>;
  /** These events' requests, read only for those a filter rule needs (retention may have pruned some). */
  requests(eventIds: string[]): Promise<Map<string, StoredRequestRow>>;
  /** Marks each event routed with its status; guarded (a manual retry may have routed it meanwhile). Returns the ids it marked. */
  markRouted(marks: { id: string; status: "pending" | "ignored" }[], at: string): Promise<Set<string>>;
  /** Adds to each connection's event_count and moves its last_event_at forward (never back). */
  countConnections(counts: ConnectionCount[]): Promise<void>;
  /** The connections of these sources, oldest first, with what a queued row needs of their destination. */
  connectionsOf(sourceIds: string[]): Promise<SourceConnection[]>;
  /** Queued rows: first tries of chains, or next tries. */
  insertAttempts(rows: readonly QueuedAttemptRow[]): Promise<void>;
}

/** What routing needs of a stored event. */
export interface UnroutedEvent {
  id: string;
  orgId: string;
  envId: string;
  sourceId: string;
  receivedAt: string;
}

/** A connection of a source, with what a queued row needs of its destination. */
export interface SourceConnection {
  id: string;
  name: string;
  sourceId: string;
  destinationId: string;
  enabled: number;
  filterRules: string | null;
  updatedAt: string;
  destinationUrl: string;
  destinationMethod: string;
  destinationStatus: string;
  /** Ordered delivery (docs/delivery.md, "Ordered delivery"): 1 when ordered, the key path, `continue` or `block`. */
  ordered: number;
  orderingKey: string | null;
  onDlq: string;
}

export interface ConnectionCount {
  id: string;
  count: number;
  /** The newest received_at routed through it. */
  last: string;
}

export type QueuedAttemptRow = typeof deliveryAttempts.$inferInsert;
