import { Database } from "bun:sqlite";
import { migrations } from "../../generated/migrations.gen";

/**
 * Which schema a database file has, told by the migrations applied to it
 * (drizzle's `__drizzle_migrations`: one row per migration, its file hash
 * and the journal's `when`), and which schema this binary brings (the
 * migrations embedded at build time). Backup restore refuses a file made by
 * a newer schema; `--version` and upgrade checks can read the same facts.
 */
export interface AppliedMigration {
  hash: string;
  /** The migration's journal `when` (ms): drizzle applies every embedded migration newer than the newest applied. */
  createdAt: number;
}

export interface SchemaVersion {
  /** Migrations applied (for the binary: embedded), oldest first. */
  applied: AppliedMigration[];
}

export type SchemaComparison =
  /** Every migration this binary has, and no other. */
  | "same"
  /** A prefix of this binary's migrations (or none): the next start migrates it forward. */
  | "older"
  /** Applied migrations newer than any this binary has: made by a newer release. */
  | "newer"
  /** Migrations this binary does not know at their place in time (e.g. an unreleased build's regenerated schema). */
  | "foreign";

export function binarySchemaVersion(): SchemaVersion {
  return { applied: migrations.map((m) => ({ hash: m.hash, createdAt: m.folderMillis })) };
}

/** Reads a database file's applied migrations without changing it (a file without the table has none). */
export function databaseSchemaVersion(file: string): SchemaVersion {
  const sqlite = new Database(file, { readonly: true });
  try {
    const table = sqlite.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations'").get();
    if (!table) return { applied: [] };
    const rows = sqlite.query("SELECT hash, created_at AS createdAt FROM __drizzle_migrations ORDER BY created_at").all() as { hash: string; createdAt: number | string }[];
    return { applied: rows.map((r) => ({ hash: r.hash, createdAt: Number(r.createdAt) })) };
  } finally {
    sqlite.close();
  }
}

export function compareSchema(database: SchemaVersion, binary: SchemaVersion = binarySchemaVersion()): SchemaComparison {
  const newestKnown = Math.max(0, ...binary.applied.map((m) => m.createdAt));
  if (database.applied.some((m) => m.createdAt > newestKnown)) return "newer";
  const known = new Map(binary.applied.map((m) => [m.createdAt, m.hash]));
  if (database.applied.some((m) => known.get(m.createdAt) !== m.hash)) return "foreign";
  return database.applied.length === binary.applied.length ? "same" : "older";
}

/** `3 (a1b2c3d4e5f6)`: how many migrations, and the newest one's hash prefix, for messages and `--version`. */
export function describeSchema(version: SchemaVersion): string {
  const newest = version.applied[version.applied.length - 1];
  return newest ? `${version.applied.length} (${newest.hash.slice(0, 12)})` : "none";
}
