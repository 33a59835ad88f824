import { createHash } from "node:crypto";
import type { ColumnKind, PortableColumn } from "./tables";

/**
 * One row as one line of an archive: a JSON array of the table's columns in
 * the manifest's order, each value in one form whatever store it came from.
 * text: a JSON string; integer: a JSON number (flags are 0/1, counts and
 * sizes stay below 2^53); bytes: base64; SQL NULL: null. Timestamps and JSON
 * documents are text in the one schema (ISO 8601, and JSON as stored), so
 * they travel as the strings they are. The same values always give the same
 * line, which is what the checksums are taken over.
 */
export type RawValue = string | number | bigint | Uint8Array | null | undefined;

function encodeValue(value: RawValue, kind: ColumnKind): string | number | null {
  if (value === null || value === undefined) return null;
  if (kind === "bytes") return Buffer.from(value as Uint8Array).toString("base64");
  // SQLite keeps what it is given; PostgreSQL's int8 comes back as a string: one form per kind.
  if (kind === "integer") return Number(value);
  return typeof value === "string" ? value : String(value);
}

export function encodeRow(values: RawValue[], columns: PortableColumn[]): string {
  return JSON.stringify(columns.map((c, i) => encodeValue(values[i], c.kind)));
}

export class ArchiveFormatError extends Error {
  override name = "ArchiveFormatError";
}

/** A line back into the values drizzle inserts, keyed by property; anything not of its column's kind is refused. */
export function decodeRow(line: string, columns: PortableColumn[], where: string): Record<string, unknown> {
  let values: unknown;
  try {
    values = JSON.parse(line);
  } catch {
    throw new ArchiveFormatError(`${where}: a row is not valid JSON`);
  }
  if (!Array.isArray(values) || values.length !== columns.length) throw new ArchiveFormatError(`${where}: a row has ${Array.isArray(values) ? values.length : "no"} values, the table has ${columns.length} columns`);
  const row: Record<string, unknown> = {};
  columns.forEach((c, i) => {
    const v = values[i];
    if (v === null) row[c.key] = null;
    else if (c.kind === "integer" && typeof v === "number" && Number.isSafeInteger(v)) row[c.key] = v;
    else if (c.kind === "text" && typeof v === "string") row[c.key] = v;
    else if (c.kind === "bytes" && typeof v === "string") row[c.key] = Buffer.from(v, "base64");
    else throw new ArchiveFormatError(`${where}: column ${c.name} holds ${JSON.stringify(v)?.slice(0, 40)}, not ${c.kind}`);
  });
  return row;
}

/**
 * A table's count and checksum. The checksum does not depend on the rows'
 * order: each dialect walks its key in its own collation (SQLite by bytes,
 * PostgreSQL by the database's locale), so the same rows may come in another
 * order from the other store. It is the XOR of each row line's SHA-256; two
 * rows never cancel out, as a key is never repeated in a table.
 */
export class TableDigest {
  rows = 0;
  private acc = Buffer.alloc(32);

  add(line: string) {
    const h = createHash("sha256").update(line).digest();
    for (let i = 0; i < 32; i++) this.acc[i]! ^= h[i]!;
    this.rows++;
  }

  get sha256(): string {
    return this.acc.toString("hex");
  }

  summary(): TableSummary {
    return { rows: this.rows, sha256: this.sha256 };
  }
}

export interface TableSummary {
  rows: number;
  sha256: string;
}
