import type { Command } from "commander";
import { closeSync, createWriteStream, existsSync, openSync, readSync, renameSync, rmSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { Writable } from "node:stream";
import type { BackupInfo } from "../../src/domain/backups";
import { act, globalFlags, noun, verb } from "../command";
import { path, type Context } from "../context";
import { apiErrorToCli, CliError, EXIT, usageError } from "../errors";
import { Output } from "../output";

const domain = () => import("../../src/domain/backups");

/** `hookrelay backup create|list|restore`: consistent copies of the database, made while the server runs. */
export function registerBackup(program: Command) {
  const backup = noun(program, "backup", "Back up the database while the server runs, list backups, restore one into a stopped data dir or an empty PostgreSQL database", [
    "hookrelay backup create",
    "hookrelay backup create --data-dir /var/lib/hookrelay --out /mnt/usb/hookrelay.db",
    "hookrelay backup create --portable --out ./hookrelay.hrbk",
    "hookrelay backup restore /var/lib/hookrelay/backups/hookrelay-2026-01-31T02-00-00-000Z.db --data-dir /var/lib/hookrelay",
    "hookrelay backup restore ./hookrelay.hrbk --database-url postgres://hookrelay@db/hookrelay",
  ]);

  act(
    verb(backup, "create", "Back up the database now (a consistent snapshot; ingest and deliveries go on)", [
      "hookrelay backup create                       # on the server, into <data-dir>/backups",
      "hookrelay backup create --out ./hookrelay.db  # and download it here",
      "hookrelay backup create --data-dir ./data --out ./hookrelay.db --json",
      "hookrelay backup create --portable            # the archive either store restores (always, on PostgreSQL)",
    ])
      .option("--out <file>", "write the backup to this file (remote mode: downloaded from the server's backup dir)")
      .option("--portable", "write the portable archive (.hrbk) instead of a copy of the SQLite file; on PostgreSQL it is the only form"),
    async (ctx, o) => {
      const portable = o.portable === true;
      const out = o.out === undefined ? undefined : resolve(o.out);
      if (out && existsSync(out)) throw usageError(`--out: ${out} already exists; choose a new file name`);
      if (out && !existsSync(dirname(out))) throw usageError(`--out: directory ${dirname(out)} does not exist`);
      // The API names no server path (docs/api.md): a remote backup has one only once downloaded with --out.
      let res = await ctx.run<{ backup: Omit<BackupInfo, "path"> & { path?: string } }>({
        method: "POST",
        path: "/backups",
        query: portable ? { format: "portable" } : undefined,
        expect: "backup",
        local: async (deps, scope) => (out ? (await domain()).createBackupFile(deps, out, scope, { portable }) : (await domain()).createBackup(deps, "manual", scope, { portable })),
      });
      const dataDir = ctx.local && ctx.local.databaseFile !== null ? ctx.local.dataDir : null;
      if (out && ctx.remote) res = { backup: { ...res.backup, path: await download(ctx, res.backup.name, out) } };
      ctx.out.result(res, {
        text: (r, c) =>
          r.backup.path === undefined
            ? `${c.green("✓")} Backup ${c.cyan(r.backup.name)} made in the server's backup dir (${formatBytes(r.backup.size_bytes)})`
            : `${c.green("✓")} Backup written to ${c.cyan(r.backup.path)} (${formatBytes(r.backup.size_bytes)})`,
      });
      ctx.out.note((await domain()).secretKeyReminder(dataDir));
    },
  );

  act(
    verb(backup, "list", "List the backups in the backup dir (HOOKRELAY_BACKUP_DIR, by default <data-dir>/backups), newest first", ["hookrelay backup list", "hookrelay backup list --data-dir /var/lib/hookrelay --json"]),
    async (ctx) => {
      const res = await ctx.run({ method: "GET", path: "/backups", expect: "backups", local: async (deps) => (await domain()).listBackups((await domain()).requireBackupDir(deps)) });
      ctx.out.result(res, {
        list: "backups",
        columns: ["name", "kind", "format", { key: "size_bytes", header: "size", get: (r) => formatBytes(r.size_bytes as number) }, "created_at"],
        empty: "No backups yet: `hookrelay backup create`, or set HOOKRELAY_BACKUP_INTERVAL on the server.",
      });
    },
  );

  verb(backup, "restore <file>", "Put a backup in place of a data dir's database (the server must be stopped; the replaced database is kept), or load a portable one into an empty PostgreSQL database", [
    "hookrelay backup restore ./hookrelay.db --data-dir ./data --json",
    "systemctl stop hookrelay && sudo -u hookrelay hookrelay backup restore ./hookrelay.db --data-dir /var/lib/hookrelay && systemctl start hookrelay",
    "hookrelay backup restore ./hookrelay.hrbk --database-url postgres://hookrelay@db/hookrelay",
  ]).action(async (file: string, _o: unknown, self: Command) => {
    const flags = globalFlags(self);
    const out = new Output(flags.json === true);
    if (flags.url !== undefined || flags.apiKey !== undefined || flags.profile !== undefined) {
      throw usageError("restore works on a store reached from this machine, with its server stopped: pass --data-dir or --database-url, not --url/--api-key/--profile");
    }
    const databaseUrl = flags.databaseUrl ?? (flags.dataDir === undefined ? process.env.HOOKRELAY_DATABASE_URL || undefined : undefined);
    const dataDir = flags.dataDir ?? (process.env.HOOKRELAY_DATA_DIR || undefined);
    if (isPortable(file)) return restorePortable(file, databaseUrl ?? dataDir, out);
    if (databaseUrl !== undefined) {
      throw new CliError("this backup is a copy of a SQLite file: restore it into a data dir (--data-dir), then move it with `hookrelay migrate --from <data-dir> --to <postgres-url>`", EXIT.error, "conflict");
    }
    if (!dataDir) throw usageError("restore needs the data dir to restore into: pass --data-dir (or HOOKRELAY_DATA_DIR)");
    const { restoreBackup } = await domain();
    const { systemClock } = await import("../../src/core/clock");
    const { AppError } = await import("../../src/contracts/errors");
    // Holding serve's lock while restoring: a running server is named by its PID, and none can start midway.
    const { acquireServerLock, ServerLockedError } = await import("../../src/runtime/serverLock");
    let res;
    let lock;
    try {
      lock = existsSync(dataDir) ? acquireServerLock(dataDir) : undefined;
      res = restoreBackup(dataDir, file, systemClock);
    } catch (err) {
      if (err instanceof AppError) throw apiErrorToCli(err.status, err.toBody());
      if (err instanceof ServerLockedError) {
        const who = err.holderPid === null ? "a hookrelay serve" : `hookrelay serve (PID ${err.holderPid})`;
        throw new CliError(`${who} is running on data dir ${err.dataDir}: stop it first, then restore`, EXIT.error, "conflict");
      }
      throw err;
    } finally {
      lock?.release();
    }
    out.result(res, {
      text: (r, c) =>
        `${c.green("✓")} Restored ${c.cyan(r.restored_from)} into ${r.database} (schema ${r.schema})` +
        (r.replaced_database_kept_as ? `\n  the database it replaced is kept as ${r.replaced_database_kept_as}` : "") +
        `\n  start the server with the secret key the backup was made with (the data dir's secret.key, or HOOKRELAY_SECRET_KEY)`,
    });
  });
}

/** Whether the file starts as a gzip stream (a portable archive) rather than as a SQLite database. */
function isPortable(file: string): boolean {
  let fd: number;
  try {
    fd = openSync(resolve(file), "r");
  } catch {
    return false;
  }
  try {
    const head = Buffer.alloc(2);
    readSync(fd, head, 0, 2, 0);
    return head[0] === 0x1f && head[1] === 0x8b;
  } finally {
    closeSync(fd);
  }
}

/** A portable archive into a data dir (as a SQLite copy is restored) or an empty PostgreSQL database; progress on stderr. */
async function restorePortable(file: string, target: string | undefined, out: Output) {
  if (!target) throw usageError("restore needs where to restore into: pass --data-dir or --database-url (or HOOKRELAY_DATA_DIR / HOOKRELAY_DATABASE_URL)");
  const { restorePortableBackup } = await import("../../src/domain/portableRestore");
  const { parseStoreLocation } = await import("../../src/domain/storeLocation");
  const { systemClock } = await import("../../src/core/clock");
  const { whileDataDirsHeld } = await import("../serveLocks");
  const to = parseStoreLocation(target, "target");
  const res = await whileDataDirsHeld([to], () => restorePortableBackup(to, file, systemClock, (line) => out.note(line)));
  out.result(res, {
    text: (r, c) =>
      `${c.green("✓")} Restored ${c.cyan(r.restored_from)} (made by hookrelay ${r.hookrelay_version} on ${r.source} at ${r.created_at}) into ${r.target}: ${r.rows} rows, every table checked` +
      (r.replaced_database_kept_as ? `\n  the database it replaced is kept as ${r.replaced_database_kept_as}` : "") +
      `\n  start the server with the secret key the backup was made with (the data dir's secret.key, or HOOKRELAY_SECRET_KEY)`,
  });
}

/** Streams the server's copy to `file` (written beside it, renamed once complete). */
async function download(ctx: Context, name: string, file: string): Promise<string> {
  const res = await ctx.remote!.fetch("GET", path`/backups/${name}`);
  if (!res.ok || !res.body) {
    let body: unknown;
    try {
      body = await res.json();
    } catch {}
    if (body && typeof body === "object" && "error" in body) throw apiErrorToCli(res.status, body as never);
    throw new CliError(`downloading ${name} failed: HTTP ${res.status}`, EXIT.error, "download_failed");
  }
  const partial = `${file}.partial`;
  try {
    await res.body.pipeTo(Writable.toWeb(createWriteStream(partial, { mode: 0o600 })));
    renameSync(partial, file);
  } finally {
    rmSync(partial, { force: true });
  }
  return file;
}

function formatBytes(n: number) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 ** 3) return `${(n / 1024 / 1024).toFixed(1)} MiB`;
  return `${(n / 1024 ** 3).toFixed(2)} GiB`;
}
