import type { SQL } from "bun";
import { quoted, type PortableSnapshot } from "../portable/snapshot";
import type { RawValue } from "../portable/codec";

/**
 * A REPEATABLE READ READ ONLY transaction on a reserved connection: every
 * page it reads sees the database as of its first statement, while the nodes
 * go on ingesting and delivering. Pages follow the primary key's index in
 * the database's own collation.
 */
export async function openPgSnapshot(client: SQL): Promise<PortableSnapshot> {
  const conn = await client.reserve();
  try {
    await conn`BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`;
    await conn`SELECT 1`;
  } catch (error) {
    conn.release();
    throw error;
  }
  return {
    source: "postgres",
    async page(table, columns, after, limit) {
      const cols = columns.map(quoted).join(", ");
      const n = Math.max(1, Math.floor(limit));
      const q = after === null ? conn.unsafe(`SELECT ${cols} FROM ${quoted(table)} ORDER BY id LIMIT ${n}`) : conn.unsafe(`SELECT ${cols} FROM ${quoted(table)} WHERE id > $1 ORDER BY id LIMIT ${n}`, [after]);
      return (await q.values()) as RawValue[][];
    },
    async count(table) {
      const [row] = (await conn.unsafe(`SELECT count(*)::int8 AS n FROM ${quoted(table)}`)) as { n: string | number }[];
      return Number(row!.n);
    },
    async close() {
      try {
        await conn`ROLLBACK`;
      } catch {}
      conn.release();
    },
  };
}
