import type { Db } from "../db";
import { sqliteOf } from "../prepared";

/** Pages handed back per statement: each is a short write transaction, so ingest waits at most one. */
const PAGES_PER_STEP = 1024;

/**
 * Gives the pages that deletes freed back to the file system, so the
 * database file shrinks after retention pruning instead of staying at its
 * peak (auto_vacuum=INCREMENTAL, set in open.ts). Returns the pages freed.
 */
export async function reclaimFreePages(db: Db): Promise<number> {
  const sqlite = sqliteOf(db);
  let freed = 0;
  for (;;) {
    const free = (sqlite.query("PRAGMA freelist_count").get() as { freelist_count: number }).freelist_count;
    if (free === 0) return freed;
    sqlite.exec(`PRAGMA incremental_vacuum(${Math.min(free, PAGES_PER_STEP)})`);
    const left = (sqlite.query("PRAGMA freelist_count").get() as { freelist_count: number }).freelist_count;
    // Not incremental (a database another process still has to convert): nothing to give back here.
    if (left >= free) return freed;
    freed += free - left;
    await new Promise((r) => setImmediate(r));
  }
}
