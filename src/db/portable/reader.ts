import pkg from "../../../package.json" with { type: "json" };
import { encodeRow, TableDigest, type TableSummary } from "./codec";
import type { PortableSnapshot } from "./snapshot";
import { binarySchemaLevel, PORTABLE_TABLES, type ColumnKind, type PortableTable, type SchemaLevel } from "./tables";

/**
 * Reading a whole store as a stream of items: the header, then each table's
 * rows page by page in key order with its count and checksum at its end,
 * then the summary of every table. An archive file is this stream written
 * down (archive.ts); `migrate` hands it to the loader directly (loader.ts).
 * Memory holds one page at a time, never a table.
 */
export const ARCHIVE_FORMAT = "hookrelay-portable";
export const ARCHIVE_FORMAT_VERSION = 1;

export interface ArchiveHeader {
  format: typeof ARCHIVE_FORMAT;
  format_version: number;
  hookrelay_version: string;
  schema: SchemaLevel;
  created_at: string;
  /** The store the rows were read from: "sqlite" or "postgres". */
  source: string;
  tables: { name: string; columns: [string, ColumnKind][] }[];
}

export type PortableItem =
  | { kind: "header"; header: ArchiveHeader }
  | { kind: "table"; table: string }
  | { kind: "rows"; table: string; lines: string[] }
  | { kind: "table_end"; table: string; summary: TableSummary }
  | { kind: "end"; tables: Record<string, TableSummary> };

export function headerFor(source: string, createdAt: Date): ArchiveHeader {
  return {
    format: ARCHIVE_FORMAT,
    format_version: ARCHIVE_FORMAT_VERSION,
    hookrelay_version: pkg.version,
    schema: binarySchemaLevel(),
    created_at: createdAt.toISOString(),
    source,
    tables: PORTABLE_TABLES.map((t) => ({ name: t.name, columns: t.columns.map((c) => [c.name, c.kind] as [string, ColumnKind]) })),
  };
}

/** Rows a page reads: fewer where a row carries a request body (events), so a page stays small in memory. */
export function pageSize(table: PortableTable): number {
  return table.columns.some((c) => c.kind === "bytes") ? 64 : 1000;
}

/** One table's rows as encoded lines, page by page; `digest` counts and sums them as they pass. */
export async function* tableLines(snapshot: PortableSnapshot, table: PortableTable, digest: TableDigest): AsyncGenerator<string[]> {
  const names = table.columns.map((c) => c.name);
  const idAt = names.indexOf("id");
  let after: string | null = null;
  for (;;) {
    const rows = await snapshot.page(table.name, names, after, pageSize(table));
    if (rows.length === 0) return;
    const lines = rows.map((r) => encodeRow(r, table.columns));
    for (const line of lines) digest.add(line);
    yield lines;
    after = String(rows[rows.length - 1]![idAt]);
  }
}

/** Every table of the snapshot, as the stream an archive holds. */
export async function* readStore(snapshot: PortableSnapshot, createdAt: Date): AsyncGenerator<PortableItem> {
  yield { kind: "header", header: headerFor(snapshot.source, createdAt) };
  const tables: Record<string, TableSummary> = {};
  for (const table of PORTABLE_TABLES) {
    yield { kind: "table", table: table.name };
    const digest = new TableDigest();
    for await (const lines of tableLines(snapshot, table, digest)) yield { kind: "rows", table: table.name, lines };
    tables[table.name] = digest.summary();
    yield { kind: "table_end", table: table.name, summary: digest.summary() };
  }
  yield { kind: "end", tables };
}

/** Counts and checksums of every table as a snapshot sees it: what a load is verified against. */
export async function digestStore(snapshot: PortableSnapshot, only?: Set<string>): Promise<Record<string, TableSummary>> {
  const out: Record<string, TableSummary> = {};
  for (const table of PORTABLE_TABLES) {
    if (only && !only.has(table.name)) continue;
    const digest = new TableDigest();
    for await (const _ of tableLines(snapshot, table, digest));
    out[table.name] = digest.summary();
  }
  return out;
}
