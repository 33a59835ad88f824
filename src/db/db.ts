import type { BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import type * as schema from "./schema";

/**
 * The handle every query starts from, on either dialect: drizzle's query
 * builder over the one schema (src/db/schema, sqlite-core tables), which
 * builds correct SQL for PostgreSQL too (src/db/pg/open.ts).
 */
export type Db = BunSQLiteDatabase<typeof schema>;
