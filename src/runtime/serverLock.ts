/**
 * One `serve` per data dir. A second server on the same dir would re-queue
 * the first one's in-flight deliveries at start-up (duplicates) and split
 * the live streams, so `serve` holds an exclusive lock for its lifetime and
 * records where it answers, for local-mode CLI commands (which take no lock).
 *
 * The lock is an OS lock, not a PID file to second-guess: an exclusive
 * transaction on a small SQLite file (`serve.lock`), that is fcntl() locks
 * the kernel drops when the process ends, cleanly or by SIGKILL. There is
 * no stale lock to detect, and no PID-reuse to be fooled by. The file stays
 * after the server stops: deleting a lock file that another process may
 * have just opened would let two servers lock two different files.
 */
import { Database } from "bun:sqlite";
import { chmodSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError } from "../config/options";
import { makePrivateFile, PRIVATE_FILE_MODE } from "../db/privateFiles";

export const LOCK_FILE = "serve.lock";
export const INFO_FILE = "server.json";

/** `<data-dir>/server.json`: the last server started on the dir. */
export interface ServerInfo {
  pid: number;
  /** The public base URL ingest URLs are built from (HOOKRELAY_BASE_URL, or http://localhost:<port>). */
  base_url: string;
  started_at: string;
}

export class ServerLockedError extends ConfigError {
  constructor(
    readonly dataDir: string,
    readonly holderPid: number | null,
  ) {
    super(
      `another hookrelay serve (${holderPid === null ? "PID unknown" : `PID ${holderPid}`}) is running on data dir ${dataDir}; stop it first, or give this one another --data-dir`,
    );
  }
}

export interface ServerLock {
  /** Writes server.json; called again once the port (and so the default base URL) is known. */
  publish(info: { base_url: string }): void;
  /** Releases the lock (server.json stays: local mode still wants the base URL). */
  release(): void;
}

/** Held locks, strongly: a collected Database would close and so release its lock. */
const held = new Set<Database>();

/** Takes the data dir's serve lock, or throws ServerLockedError naming the holder. */
export function acquireServerLock(dataDir: string, now: () => Date = () => new Date()): ServerLock {
  makePrivateFile(join(dataDir, LOCK_FILE));
  const db = new Database(join(dataDir, LOCK_FILE), { create: true });
  try {
    db.exec("PRAGMA busy_timeout = 0");
    db.exec("BEGIN EXCLUSIVE");
  } catch (err) {
    db.close();
    if ((err as { code?: string }).code !== "SQLITE_BUSY") throw err;
    const holder = readServerInfo(dataDir)?.pid ?? null;
    // server.json may still name the server before the holder (the holder writes it just after locking).
    throw new ServerLockedError(dataDir, holder !== null && isAlive(holder) ? holder : null);
  }
  held.add(db);
  const startedAt = now().toISOString();
  const lock: ServerLock = {
    publish({ base_url }) {
      const info: ServerInfo = { pid: process.pid, base_url, started_at: startedAt };
      const tmp = join(dataDir, `${INFO_FILE}.${process.pid}.tmp`);
      writeFileSync(tmp, JSON.stringify(info, null, 2) + "\n", { mode: PRIVATE_FILE_MODE });
      chmodSync(tmp, PRIVATE_FILE_MODE);
      renameSync(tmp, join(dataDir, INFO_FILE));
    },
    release() {
      if (!held.delete(db)) return;
      db.close();
    },
  };
  return lock;
}

/** What the last `serve` on this data dir recorded, or null when none did (or the file is unreadable). */
export function readServerInfo(dataDir: string): ServerInfo | null {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(join(dataDir, INFO_FILE), "utf8"));
  } catch {
    return null;
  }
  const info = raw as Partial<ServerInfo>;
  if (!Number.isInteger(info?.pid) || typeof info.base_url !== "string" || typeof info.started_at !== "string") return null;
  return { pid: info.pid!, base_url: info.base_url, started_at: info.started_at };
}

function isAlive(pid: number) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, as another user.
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
