import { randomUUIDv7 } from "bun";

/**
 * What ingest's group commit (ingestStore.ts) asks of a dialect: the source
 * lookup, the request count of a handshake, and the writing of one batch
 * inside the turn's transaction. SQLite: ingestSql.ts; PostgreSQL:
 * pg/ingestSql.ts. Both decide each event the same way (storedAs).
 */
export interface IngestSql {
  findSource(id: string): Promise<IngestSourceRow | null>;
  /**
   * A number that changes whenever another connection committed to the
   * database (SQLite: `PRAGMA data_version`, which moves on a commit by a
   * CLI in local mode, never on this connection's own), or null when the
   * dialect cannot tell (PostgreSQL: the other writers are nodes, whose
   * changes reach this one on the bus).
   */
  changeMark(): number | null;
  /** Counts a request that stores no event (a handshake); false once request_limit is reached. */
  countRequest(sourceId: string): Promise<boolean>;
  /**
   * Inside the write transaction: per source, reads its status and request
   * budget once (and holds it until the COMMIT), stores the events that fit,
   * and moves the counters once by the number stored. One result per write,
   * in order.
   */
  writeBatch(writes: EventWrite[], at: BatchTime, routing: EventRouting): Promise<WriteResult[]>;
  /** Routing failed after these were inserted routed: they go back to the background router. */
  unroute(eventIds: string[]): Promise<void>;
}

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

/** An event a group commit stored routed (`pending` or `ignored`), with the request it was stored from. */
export interface StoredRoutedEvent {
  id: string;
  orgId: string;
  envId: string;
  sourceId: string;
  receivedAt: string;
  write: EventWrite;
}

/** One batch's time: every event of it is received at the same instant. */
export interface BatchTime {
  ms: number;
  receivedAt: string;
}

/** The routing of one batch, as a writer sees it. */
export interface EventRouting {
  /** Whether a `pending` event is stored routed, and if so whether anything takes it; null: stored unrouted. */
  takes(write: EventWrite): boolean | null;
  /** The events stored routed so far (the writer adds each one it inserts routed). */
  routed: StoredRoutedEvent[];
}

/**
 * Routes the events each group commit stores `pending`, inside its
 * transaction (serve's delivery router): each is inserted already routed
 * (`routed_at` set, `ignored` when nothing takes it) and its first tries are
 * queued before the COMMIT. No second transaction, no read back, and no
 * UPDATE of the row just inserted.
 */
export interface StoredEventsHook {
  /** A batch begins, inside the transaction and before its first insert; `sourceIds`: the sources of its pending events (read what they route to now). */
  begin(sourceIds: string[]): StoredEventsBatch | Promise<StoredEventsBatch>;
  /**
   * Routing the batch threw: what it wrote was rolled back and its events are
   * stored `pending`, unrouted. Called inside the batch's transaction: what it
   * publishes (or hands to onCommit) happens once the batch committed.
   */
  failed(error: unknown): void;
}

export interface StoredEventsBatch {
  /**
   * Before an event is inserted `pending`: whether any connection takes it
   * (false: it is stored `ignored`). Decides from memory, synchronously;
   * null: it cannot decide now, the event is stored unrouted for the
   * background router (`stored` still runs, to say so after the commit).
   */
  takes(write: EventWrite): boolean | null;
  /**
   * After the batch's inserts, in a savepoint: queues the routed events' first
   * tries. What it publishes on the bus (or hands to onCommit) happens once the
   * batch committed, after the requests' own announcements (event.created).
   */
  stored(events: StoredRoutedEvent[]): void | Promise<void>;
}

/** A new event id: time-ordered, so ids follow received_at. */
export const newEventId = (ms: number): string => "evt_" + randomUUIDv7("hex", ms).replaceAll("-", "");

/**
 * How an admitted event is stored: its status (a duplicate is `ignored`, a
 * paused source's event `held`, an event nothing takes `ignored`) and
 * whether it is stored routed (routed_at set). Adds it to `routing.routed`
 * when it is.
 */
export function storedAs(
  w: EventWrite,
  e: { id: string; sourceStatus: string; duplicateOf: string | null; receivedAt: string },
  routing: EventRouting,
): { status: string; routedAt: string | null } {
  let status = w.status === "rejected" ? "rejected" : e.duplicateOf ? "ignored" : e.sourceStatus === "paused" ? "held" : "pending";
  const taken = status === "pending" ? routing.takes(w) : null;
  if (taken === false) status = "ignored";
  if (taken === null) return { status, routedAt: null };
  routing.routed.push({ id: e.id, orgId: w.orgId, envId: w.envId, sourceId: w.sourceId, receivedAt: e.receivedAt, write: w });
  return { status, routedAt: e.receivedAt };
}
