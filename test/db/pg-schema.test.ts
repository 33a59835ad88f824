import { SQL } from "bun";
import { is } from "drizzle-orm";
import { drizzle } from "drizzle-orm/bun-sql";
import { migrate } from "drizzle-orm/bun-sql/migrator";
import { getTableConfig as pgTableConfig, PgTable, pgTable } from "drizzle-orm/pg-core";
import { getTableConfig as sqliteTableConfig, SQLiteTable } from "drizzle-orm/sqlite-core";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkNoPendingMigration, checkPgSchema } from "../../scripts/check-dialects";
import { generatePgSchema, PgSchemaError } from "../../scripts/pg-schema";
import { bytea } from "../../src/db/pg/schema/bytea";
import * as pgSchema from "../../src/db/pg/schema";
import * as sqliteSchema from "../../src/db/schema";
import { describeOnly, emptyPgDatabase } from "../helpers/database";

/**
 * The Postgres schema is generated from the SQLite one (scripts/pg-schema.ts); these
 * tests hold the two, and the committed Postgres migration, to the same tables.
 */
const pgMigrations = fileURLToPath(new URL("../../src/db/pg/migrations", import.meta.url));

type Shape = Record<string, { columns: string[]; indexes: string[] }>;

function sqliteShape(): Shape {
  const shape: Shape = {};
  for (const table of Object.values(sqliteSchema).filter((v) => is(v, SQLiteTable))) {
    const c = sqliteTableConfig(table);
    shape[c.name] = { columns: c.columns.map((col) => col.name).sort(), indexes: c.indexes.map((i) => i.config.name).sort() };
  }
  return shape;
}

function pgShape(): Shape {
  const shape: Shape = {};
  for (const table of Object.values(pgSchema).filter((v) => is(v, PgTable))) {
    const c = pgTableConfig(table);
    shape[c.name] = { columns: c.columns.map((col) => col.name).sort(), indexes: c.indexes.map((i) => i.config.name!).sort() };
  }
  return shape;
}

/** Table → column names, read from the CREATE TABLE statements of the committed migration. */
/** The tables and columns the committed Postgres migrations make, in order: CREATE TABLE, then ALTER TABLE … ADD COLUMN. */
function migrationTables(): Record<string, string[]> {
  const files = readdirSync(pgMigrations).filter((f) => f.endsWith(".sql")).sort();
  const tables: Record<string, string[]> = {};
  for (const file of files) {
    const sql = readFileSync(join(pgMigrations, file), "utf8");
    for (const [, name, body] of sql.matchAll(/CREATE TABLE "([^"]+)" \(\n([\s\S]*?)\n\);/g)) {
      tables[name!] = [...body!.matchAll(/^\t"([^"]+)" /gm)].map((m) => m[1]!);
    }
    for (const [, name, column] of sql.matchAll(/ALTER TABLE "([^"]+)" ADD COLUMN "([^"]+)"/g)) tables[name!]!.push(column!);
  }
  for (const name of Object.keys(tables)) tables[name]!.sort();
  return tables;
}

const sqliteColumns = () => Object.fromEntries(Object.entries(sqliteShape()).map(([t, s]) => [t, s.columns]));

describe("the generated Postgres schema", () => {
  it("is what scripts/pg-schema.ts makes from src/db/schema now", () => {
    expect(checkPgSchema()).toEqual([]);
  });

  it("has every SQLite table with the same columns and indexes", () => {
    const sqlite = sqliteShape();
    expect(Object.keys(sqlite).length).toBeGreaterThan(20);
    expect(pgShape()).toEqual(sqlite);
  });

  it("keeps blob bodies as bytea and partial indexes with their conditions", () => {
    const events = pgTableConfig(pgSchema.events);
    expect(events.columns.find((c) => c.name === "body")!.getSQLType()).toBe("bytea");
    const sql = readFileSync(join(pgMigrations, "0000_init.sql"), "utf8");
    expect(sql).toContain(`CREATE INDEX "attempts_due" ON "delivery_attempts" USING btree ("destination_id","scheduled_at") WHERE status = 'queued';`);
    expect(sql).toContain(`WHERE "events"."dedup_key" IS NOT NULL;`);
  });
});

describe("the generator", () => {
  function generateFrom(source: string) {
    const dir = mkdtempSync(join(tmpdir(), "hookrelay-pg-schema-"));
    try {
      writeFileSync(join(dir, "t.ts"), source);
      return generatePgSchema(dir).get("t.ts");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const table = (column: string) =>
    `import { sql } from "drizzle-orm";\nimport { sqliteTable, integer, text } from "drizzle-orm/sqlite-core";\n` +
    `export const t = sqliteTable("t", { ${column} });\n`;

  it("stops, naming the file and line, at what it cannot map with certainty", () => {
    for (const column of [
      `on: integer("on", { mode: "boolean" })`,
      `at: text("at").default(sql\`(datetime('now'))\`)`,
      `n: integer("n").default(sql\`1\`)`,
      `id: integer("id").primaryKey({ autoIncrement: true })`,
    ]) {
      expect(() => generateFrom(table(column)), column).toThrow(PgSchemaError);
      expect(() => generateFrom(table(column)), column).toThrow("src/db/schema/t.ts:3");
    }
    expect(() => generateFrom(`import {\n  sqliteTable,\n} from "drizzle-orm/sqlite-core";\n`)).toThrow(PgSchemaError);
  });

  it("maps integer to a 64-bit bigint read as a number", () => {
    expect(generateFrom(table(`n: integer("n").notNull().default(0)`))).toContain(
      `export const t = pgTable("t", { n: bigint("n", { mode: "number" }).notNull().default(0) });`,
    );
  });
});

describe("the committed migrations", () => {
  it("create every table the SQLite schema has, with its columns, on Postgres", () => {
    expect(migrationTables()).toEqual(sqliteColumns());
  });

  it("leave drizzle-kit nothing to generate for either dialect", () => {
    expect(checkNoPendingMigration("sqlite", "src/db/schema/index.ts", "src/db/migrations")).toEqual([]);
    expect(checkNoPendingMigration("postgresql", "src/db/pg/schema/index.ts", "src/db/pg/migrations")).toEqual([]);
  });
});

describeOnly("postgres", "the Postgres migration applied to an empty PostgreSQL 15 database", "a database of its own on the run's cluster", () => {
  let cluster: { url: string; stop(): void };
  let client: SQL;
  beforeAll(async () => {
    cluster = await emptyPgDatabase();
    client = new SQL(cluster.url);
    await migrate(drizzle({ client }), { migrationsFolder: pgMigrations });
  });
  afterAll(async () => {
    await client?.close();
    cluster?.stop();
  });

  it("creates every SQLite table with the same columns", async () => {
    const rows: { table_name: string; column_name: string }[] = await client`
      SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public'`;
    const tables: Record<string, string[]> = {};
    for (const r of rows) (tables[r.table_name] ??= []).push(r.column_name);
    for (const columns of Object.values(tables)) columns.sort();
    expect(tables).toEqual(sqliteColumns());
  });

  it("creates every index, the partial ones with their conditions", async () => {
    const rows: { indexname: string; indexdef: string }[] = await client`
      SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public'`;
    const names = new Set(rows.map((r) => r.indexname));
    for (const { indexes } of Object.values(sqliteShape())) for (const index of indexes) expect(names).toContain(index);
    expect(rows.find((r) => r.indexname === "attempts_due")!.indexdef).toContain("WHERE (status = 'queued'::text)");
  });

  it("stores bytea bodies byte-exact and reads them back as Buffers", async () => {
    await client`CREATE TABLE bytes_probe (b bytea NOT NULL)`;
    try {
      const probe = pgTable("bytes_probe", { b: bytea("b").notNull() });
      const db = drizzle({ client });
      const bytes = Buffer.from([0, 255, 0xc3, 0x28, 10, 0x80]);
      await db.insert(probe).values({ b: bytes });
      const [row] = await db.select().from(probe);
      expect(Buffer.isBuffer(row!.b)).toBe(true);
      expect(row!.b.equals(bytes)).toBe(true);
    } finally {
      await client`DROP TABLE bytes_probe`;
    }
  });
});
