import { sql, type AnyColumn, type SQL, type SQLWrapper } from "drizzle-orm";
import { dialectOf } from "./dialect";
import type { Db } from "./db";

/**
 * SQL fragments that read the same on SQLite and PostgreSQL. Domain code
 * writes conditions and aggregates with these instead of spelling the
 * dialect's own forms (a bare `0` is no boolean on PostgreSQL, `sum(a = b)`
 * sums booleans only on SQLite, two-argument `max` is `GREATEST` there, LIKE
 * is case-sensitive there).
 */

/** A condition no row meets. */
export const never = (): SQL => sql`1 = 0`;

/** How many rows of the group meet `condition` (a number on both stores). */
export const countWhere = (condition: SQL | SQLWrapper): SQL<number> => sql<number>`coalesce(sum(case when ${condition} then 1 else 0 end), 0)`.mapWith(Number);

/** The sum of an integer expression, as a number (PostgreSQL's sum of bigint is numeric, read as a string). */
export const sumOf = (expression: SQL | AnyColumn): SQL<number> => sql<number>`coalesce(sum(${expression}), 0)`.mapWith(Number);

/** The larger of two values of one type; null when both are null. */
export const greater = (a: SQL | AnyColumn, b: SQL | AnyColumn | string): SQL => sql`case when ${a} is null then ${b} when ${b} is null then ${a} when ${a} > ${b} then ${a} else ${b} end`;

/** Case-insensitive LIKE with `\` as the escape character (pattern from `likePattern`). */
export const ilike = (value: SQL | AnyColumn, pattern: string): SQL => sql`lower(${value}) LIKE lower(${pattern}) ESCAPE '\\'`;

/** `%term%` with LIKE's wildcards in `term` escaped. */
export const likePattern = (term: string): string => `%${term.replace(/[\\%_]/g, (c) => "\\" + c)}%`;

/**
 * Case-insensitive (ASCII) LIKE without lower() on each side: SQLite's LIKE
 * already ignores ASCII case, PostgreSQL has ILIKE. Over every body a search
 * reads, not copying each one through lower() is most of its cost.
 */
export function ilikeOn(db: Db, value: SQL | AnyColumn, pattern: string): SQL {
  return dialectOf(db) === "postgres" ? sql`${value} ILIKE ${pattern} ESCAPE '\\'` : sql`${value} LIKE ${pattern} ESCAPE '\\'`;
}

/** A stored body (blob / bytea) as text, for searching. */
export function bodyText(db: Db, body: AnyColumn): SQL {
  return dialectOf(db) === "postgres" ? sql`convert_from(${body}, 'UTF8')` : sql`CAST(${body} AS TEXT)`;
}
