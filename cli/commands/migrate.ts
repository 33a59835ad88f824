import type { Command } from "commander";
import { noun } from "../command";
import { usageError } from "../errors";
import { Output } from "../output";

/**
 * `hookrelay migrate --from <data-dir | postgres-url> --to <data-dir | postgres-url>`:
 * every table copied from one store to another, ids kept, with neither
 * served (docs/operations.md, "Moving between stores"). Progress goes to
 * stderr; the result (tables, rows, checksums) to stdout.
 */
export function registerMigrate(program: Command) {
  noun(program, "migrate", "Copy everything from one store to another (SQLite data dir ↔ PostgreSQL), keeping every id; neither may be served meanwhile", [
    "hookrelay migrate --from /var/lib/hookrelay --to postgres://hookrelay@db/hookrelay",
    "hookrelay migrate --from postgres://hookrelay@db/hookrelay --to ./data",
    "hookrelay migrate --from /var/lib/hookrelay --to postgres://hookrelay@db/hookrelay --resume   # after an interruption",
  ])
    .option("--from <store>", "the store to copy: a data dir, or a postgres:// URL")
    .option("--to <store>", "the store to copy into (empty, unless --resume): a data dir, or a postgres:// URL")
    .option("--resume", "continue a migrate that was interrupted: tables already complete in the target are kept, the one cut short is copied again")
    .option("--json", "print the result as JSON")
    .action(async (o: { from?: string; to?: string; resume?: boolean; json?: boolean }) => {
      const out = new Output(o.json === true || program.opts().json === true);
      if (!o.from || !o.to) throw usageError("migrate needs --from and --to: each a data dir or a postgres:// URL");
      const { parseStoreLocation } = await import("../../src/domain/storeLocation");
      const { migrateStore } = await import("../../src/domain/storeMigration");
      const { systemClock } = await import("../../src/core/clock");
      const { AppError } = await import("../../src/contracts/errors");
      const { whileDataDirsHeld } = await import("../serveLocks");
      let from, to;
      try {
        from = parseStoreLocation(o.from, "from");
        to = parseStoreLocation(o.to, "to");
      } catch (err) {
        if (err instanceof AppError) throw usageError(err.message);
        throw err;
      }
      // Progress is for a person watching, on stderr: shown with --json too (stdout stays the result alone).
      const res = await whileDataDirsHeld([from, to], () => migrateStore({ from, to, resume: o.resume === true, clock: systemClock, progress: (line) => process.stderr.write(line + "\n") }));
      out.result(res, {
        text: (r, c) =>
          `${c.green("✓")} Copied ${r.rows} rows in ${r.tables.length} tables from ${r.from} to ${r.to}${r.resumed ? " (resumed)" : ""}; every table's count and checksum match` +
          `\n  serve on the target with the secret key of the source (its data dir's secret.key, or HOOKRELAY_SECRET_KEY): stored secrets are copied sealed`,
      });
    });
}
