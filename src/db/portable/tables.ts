import { getTableColumns, getTableName } from "drizzle-orm";
import { getTableConfig, type SQLiteTable } from "drizzle-orm/sqlite-core";
import { migrations } from "../../generated/migrations.gen";
import * as schema from "../schema";

/**
 * The tables a portable archive carries (docs/operations.md, "Moving between
 * stores"), in an order that satisfies every foreign key: a table comes after
 * every table it references, so rows load with the constraints on. Built
 * from the one schema (src/db/schema), so a new table or column is carried
 * without a list to keep up to date. Every table's key is one text `id`:
 * there is no serial column, so no sequence to fix after a load.
 */
export type ColumnKind = "text" | "integer" | "bytes";

export interface PortableColumn {
  /** The column's name in SQL. */
  name: string;
  /** The drizzle property that holds it. */
  key: string;
  kind: ColumnKind;
}

export interface PortableTable {
  name: string;
  table: SQLiteTable;
  columns: PortableColumn[];
}

function kindOf(columnType: string): ColumnKind {
  if (columnType.startsWith("SQLiteText")) return "text";
  if (columnType.startsWith("SQLiteInteger")) return "integer";
  if (columnType.startsWith("SQLiteBlob")) return "bytes";
  throw new Error(`portable archive: no encoding for column type ${columnType}`);
}

function describeTable(table: SQLiteTable): PortableTable {
  const columns = Object.entries(getTableColumns(table)).map(([key, column]) => ({ name: column.name, key, kind: kindOf(column.columnType) }));
  // Pages walk the key in order: a table without a text `id` would need another walk.
  if (!columns.some((c) => c.name === "id" && c.kind === "text")) throw new Error(`portable archive: table ${getTableName(table)} has no text id`);
  return { name: getTableName(table), table, columns };
}

/** Orders tables so that each follows those it references (self-references need no order: none exist). */
function dependencyOrder(tables: SQLiteTable[]): SQLiteTable[] {
  const byName = new Map(tables.map((t) => [getTableName(t), t]));
  const done = new Set<string>();
  const out: SQLiteTable[] = [];
  const visit = (t: SQLiteTable, path: string[]) => {
    const name = getTableName(t);
    if (done.has(name)) return;
    if (path.includes(name)) throw new Error(`portable archive: foreign keys form a cycle: ${[...path, name].join(" → ")}`);
    for (const fk of getTableConfig(t).foreignKeys) {
      const parent = getTableName(fk.reference().foreignTable);
      if (parent !== name) visit(byName.get(parent)!, [...path, name]);
    }
    done.add(name);
    out.push(t);
  };
  // Sorted by name first, so the order is the same whatever order the schema files export in.
  for (const t of [...tables].sort((a, b) => getTableName(a).localeCompare(getTableName(b)))) visit(t, []);
  return out;
}

/**
 * Derived tables the archive leaves out: the list counters (src/db/schema/counts.ts)
 * and the stats rollups (src/db/schema/rollups.ts) are kept by triggers, which count
 * the events and attempts again as they load; the duration buckets are the
 * migration's own fixed rows.
 */
const DERIVED_TABLES = new Set(["event_counts", "attempt_counts", "event_hours", "attempt_hours", "duration_buckets"]);

function schemaTables(): SQLiteTable[] {
  return Object.values(schema).filter(isTable).filter((t) => !DERIVED_TABLES.has(getTableName(t)));
}

function isTable(v: unknown): v is SQLiteTable {
  if (typeof v !== "object" || v === null) return false;
  try {
    getTableName(v as SQLiteTable);
    return getTableConfig(v as SQLiteTable).columns.length > 0;
  } catch {
    return false;
  }
}

export const PORTABLE_TABLES: PortableTable[] = dependencyOrder(schemaTables()).map(describeTable);

export function portableTable(name: string): PortableTable | undefined {
  return PORTABLE_TABLES.find((t) => t.name === name);
}

/**
 * The schema's level, the same on both stores: how many migrations the one
 * schema has had (src/db/migrations, whose PostgreSQL form src/db/pg/migrations
 * is generated from it), and the newest one's hash. Both stores opened by
 * this binary are at this level.
 */
export interface SchemaLevel {
  level: number;
  newest: string;
}

export function binarySchemaLevel(): SchemaLevel {
  const newest = migrations[migrations.length - 1];
  return { level: migrations.length, newest: newest ? newest.hash.slice(0, 12) : "" };
}
