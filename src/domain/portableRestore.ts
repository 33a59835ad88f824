import { existsSync, mkdirSync, rmSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { AppError, validation } from "../contracts/errors";
import type { Clock } from "../core/clock";
import { readArchive, verifyArchive } from "../db/portable/archive";
import { ArchiveFormatError } from "../db/portable/codec";
import { ArchiveVersionError, checkHeader } from "../db/portable/compat";
import { loadStream, mismatches, nonEmptyTables, refreshPlannerStatistics } from "../db/portable/loader";
import { digestStore } from "../db/portable/reader";
import { copyDatabase, replaceDatabase } from "../db/sqlite/backup";
import { databasePath } from "../db/sqlite/open";
import { withSnapshot } from "../db/portable/snapshot";
import { openLocation, refuseOpenDataDir, type StoreLocation } from "./storeLocation";

/**
 * `hookrelay backup restore` of a portable archive (docs/operations.md,
 * "Backups"). The whole file is read once first, every table checked against
 * its checksum, so a damaged archive changes nothing. Into a data dir it
 * works as the restore of a SQLite copy does: the archive is loaded into a
 * new database file beside the live one, which then takes its place (the
 * one it replaces is kept). Into PostgreSQL it loads an empty database only.
 * Either way the loaded tables are read back and checked at the end.
 */
export interface PortableRestoreResult {
  restored_from: string;
  target: string;
  hookrelay_version: string;
  source: string;
  created_at: string;
  rows: number;
  replaced_database_kept_as: string | null;
}

export async function restorePortableBackup(to: StoreLocation, file: string, clock: Clock, progress: (line: string) => void = () => {}): Promise<PortableRestoreResult> {
  const path = resolve(file);
  if (!existsSync(path) || !statSync(path).isFile()) throw validation(`no backup file at ${path}`, [{ field: "file", message: "no such file" }]);
  progress(`checking ${path}`);
  const { header, tables } = await asAppError(async () => {
    const verified = await verifyArchive(path);
    checkHeader(verified.header, path);
    return verified;
  });
  refuseOpenDataDir(to, "the target");
  const staging = to.databaseUrl === undefined ? join(to.dataDir, `restore-${process.pid}-${Date.now()}.tmp`) : null;
  const loc: StoreLocation = staging ? { label: staging, dataDir: staging } : to;
  if (staging) mkdirSync(staging, { recursive: true, mode: 0o700 });
  let kept: string | null = null;
  try {
    const store = await openLocation(loc);
    try {
      // A database some node serves holds rows (its node's, at least): refused as not empty.
      const present = await withSnapshot(store, nonEmptyTables);
      if (Object.keys(present).length > 0) {
        throw new AppError("conflict", `the target ${to.label} holds data (${Object.entries(present).map(([t, n]) => `${t} (${n})`).join(", ")}): a portable backup is restored into an empty database only`);
      }
      await asAppError(() =>
        loadStream(store.db, readArchive(path), { where: path, onTable: (p) => progress(`[${p.done}/${p.of}] ${p.table}: ${p.rows} rows`) }),
      );
      await refreshPlannerStatistics(store.db);
      progress("verifying counts and checksums of every table");
      const wrong = mismatches(tables, await withSnapshot(store, (s) => digestStore(s)));
      if (wrong.length > 0) throw new AppError("conflict", `the restored database does not match the archive: ${wrong.join("; ")}`);
    } finally {
      await store.close();
    }
    if (staging) {
      // A compact copy of the loaded file (its WAL folded in) is what takes the live name.
      const loaded = join(staging, "restored.db");
      await copyDatabase(databasePath(staging), loaded);
      kept = replaceDatabase(to.dataDir, loaded, `replaced-${clock.now().toISOString().replace(/[:.]/g, "-")}`);
    }
  } finally {
    if (staging) rmSync(staging, { recursive: true, force: true });
  }
  return {
    restored_from: path,
    target: to.databaseUrl === undefined ? databasePath(to.dataDir) : to.label,
    hookrelay_version: header.hookrelay_version,
    source: header.source,
    created_at: header.created_at,
    rows: Object.values(tables).reduce((n, t) => n + t.rows, 0),
    replaced_database_kept_as: kept,
  };
}

/** A damaged or incompatible archive is the caller's input: a 4xx with what is wrong, never a crash. */
async function asAppError<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof ArchiveFormatError) throw validation(error.message, [{ field: "file", message: "not a sound hookrelay archive" }]);
    if (error instanceof ArchiveVersionError) throw new AppError("conflict", error.message);
    throw error;
  }
}
