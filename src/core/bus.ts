/**
 * What arrives on the bus (src/live implements it): in process, and on
 * PostgreSQL from every node of the database (src/live/clusterBus.ts).
 * Published after the write's commit.
 */
export type BusMessage =
  | { type: "event.created"; orgId: string; envId: string; eventId: string; sourceId: string }
  | { type: "event.updated"; orgId: string; envId: string; eventId: string; sourceId: string }
  | { type: "delivery.queued" }
  /** A replay, bulk retry or redrive job was created: the job runner starts it. */
  | { type: "job.created"; jobId: string }
  | { type: "source.updated"; sourceId: string }
  /** A destination (or the endpoint or application settings a delivery through it reads) was edited or deleted: cached copies are dropped. */
  | { type: "destination.updated"; destinationId: string }
  /** A connection was edited or deleted: cached copies (its transform) are dropped. */
  | { type: "connection.updated"; connectionId: string }
  /** A collection was created, rebuilt or deleted: the collection builder runs. */
  | { type: "collection.updated"; collectionId: string }
  /** Recorded delivery outcomes opened (or reopened) an issue: issue_opened rules fire. */
  | { type: "issue.opened"; orgId: string; envId: string; issueId: string }
  /** A delivery landed in the DLQ: the environment's dlq rules are checked at once. */
  | { type: "delivery.dlq"; orgId: string; envId: string }
  /** Alert rules changed (or a test moved the clock): every rule is evaluated now instead of at the next interval. */
  | { type: "alerts.evaluate" }
  /** Every enabled periodic rule was evaluated at `at` (the clock's time): what fired has claimed its trigger. */
  | { type: "alerts.evaluated"; at: string }
  /** An API key was revoked or a session logged out (`api_key:<id>` / `session:<id>`): streams held open with it end at once, on every node. */
  | { type: "credential.revoked"; credential: string }
  /**
   * This node listens to the others again after its listening connection
   * dropped: what they announced meanwhile was lost, so every listener
   * re-reads what it watches (workers claim, caches empty, streams reconnect).
   */
  | { type: "bus.resumed" };

export interface Bus {
  publish(message: BusMessage): void;
  subscribe(listener: (message: BusMessage) => void): () => void;
}
