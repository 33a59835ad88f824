import { sql } from "drizzle-orm";
import type { Db } from "../db";
import { dialectOf } from "../dialect";
import { pgRows } from "../pg/rows";
import { transaction } from "../transaction";
import { ArchiveFormatError, decodeRow, type TableSummary } from "./codec";
import { checkHeader } from "./compat";
import type { PortableItem } from "./reader";
import type { PortableSnapshot } from "./snapshot";
import { portableTable, PORTABLE_TABLES, type PortableTable } from "./tables";

/**
 * Loading the stream of reader.ts into a store: table by table in the
 * order of the manifest (each after the tables it references, so foreign
 * keys hold with their checks on), in multi-row inserts of a bounded size,
 * each its own statement. Every id is kept as it was.
 */

/**
 * Parameters per insert stay well under both stores' limits (SQLite 32,766;
 * PostgreSQL 65,535). What one call holds in memory is bounded by whoever
 * hands the lines over (a page of the reader, an item of the archive).
 */
const MAX_PARAMETERS = 20_000;

export function batchRows(table: PortableTable): number {
  const byParams = Math.floor(MAX_PARAMETERS / table.columns.length);
  return Math.max(1, Math.min(500, byParams));
}

/** Inserts one page of lines, in one transaction: a page is in the target whole or not at all. */
export async function insertLines(db: Db, table: PortableTable, lines: string[], where: string): Promise<void> {
  const size = batchRows(table);
  await transaction(db, async (tx) => {
    for (let i = 0; i < lines.length; i += size) {
      const rows = lines.slice(i, i + size).map((line) => decodeOrThrow(line, table, where));
      // The schema's tables build correct SQL for either store (docs/postgres.md).
      await tx.insert(table.table).values(rows as never);
    }
  });
}

function decodeOrThrow(line: string, table: PortableTable, where: string) {
  return decodeRow(line, table.columns, `${where}, table ${table.name}`);
}

export interface LoadProgress {
  table: string;
  rows: number;
  /** Tables finished, and how many there are. */
  done: number;
  of: number;
}

/**
 * Loads a whole stream: its header is checked against this binary first,
 * then every table's rows go in. `skip` names tables already complete in the
 * target (a resumed migrate): their rows are read past, not inserted.
 */
export async function loadStream(db: Db, items: AsyncIterable<PortableItem>, opts: { where: string; skip?: Set<string>; onTable?: (p: LoadProgress) => void }): Promise<Record<string, TableSummary>> {
  let done = 0;
  for await (const item of items) {
    if (item.kind === "header") checkHeader(item.header, opts.where);
    else if (item.kind === "rows") {
      if (opts.skip?.has(item.table)) continue;
      const table = portableTable(item.table);
      if (!table) throw new ArchiveFormatError(`${opts.where}: unknown table ${item.table}`);
      await insertLines(db, table, item.lines, opts.where);
    } else if (item.kind === "table_end") {
      done++;
      opts.onTable?.({ table: item.table, rows: item.summary.rows, done, of: PORTABLE_TABLES.length });
    } else if (item.kind === "end") return item.tables;
  }
  throw new ArchiveFormatError(`${opts.where}: the stream ended before its manifest`);
}

/**
 * After a bulk load (a restore, a migrate): PostgreSQL's planner judges
 * indexes by statistics that autovacuum gathers only a minute or more later,
 * and until then it takes the freshly loaded tables for empty and may read
 * a whole environment's attempts through the scope index where a partial
 * index holds a handful (measured: the dashboard's count of attempts in
 * flight, 60 ms on 50,000 rows against 0.03 after ANALYZE; docs/postgres.md).
 * SQLite's hot statements name their index (src/db/deliverySql.ts), so it
 * needs nothing here.
 */
export async function refreshPlannerStatistics(db: Db): Promise<void> {
  if (dialectOf(db) === "postgres") await pgRows(db, sql`ANALYZE`);
}

/** Tables of the snapshot that hold rows, with their counts: a target must have none (or, resuming, a prefix). */
export async function nonEmptyTables(snapshot: PortableSnapshot): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const t of PORTABLE_TABLES) {
    const n = await snapshot.count(t.name);
    if (n > 0) out[t.name] = n;
  }
  return out;
}

/** The tables whose count or checksum differ between what was meant to be loaded and what the target holds. */
export function mismatches(expected: Record<string, TableSummary>, found: Record<string, TableSummary>): string[] {
  return PORTABLE_TABLES.filter((t) => expected[t.name]?.rows !== found[t.name]?.rows || expected[t.name]?.sha256 !== found[t.name]?.sha256).map(
    (t) => `${t.name} (${expected[t.name]?.rows ?? 0} rows expected, ${found[t.name]?.rows ?? 0} found${expected[t.name]?.rows === found[t.name]?.rows ? ", checksums differ" : ""})`,
  );
}
