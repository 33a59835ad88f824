import type { Database } from "bun:sqlite";
import type { SQL } from "bun";
import type { Db } from "./db";
import type { Dialect } from "./dialect";
import type { IngestSql, StoredEventsHook } from "./ingestBatch";
import type { QueueStore } from "./queueStore";
import type { RoutingSql } from "./routingSql";
import type { PortableSnapshot } from "./portable/snapshot";

/**
 * An open database of either dialect: what serve and the CLI's local mode
 * start from, chosen once by openStore (src/db/openStore.ts). Code outside
 * src/db never asks which dialect it is: it asks whether the store is
 * shared by several nodes, or for a capability it has or lacks (a file to
 * back up and checkpoint, a client for sessions of its own).
 */
export interface Store extends DialectStatements {
  /** For src/db and its tests only. */
  dialect: Dialect;
  db: Db;
  /**
   * Whether several nodes may run on this store at once (PostgreSQL): then
   * caches expire, rates are shared, a lease picks the scheduler. A SQLite
   * file has one serve process (serve.lock).
   */
  shared: boolean;
  /** A database that is one file (SQLite): its handle and path, for checkpoints, backups and space. */
  sqlite?: { handle: Database; path: string };
  /** A database server (PostgreSQL): the Bun.SQL client, for what needs a session of its own (the scheduler's lease, LISTEN/NOTIFY between nodes). */
  pg?: { client: SQL };
  /** Where the data lives, for logs and `config print` (no password). */
  location: string;
  /** A read transaction over every table, for the portable archive and `migrate` (src/db/portable/). */
  snapshot(): Promise<PortableSnapshot>;
  /** Ingest's group commit (src/db/ingestStore.ts). */
  ingest: IngestStore;
  /** Whether the database answers (readiness). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** What a dialect's folder opens; openStore adds what is the same on both (the ingest store). */
export type DialectStore = Omit<Store, "ingest">;

export interface IngestStore {
  /**
   * Starts routing at ingest: every group commit runs `routeStored` inside
   * its transaction, so the events it stores are stored routed and their
   * first tries queued before the COMMIT. Answers the stop.
   */
  start(opts: { routeStored: StoredEventsHook }): () => void;
}

/**
 * The hot paths' statements of one dialect, on `db` as given (the root, or
 * a transaction opened on it): each dialect folder exports one
 * (src/db/sqlite/store.ts, src/db/pg/store.ts).
 */
export interface DialectStatements {
  queue(db: Db): QueueStore;
  routing(db: Db): RoutingSql;
  ingestSql(db: Db): IngestSql;
  /** Gives the pages retention freed back to the file system; answers how many. */
  reclaimFreePages(db: Db): Promise<number>;
}

export type SyncMode = "normal" | "full";

export interface StoreOptions {
  dataDir: string;
  /** `postgres://…`: PostgreSQL; otherwise the data dir's SQLite file. */
  databaseUrl?: string;
  sync?: SyncMode;
}

/** The database cannot be reached or used (server down, credentials refused, too old): one line, no stack. */
export class DatabaseUnavailable extends Error {
  override name = "DatabaseUnavailable";
}

/** The URL without its password. */
export function redactedUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "(unparseable database URL)";
  }
}
