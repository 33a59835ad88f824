import { chmodSync, existsSync, mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { AppError, validation } from "../contracts/errors";
import { checkDatabaseFile, copyDatabase, databaseInUse, replaceDatabase } from "../db/sqlite/backup";
import { ARCHIVE_EXTENSION, writeArchive } from "../db/portable/archive";
import { readStore } from "../db/portable/reader";
import { databasePath } from "../db/sqlite/open";
import { binarySchemaVersion, compareSchema, databaseSchemaVersion, describeSchema } from "../db/sqlite/schemaVersion";
import type { Clock } from "../core/clock";
import { recordAudit } from "./audit";
import type { Deps, Scope } from "./deps";

/**
 * Backups of the one database: made on a live server without stopping it
 * (by hand, or on a schedule in `serve`), listed, and restored into a data
 * dir no process holds, or an empty PostgreSQL database. They live in the
 * backup dir (HOOKRELAY_BACKUP_DIR, by default `<data-dir>/backups` on
 * SQLite), named after the moment they were taken; scheduled ones are
 * marked so that keeping the newest N never deletes a backup someone made
 * by hand. Two formats: a copy of the SQLite file (`.db`, `VACUUM INTO`,
 * the fast default on SQLite), and the portable archive (`.hrbk`,
 * src/db/portable/), which either store can make and load.
 */
export type BackupKind = "manual" | "scheduled";
export type BackupFormat = "sqlite" | "portable";

export interface BackupInfo {
  name: string;
  kind: BackupKind;
  format: BackupFormat;
  path: string;
  size_bytes: number;
  created_at: string;
}

export const BACKUPS_DIR = "backups";

/** A backup as the API answers it: the server's file-system path stays on the server. */
export function backupView({ path: _path, ...rest }: BackupInfo): Omit<BackupInfo, "path"> {
  return rest;
}

/** What the backup API and `hookrelay backup` answer when there is no backup dir (a database URL without HOOKRELAY_BACKUP_DIR). */
export const NO_BACKUP_DIR =
  "no backup dir: with a database URL, set HOOKRELAY_BACKUP_DIR on the server (a directory it writes backups into), or make one with `hookrelay backup create --out FILE` in local mode (docs/postgres.md)";

export function backupsDir(dataDir: string) {
  return join(dataDir, BACKUPS_DIR);
}

/** The backup dir of this server: HOOKRELAY_BACKUP_DIR, else `<data-dir>/backups` where the store is a file; null when there is none. */
export function backupDirOf(deps: Pick<Deps, "store" | "settings">): string | null {
  if (deps.settings.backupDir) return resolve(deps.settings.backupDir);
  return deps.store.sqlite ? backupsDir(dirname(deps.store.sqlite.path)) : null;
}

/** The backup dir, or a 409 that says how to have one. */
export function requireBackupDir(deps: Pick<Deps, "store" | "settings">): string {
  const dir = backupDirOf(deps);
  if (dir === null) throw new AppError("conflict", NO_BACKUP_DIR);
  return dir;
}

// hookrelay-[scheduled-]2026-01-31T23-59-59-123Z[-2].db (or .hrbk)
const NAME = /^hookrelay-(scheduled-)?(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})-(\d{3})Z(?:-\d+)?\.(db|hrbk)$/;

export function isBackupName(name: string) {
  return NAME.test(name);
}

function nameFor(kind: BackupKind, format: BackupFormat, at: Date, n: number) {
  const stamp = at.toISOString().replace(/[:.]/g, "-");
  return `hookrelay-${kind === "scheduled" ? "scheduled-" : ""}${stamp}${n > 1 ? `-${n}` : ""}${format === "portable" ? ARCHIVE_EXTENSION : ".db"}`;
}

function describe(dir: string, name: string): BackupInfo | null {
  const m = NAME.exec(name);
  if (!m) return null;
  const path = join(dir, name);
  return { name, kind: m[1] ? "scheduled" : "manual", format: m[7] === "hrbk" ? "portable" : "sqlite", path, size_bytes: statSync(path).size, created_at: `${m[2]}T${m[3]}:${m[4]}:${m[5]}.${m[6]}Z` };
}

/**
 * A caller's backup is in the trail: written once the file is (a copy is no
 * database change that could share its transaction), in the caller's organization.
 */
async function recordBackup(deps: Deps, scope: Scope | undefined, backup: BackupInfo) {
  if (scope) await recordAudit(deps, scope, { action: "create", resourceType: "backup", resourceId: backup.name, after: { name: backup.name, kind: backup.kind, format: backup.format, size_bytes: backup.size_bytes }, envId: null });
}

/** The portable form where asked for, and always where the store is no file to copy; a copy of a file that is not there is refused. */
function formatFor(deps: Pick<Deps, "store">, opts: BackupOptions): BackupFormat {
  if (opts.format === "sqlite" && !deps.store.sqlite) throw new AppError("conflict", "this database is no SQLite file to copy: its backups are portable archives (format=portable)");
  return opts.format === "portable" || opts.portable || !deps.store.sqlite ? "portable" : "sqlite";
}

export interface BackupOptions {
  /** The portable archive even where the store is a SQLite file. */
  portable?: boolean;
  /** As the API's `?format=` names it; unset: the store's default. */
  format?: BackupFormat;
}

/**
 * Writes one backup to `path` while the server goes on: the SQLite file's
 * `VACUUM INTO`, or every table read in one read transaction into a
 * portable archive (src/db/portable/). Either appears only once complete.
 */
async function writeBackup(deps: Deps, format: BackupFormat, path: string): Promise<void> {
  if (format === "sqlite") {
    await copyDatabase(deps.store.sqlite!.path, path);
    return;
  }
  const snapshot = await deps.store.snapshot();
  try {
    await writeArchive(readStore(snapshot, deps.clock.now()), path);
  } finally {
    await snapshot.close();
  }
}

/** A consistent copy of the live database in the backup dir, while ingest and deliveries go on; `scope`: who asked (none for the scheduled ones). */
export async function createBackup(deps: Deps, kind: BackupKind = "manual", scope?: Scope, opts: BackupOptions = {}): Promise<{ backup: BackupInfo }> {
  const format = formatFor(deps, opts);
  const dir = requireBackupDir(deps);
  // Backups hold every event and key hash: for the service's user only.
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const at = deps.clock.now();
  let n = 1;
  while (existsSync(join(dir, nameFor(kind, format, at, n)))) n++;
  const name = nameFor(kind, format, at, n);
  await writeBackup(deps, format, join(dir, name));
  chmodSync(join(dir, name), 0o600);
  const backup = describe(dir, name)!;
  await recordBackup(deps, scope, backup);
  return { backup };
}

/** A backup written to a file of the caller's choosing (local mode's `backup create --out FILE`). */
export async function createBackupFile(deps: Deps, file: string, scope?: Scope, opts: BackupOptions = {}): Promise<{ backup: BackupInfo }> {
  const format = formatFor(deps, opts);
  const path = resolve(file);
  if (existsSync(path)) throw validation(`${path} already exists: choose a new file name`, [{ field: "out", message: "file exists" }]);
  if (!existsSync(dirname(path))) throw validation(`directory ${dirname(path)} does not exist`, [{ field: "out", message: "no such directory" }]);
  await writeBackup(deps, format, path);
  chmodSync(path, 0o600);
  const backup: BackupInfo = { name: path.slice(dirname(path).length + 1), kind: "manual", format, path, size_bytes: statSync(path).size, created_at: deps.clock.now().toISOString() };
  await recordBackup(deps, scope, backup);
  return { backup };
}

/** The backups in a backup dir, newest first. */
export function listBackups(dir: string): { backups: BackupInfo[] } {
  if (!existsSync(dir)) return { backups: [] };
  const backups = readdirSync(dir)
    .map((name) => describe(dir, name))
    .filter((b): b is BackupInfo => b !== null)
    .sort((a, b) => (a.created_at === b.created_at ? b.name.localeCompare(a.name) : b.created_at.localeCompare(a.created_at)));
  return { backups };
}

/** One backup by name, for download; only names this module makes are answered (no paths). */
export function findBackup(dir: string, name: string): BackupInfo {
  const found = isBackupName(name) ? listBackups(dir).backups.find((b) => b.name === name) : undefined;
  if (!found) throw new AppError("not_found", "Backup not found");
  return found;
}

/**
 * The schedule's step, called often: when the newest scheduled backup is at
 * least `intervalMs` old by the clock (or there is none yet), takes one and
 * deletes scheduled backups beyond the newest `keep`. A clock set back
 * behind the newest backup counts as due, so a wrong clock never stops them.
 */
export async function runScheduledBackup(deps: Deps, opts: { intervalMs: number; keep: number }): Promise<BackupInfo | null> {
  const dir = requireBackupDir(deps);
  const newest = listBackups(dir).backups.find((b) => b.kind === "scheduled");
  const now = deps.clock.now().getTime();
  if (newest) {
    const age = now - Date.parse(newest.created_at);
    if (age >= 0 && age < opts.intervalMs) return null;
  }
  const { backup } = await createBackup(deps, "scheduled");
  pruneScheduledBackups(dir, opts.keep);
  return backup;
}

/** Deletes scheduled backups beyond the newest `keep`, and copies a killed process left half-written. */
export function pruneScheduledBackups(dir: string, keep: number): string[] {
  const old = listBackups(dir)
    .backups.filter((b) => b.kind === "scheduled")
    .slice(keep);
  for (const b of old) rmSync(b.path, { force: true });
  const dayAgo = Date.now() - 86_400_000;
  for (const name of existsSync(dir) ? readdirSync(dir) : []) {
    const path = join(dir, name);
    if ((name.includes(".db.partial-") || name.includes(`${ARCHIVE_EXTENSION}.partial-`)) && statSync(path).mtimeMs < dayAgo) rmSync(path, { force: true });
  }
  return old.map((b) => b.name);
}

export interface RestoreResult {
  restored_from: string;
  database: string;
  /** The database the restore replaced, kept under this name (null when the data dir had none). */
  replaced_database_kept_as: string | null;
  schema: string;
}

/**
 * Puts a backup in place of a data dir's database. Refused while any
 * process has that database open, for a file that is not a sound hookrelay
 * database, and for one made by a newer schema than this binary knows (it
 * could not run on it). An older schema is fine: the next start migrates it.
 */
export function restoreBackup(dataDir: string, file: string, clock: Clock): RestoreResult {
  const source = resolve(file);
  if (!existsSync(source) || !statSync(source).isFile()) throw validation(`no backup file at ${source}`, [{ field: "file", message: "no such file" }]);
  const integrity = checkDatabaseFile(source);
  if (integrity !== "ok") throw validation(`${source} is not a sound SQLite database: ${integrity}`, [{ field: "file", message: integrity }]);
  const schema = databaseSchemaVersion(source);
  if (schema.applied.length === 0) throw validation(`${source} is not a hookrelay database (it has no migrations)`, [{ field: "file", message: "not a hookrelay database" }]);
  const binary = binarySchemaVersion();
  const fit = compareSchema(schema, binary);
  if (fit === "newer") {
    throw new AppError("conflict", `${source} was made by a newer hookrelay (schema ${describeSchema(schema)}; this binary has ${describeSchema(binary)}): restore it with that release or a later one`);
  }
  if (fit === "foreign") {
    throw new AppError("conflict", `${source} has a schema this binary cannot migrate (schema ${describeSchema(schema)}; this binary has ${describeSchema(binary)}): restore it with the release that made it`);
  }
  const target = resolve(dataDir);
  if (dataDirInUse(target)) {
    throw new AppError("conflict", `a hookrelay process has ${target} open (a running server, or a command in local mode): stop it first, then restore`);
  }
  mkdirSync(target, { recursive: true });
  const kept = replaceDatabase(target, source, `replaced-${clock.now().toISOString().replace(/[:.]/g, "-")}`);
  return { restored_from: source, database: databasePath(target), replaced_database_kept_as: kept, schema: describeSchema(schema) };
}

/**
 * Whether a process holds the data dir. Today: whether any process has its
 * database open (which also covers a CLI in local mode). A lock file `serve`
 * writes can add who holds it (pid, URL) here.
 */
export function dataDirInUse(dataDir: string): boolean {
  return databaseInUse(dataDir);
}

/** What to keep beside a backup so that its stored secrets can be read after a restore; `dataDir` null: the server's, which the API does not name. */
export function secretKeyReminder(dataDir: string | null) {
  const where = dataDir === null ? "secret.key in the server's data dir" : join(dataDir, "secret.key");
  return `Keep the secret key with your backups: ${where}, or the HOOKRELAY_SECRET_KEY the server runs with. Without it the secrets stored in a backup (verification, signing, channel secrets) cannot be decrypted.`;
}
