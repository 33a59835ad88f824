import { chmodSync, closeSync, existsSync, lstatSync, mkdirSync, openSync, readdirSync } from "node:fs";
import { join } from "node:path";

/**
 * The data dir holds every event, the API key hashes and the key that
 * decrypts every stored secret: it is for the service's user only
 * (docs/operations.md "File modes"). Outside systemd nothing else narrows
 * the usual umask 022, which would leave the database 0644 in a 0755 dir,
 * so modes are set explicitly instead of trusting the umask.
 */
export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** Creates the dir (and missing parents) when absent; a dir this call creates is 0700 whatever the umask. */
export function makePrivateDir(dir: string): void {
  if (existsSync(dir)) return;
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  chmodSync(dir, PRIVATE_DIR_MODE);
}

/**
 * Creates an empty file 0600 when absent, so that a file SQLite opens next
 * (the database, the serve lock) is never readable by others even for a
 * moment. SQLite gives the -wal and -shm files it makes later the mode of
 * their database file.
 */
export function makePrivateFile(path: string): void {
  try {
    closeSync(openSync(path, "wx", PRIVATE_FILE_MODE));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return;
    throw err;
  }
  chmodSync(path, PRIVATE_FILE_MODE);
}

/** What tightenDataDir changed, and what it could not (a file of another user). */
export interface Tightened {
  /** Paths relative to the data dir ("." for the dir itself), with the mode they had. */
  changed: { path: string; mode: string }[];
  failed: { path: string; error: string }[];
}

/**
 * Takes group and other permissions away from the data dir and everything
 * in it (files 0600, dirs 0700): a dir made by an older version, by hand or
 * by a package, and the files in it. Symbolic links are left alone (their
 * target may be anywhere). Files already private are not touched.
 */
export function tightenDataDir(dataDir: string): Tightened {
  const out: Tightened = { changed: [], failed: [] };
  const visit = (path: string, rel: string) => {
    let stat;
    try {
      stat = lstatSync(path);
    } catch {
      return; // gone meanwhile
    }
    if (stat.isSymbolicLink()) return;
    const dir = stat.isDirectory();
    if (!dir && !stat.isFile()) return;
    if ((stat.mode & 0o077) !== 0) {
      try {
        chmodSync(path, dir ? PRIVATE_DIR_MODE : PRIVATE_FILE_MODE);
        out.changed.push({ path: rel, mode: (stat.mode & 0o777).toString(8).padStart(4, "0") });
      } catch (err) {
        out.failed.push({ path: rel, error: (err as NodeJS.ErrnoException).code ?? String(err) });
      }
    }
    if (dir) {
      let names: string[];
      try {
        names = readdirSync(path);
      } catch {
        return;
      }
      for (const name of names) visit(join(path, name), rel === "." ? name : `${rel}/${name}`);
    }
  };
  visit(dataDir, ".");
  return out;
}
