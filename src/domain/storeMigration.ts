import { chmodSync, copyFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { AppError, validation } from "../contracts/errors";
import type { Clock } from "../core/clock";
import { TableDigest, type TableSummary } from "../db/portable/codec";
import { insertLines, mismatches, nonEmptyTables, refreshPlannerStatistics } from "../db/portable/loader";
import { digestStore, tableLines } from "../db/portable/reader";
import { PORTABLE_TABLES } from "../db/portable/tables";
import type { Store } from "../db/store";
import { withSnapshot } from "../db/portable/snapshot";
import { hasDatabaseFile, openLocation, refuseOpenDataDir, refuseServedStore, type StoreLocation } from "./storeLocation";

/**
 * `hookrelay migrate`: every table of one store copied into another (SQLite
 * data dir or PostgreSQL, either way), ids kept, with neither served
 * (docs/operations.md, "Moving between stores"). The same reader and loader
 * as the portable archive (src/db/portable/), without the file between.
 *
 * Resuming: tables are copied one at a time in dependency order, each in
 * committed batches. After an interruption the target holds a prefix: whole
 * tables, then part of one. `resume` skips the tables whose count already
 * equals the source's, empties the one that stopped part-way (nothing
 * references its rows yet: later tables are empty) and copies it again,
 * then goes on. The checksums at the end are what proves the result, skipped
 * tables included.
 */
export interface MigrateOptions {
  from: StoreLocation;
  to: StoreLocation;
  resume?: boolean;
  clock: Clock;
  progress?: (line: string) => void;
}

export interface MigrateResult {
  from: string;
  to: string;
  tables: { name: string; rows: number; sha256: string; copied: boolean }[];
  rows: number;
  resumed: boolean;
}

/** Every this many rows of one table, a progress line. */
const PROGRESS_EVERY = 50_000;

export async function migrateStore(opts: MigrateOptions): Promise<MigrateResult> {
  const { from, to } = opts;
  const say = opts.progress ?? (() => {});
  if (from.label === to.label) throw validation("--from and --to name the same store", [{ field: "to", message: "same as --from" }]);
  if (from.databaseUrl === undefined && !hasDatabaseFile(from)) throw validation(`--from: no hookrelay database in ${from.label}`, [{ field: "from", message: "no database" }]);
  refuseOpenDataDir(from, "the source");
  refuseOpenDataDir(to, "the target");
  const source = await openLocation(from);
  let target: Store | null = null;
  try {
    target = await openLocation(to);
    const now = opts.clock.now();
    await refuseServedStore(source, from, "the source", now);
    await refuseServedStore(target, to, "the target", now);
    const tables = await copyTables(source, target, opts, say);
    copySecretKey(from, to);
    return { from: from.label, to: to.label, tables, rows: tables.reduce((n, t) => n + t.rows, 0), resumed: opts.resume === true };
  } finally {
    await target?.close();
    await source.close();
  }
}

async function copyTables(source: Store, target: Store, opts: MigrateOptions, say: (line: string) => void): Promise<MigrateResult["tables"]> {
  const present = await withSnapshot(target, nonEmptyTables);
  if (Object.keys(present).length > 0 && !opts.resume) {
    const list = Object.entries(present)
      .map(([t, n]) => `${t} (${n})`)
      .join(", ");
    throw new AppError("conflict", `the target ${opts.to.label} holds data (${list}): migrate copies into an empty store only; to continue a migrate that was interrupted, run it again with --resume`);
  }
  const snapshot = await source.snapshot();
  const copied = new Map<string, TableSummary>();
  const skipped = new Set<string>();
  try {
    for (const [i, table] of PORTABLE_TABLES.entries()) {
      const step = `[${i + 1}/${PORTABLE_TABLES.length}] ${table.name}`;
      const total = await snapshot.count(table.name);
      const have = present[table.name] ?? 0;
      if (have > 0 && have === total) {
        skipped.add(table.name);
        say(`${step}: ${total} rows already copied`);
        continue;
      }
      // Part of this table made it before the interruption: its rows go, and it is copied whole.
      if (have > 0) await target.db.delete(table.table);
      say(`${step}: copying ${total} rows`);
      const digest = new TableDigest();
      let next = PROGRESS_EVERY;
      for await (const lines of tableLines(snapshot, table, digest)) {
        await insertLines(target.db, table, lines, `the copy of ${opts.from.label}`);
        if (digest.rows >= next) {
          say(`${step}: ${digest.rows}/${total} rows`);
          next += PROGRESS_EVERY;
        }
      }
      copied.set(table.name, digest.summary());
    }
    await refreshPlannerStatistics(target.db);
    say("verifying counts and checksums of every table");
    const expected = { ...Object.fromEntries(copied), ...(skipped.size > 0 ? await digestStore(snapshot, skipped) : {}) };
    const found = await withSnapshot(target, (s) => digestStore(s));
    const wrong = mismatches(expected, found);
    if (wrong.length > 0) throw new AppError("conflict", `the target does not match the source after the copy: ${wrong.join("; ")}`);
    return PORTABLE_TABLES.map((t) => ({ name: t.name, rows: expected[t.name]!.rows, sha256: expected[t.name]!.sha256, copied: copied.has(t.name) }));
  } finally {
    await snapshot.close();
  }
}

/**
 * Secrets travel sealed: the target reads them with the source's key. From
 * one data dir to another, the key file goes along (unless the target has
 * one); otherwise the operator passes HOOKRELAY_SECRET_KEY (the CLI says so).
 */
function copySecretKey(from: StoreLocation, to: StoreLocation) {
  if (from.databaseUrl !== undefined || to.databaseUrl !== undefined) return;
  const key = join(from.dataDir, "secret.key");
  const dest = join(to.dataDir, "secret.key");
  if (existsSync(key) && !existsSync(dest)) {
    copyFileSync(key, dest);
    chmodSync(dest, 0o600);
  }
}
