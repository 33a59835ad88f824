import { Database } from "bun:sqlite";
import { chmodSync, closeSync, copyFileSync, existsSync, fsyncSync, openSync, renameSync, rmSync } from "node:fs";
import { dirname } from "node:path";
import { databasePath } from "./open";
import { type Db } from "../db";
import { sqliteOf } from "../prepared";
import { PRIVATE_FILE_MODE } from "../privateFiles";

/**
 * The SQLite side of backups: a consistent copy of a live database, checks
 * on a copy, whether some process has the database open, and putting a copy
 * in place of the database. A PostgreSQL build would do these with
 * pg_dump/pg_restore and an advisory lock instead.
 */

/** The file a database lives in (its directory is the data dir). */
export function databaseFileOf(db: Db): string {
  return sqliteOf(db).filename;
}

export function dataDirOf(db: Db): string {
  return dirname(databaseFileOf(db));
}

/**
 * `VACUUM INTO` on a connection of its own, in a thread of its own. It reads
 * one snapshot in one read transaction, so the copy holds every transaction
 * committed before it started and none after; in WAL mode writers go on
 * meanwhile, and the serving thread stays free for ingest. The copy appears
 * under `outFile` only once complete (written beside it, synced, renamed).
 */
export async function copyDatabase(dbFile: string, outFile: string): Promise<void> {
  const partial = `${outFile}.partial-${process.pid}-${Date.now()}`;
  try {
    await inWorker(dbFile, partial);
    const fd = openSync(partial, "r");
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(partial, outFile);
  } finally {
    rmSync(partial, { force: true });
  }
}

const WORKER_SOURCE = `
import { Database } from "bun:sqlite";
self.onmessage = (e) => {
  let db = null;
  try {
    // Read-write, though it writes nothing: a read-only connection cannot open a WAL database whose index file is missing.
    db = new Database(e.data.path, { readwrite: true, create: false });
    db.exec("PRAGMA busy_timeout = 10000");
    db.query("VACUUM INTO ?").run(e.data.out);
    postMessage({ ok: true });
  } catch (err) {
    postMessage({ ok: false, message: String((err && err.message) || err) });
  } finally {
    try { if (db) db.close(); } catch {}
  }
};
`;

function inWorker(path: string, out: string): Promise<void> {
  const worker = new Worker(URL.createObjectURL(new Blob([WORKER_SOURCE], { type: "application/javascript" })));
  return new Promise<void>((resolve, reject) => {
    worker.onmessage = (e: MessageEvent<{ ok: boolean; message?: string }>) => (e.data.ok ? resolve() : reject(new Error(e.data.message ?? "backup failed")));
    worker.onerror = (e) => reject(new Error(e.message));
    worker.postMessage({ path, out });
  }).finally(() => worker.terminate());
}

/** "ok", or what SQLite's integrity check found (a file that is no SQLite database says so). */
export function checkDatabaseFile(file: string): string {
  let sqlite: Database | null = null;
  try {
    sqlite = new Database(file, { readonly: true });
    const rows = sqlite.query("PRAGMA integrity_check").all() as { integrity_check: string }[];
    return rows.map((r) => r.integrity_check).join("; ");
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  } finally {
    sqlite?.close();
  }
}

/**
 * Whether any process has the data dir's database open (a running `serve`,
 * or a CLI in local mode). Every connection to a WAL database holds a
 * shared lock on the file for as long as it is open; an exclusive lock is
 * granted only when there is none. The probe waits for nothing, writes
 * nothing, and its locks go with it.
 */
export function databaseInUse(dataDir: string): boolean {
  const file = databasePath(dataDir);
  if (!existsSync(file)) return false;
  const sqlite = new Database(file, { readwrite: true, create: false });
  try {
    sqlite.exec("PRAGMA busy_timeout = 0");
    sqlite.exec("PRAGMA locking_mode = EXCLUSIVE");
    sqlite.exec("BEGIN EXCLUSIVE");
    sqlite.exec("COMMIT");
    return false;
  } catch {
    return true;
  } finally {
    sqlite.close();
  }
}

/**
 * Puts a copy of `source` where the data dir's database is. The database it
 * replaces is kept, renamed with `keptSuffix` (its WAL beside it under the
 * same name, so it opens as it was); returns that name, or null when the
 * data dir had no database. The copy is complete on disk before the live
 * name points to it.
 */
export function replaceDatabase(dataDir: string, source: string, keptSuffix: string): string | null {
  const live = databasePath(dataDir);
  const incoming = `${live}.restoring`;
  copyFileSync(source, incoming);
  // A copy keeps the mode of its source, which may be any: the live database is 0600 (src/db/privateFiles.ts).
  chmodSync(incoming, PRIVATE_FILE_MODE);
  const fd = openSync(incoming, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  let kept: string | null = null;
  if (existsSync(live)) {
    kept = `${live}.${keptSuffix}`;
    renameSync(live, kept);
    if (existsSync(`${live}-wal`)) renameSync(`${live}-wal`, `${kept}-wal`);
  }
  // The shared-memory index belongs to the file it was built for; SQLite rebuilds it.
  rmSync(`${live}-shm`, { force: true });
  rmSync(`${live}-wal`, { force: true });
  renameSync(incoming, live);
  return kept;
}
