import type { Command } from "commander";
import { createWriteStream, existsSync, renameSync, rmSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { Writable } from "node:stream";
import type { BackupInfo } from "../../src/domain/backups";
import { act, globalFlags, noun, verb } from "../command";
import { path, type Context } from "../context";
import { apiErrorToCli, CliError, EXIT, usageError } from "../errors";
import { Output } from "../output";

const domain = () => import("../../src/domain/backups");
const dataDirOf = async (ctx: Context) => (await import("../../src/db/sqlite/backup")).dataDirOf(ctx.local!.deps.db);
/** On PostgreSQL, backups are pg_dump's job: one line, exit 1 (the API answers the same with a 409). */
const usePgDump = async () => new CliError((await domain()).USE_PG_DUMP, EXIT.error, "conflict");

/** `hookrelay backup create|list|restore`: consistent copies of the database, made while the server runs. */
export function registerBackup(program: Command) {
  const backup = noun(program, "backup", "Back up the database while the server runs, list backups, restore one into a stopped data dir", [
    "hookrelay backup create",
    "hookrelay backup create --data-dir /var/lib/hookrelay --out /mnt/usb/hookrelay.db",
    "hookrelay backup restore /var/lib/hookrelay/backups/hookrelay-2026-01-31T02-00-00-000Z.db --data-dir /var/lib/hookrelay",
  ]);

  act(
    verb(backup, "create", "Back up the database now (a consistent snapshot; ingest and deliveries go on)", [
      "hookrelay backup create                       # on the server, into <data-dir>/backups",
      "hookrelay backup create --out ./hookrelay.db  # and download it here",
      "hookrelay backup create --data-dir ./data --out ./hookrelay.db --json",
    ]).option("--out <file>", "write the backup to this file (remote mode: downloaded from the server's backups dir)"),
    async (ctx, o) => {
      const out = o.out === undefined ? undefined : resolve(o.out);
      if (out && existsSync(out)) throw usageError(`--out: ${out} already exists; choose a new file name`);
      if (out && !existsSync(dirname(out))) throw usageError(`--out: directory ${dirname(out)} does not exist`);
      // The API names no server path (docs/api.md): a remote backup has one only once downloaded with --out.
      let res = await ctx.run<{ backup: Omit<BackupInfo, "path"> & { path?: string } }>({
        method: "POST",
        path: "/backups",
        expect: "backup",
        local: async (deps, scope) => (out ? (await domain()).createBackupFile(deps, out, scope) : (await domain()).createBackup(deps, "manual", scope)),
      });
      const dataDir = ctx.local ? await dataDirOf(ctx) : null;
      if (out && ctx.remote) res = { backup: { ...res.backup, path: await download(ctx, res.backup.name, out) } };
      ctx.out.result(res, {
        text: (r, c) =>
          r.backup.path === undefined
            ? `${c.green("✓")} Backup ${c.cyan(r.backup.name)} made in the server's backups dir (${formatBytes(r.backup.size_bytes)})`
            : `${c.green("✓")} Backup written to ${c.cyan(r.backup.path)} (${formatBytes(r.backup.size_bytes)})`,
      });
      ctx.out.note((await domain()).secretKeyReminder(dataDir));
    },
  );

  act(
    verb(backup, "list", "List the backups in <data-dir>/backups, newest first", ["hookrelay backup list", "hookrelay backup list --data-dir /var/lib/hookrelay --json"]),
    async (ctx) => {
      if (ctx.local?.databaseFile === null) throw await usePgDump();
      const res = await ctx.run({ method: "GET", path: "/backups", expect: "backups", local: async () => (await domain()).listBackups(await dataDirOf(ctx)) });
      ctx.out.result(res, {
        list: "backups",
        columns: ["name", "kind", { key: "size_bytes", header: "size", get: (r) => formatBytes(r.size_bytes as number) }, "created_at"],
        empty: "No backups yet: `hookrelay backup create`, or set HOOKRELAY_BACKUP_INTERVAL on the server.",
      });
    },
  );

  verb(backup, "restore <file>", "Put a backup in place of a data dir's database (the server must be stopped; the replaced database is kept)", [
    "hookrelay backup restore ./hookrelay.db --data-dir ./data --json",
    "systemctl stop hookrelay && sudo -u hookrelay hookrelay backup restore ./hookrelay.db --data-dir /var/lib/hookrelay && systemctl start hookrelay",
  ]).action(async (file: string, _o: unknown, self: Command) => {
    const flags = globalFlags(self);
    const out = new Output(flags.json === true);
    if (flags.url !== undefined || flags.apiKey !== undefined || flags.profile !== undefined) {
      throw usageError("restore works on a data dir on this machine, with its server stopped: pass --data-dir, not --url/--api-key/--profile");
    }
    if (flags.databaseUrl !== undefined || (flags.dataDir === undefined && process.env.HOOKRELAY_DATABASE_URL)) throw await usePgDump();
    const dataDir = flags.dataDir ?? (process.env.HOOKRELAY_DATA_DIR || undefined);
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
