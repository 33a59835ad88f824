import { Database } from "bun:sqlite";
import { quoted, type PortableSnapshot } from "../portable/snapshot";
import type { RawValue } from "../portable/codec";

/**
 * A read transaction on a connection of its own to the database file: in
 * WAL mode it sees the database as of its first read, for as long as it is
 * open, while the serving connection goes on writing (and no checkpoint
 * can pass it meanwhile, so the WAL grows until it closes).
 */
export function openSqliteSnapshot(path: string): PortableSnapshot {
  // Read-write, though it writes nothing: a read-only connection cannot open a WAL database whose index file is missing.
  const db = new Database(path, { readwrite: true, create: false });
  db.exec("PRAGMA busy_timeout = 10000");
  db.exec("BEGIN");
  // A deferred transaction takes its snapshot at its first read.
  const first = db.prepare("SELECT count(*) FROM sqlite_master");
  first.get();
  // Every statement is finalized after use: a connection closed with one outstanding stays open (and holds its locks).
  first.finalize();
  return {
    source: "sqlite",
    async page(table, columns, after, limit) {
      const cols = columns.map(quoted).join(", ");
      const where = after === null ? "" : "WHERE id > ?1";
      const stmt = db.prepare(`SELECT ${cols} FROM ${quoted(table)} ${where} ORDER BY id LIMIT ${Math.max(1, Math.floor(limit))}`);
      try {
        return (after === null ? stmt.values() : stmt.values(after)) as RawValue[][];
      } finally {
        stmt.finalize();
      }
    },
    async count(table) {
      const stmt = db.prepare(`SELECT count(*) AS n FROM ${quoted(table)}`);
      try {
        return Number((stmt.get() as { n: number }).n);
      } finally {
        stmt.finalize();
      }
    },
    async close() {
      try {
        db.exec("ROLLBACK");
      } catch {}
      db.close();
    },
  };
}
