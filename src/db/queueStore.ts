import type { AttemptRow, ClaimedEvent, DestinationForDelivery } from "./deliverySql";

/**
 * The delivery queue's storage (docs/decisions.md D15), one
 * implementation per dialect: SQLite's tuned prepared statements and its
 * claim walk (src/db/sqlite/queue.ts), PostgreSQL's set-at-a-time SQL with
 * FOR UPDATE SKIP LOCKED (src/db/pg/queue.ts). src/delivery/queue.ts is
 * the one caller; it finds the implementation with `queueStoreOf(db)` (src/db/openStore.ts).
 * Every method runs on `db` as given: inside a transaction() it is part of it.
 */
export interface QueueStore {
  /** Claims up to `limit` due rows fairly across destinations, marking them `delivering` until `lease`. */
  claim(request: ClaimRequest): Promise<ClaimedBatch>;
  /** Hands claimed rows back to the queue, each only while its claim still holds it. */
  release(rows: readonly Pick<AttemptRow, "id" | "leaseUntil">[]): Promise<void>;
  /**
   * Start-up: claims no live node holds back to `queued`. SQLite (one serve
   * process per database, serve.lock): every `delivering` row. PostgreSQL
   * (several nodes): only gone nodes' claims and expired leases, as releaseGone.
   */
  releaseOrphaned(now: string): Promise<number>;
  /** This node's own claims back to `queued` (its shutdown deadline passed with deliveries in flight). */
  releaseClaimsOf(nodeId: string): Promise<number>;
  /**
   * The survivors' reaper: `delivering` rows claimed by a node that is gone
   * (its heartbeat late, or stopped) or whose lease ran out, back to `queued`.
   */
  releaseGone(now: string): Promise<number>;
  /** The events of a claimed batch (ids distinct). */
  loadEvents(eventIds: readonly string[]): Promise<ClaimedEvent[]>;
  destinationForDelivery(destinationId: string): Promise<DestinationForDelivery | undefined>;
  /** Writes the outcomes whose claim still holds its lease; answers the ids written (the others are stale). */
  recordOutcomes(outcomes: readonly OutcomeRecord[]): Promise<Set<string>>;
  /** Settles these events by all their non-replay deliveries; answers the events whose status changed. */
  refreshEventStatuses(eventIds: readonly string[]): Promise<EventStatusChange[]>;
  /** The earliest scheduled_at of a queued row later than `now` (ISO), or null. */
  nextScheduledAfter(now: string): Promise<string | null>;
  /** The earliest scheduled_at of any queued row (paused destinations' included), or null. */
  oldestQueued(): Promise<string | null>;
}

export interface ClaimRequest {
  /** ISO time: rows scheduled at or before it are due, leases that ran out before it are expired. */
  now: string;
  /** ISO time the claim's lease runs out. */
  lease: string;
  limit: number;
  /** The claiming node's id, stored as claimed_by (null: no node, e.g. the CLI's local mode and tests). */
  claimedBy: string | null;
  /** Destinations to leave alone this time (out of rate-limit slots). */
  exclude: ReadonlySet<string>;
  /** One row at most of each of these destinations. */
  oneEach?: ReadonlySet<string>;
}

export interface ClaimedBatch {
  rows: AttemptRow[];
  /** Whether the claim saw every claimable due row (see ClaimResult in src/delivery/queue.ts). */
  complete: boolean;
}

/**
 * What one attempt sent and got back, as its row stores it: the worker's
 * outcome (src/delivery) extends it with its own times and verdict, the
 * queue's record below with the columns they become.
 */
export interface AttemptResult {
  status: "success" | "failed";
  requestUrl: string;
  requestMethod: string;
  requestHeaders: string | null;
  requestBodySize: number;
  responseStatus: number | null;
  responseHeaders: string | null;
  responseBody: string | null;
  durationMs: number | null;
  error: string | null;
  errorDetail: string | null;
}

/** One outcome as stored on its row. */
export interface OutcomeRecord extends AttemptResult {
  attempt: Pick<AttemptRow, "id" | "leaseUntil" | "rowId">;
  nextRetryAt: string | null;
  isDlq: 0 | 1;
  dlqAt: string | null;
  sentAt: string;
}

export interface EventStatusChange {
  id: string;
  orgId: string;
  envId: string;
  sourceId: string;
  status: string;
}
