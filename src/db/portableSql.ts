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
 * A stored body (blob / bytea) contains `term`, case-insensitive for ASCII.
 * SQLite: LIKE on the body as text (its LIKE already ignores ASCII case, and
 * compares any other byte as it is). PostgreSQL: ILIKE on the body in
 * `encode(…, 'escape')` form, matched by the term in the same form, because a
 * body is whatever bytes a provider sent and `convert_from(…, 'UTF8')` fails
 * on any that are not UTF-8 (or hold a NUL), which would fail the whole
 * search; bytes outside ASCII then match exactly, as on SQLite. Reading
 * every body this way is the costly part of a search there, so it is first
 * narrowed by a byte `position` of the term's longest run without ASCII
 * letters (digits, punctuation: what an id, a number or a key holds), which
 * no case folding changes and so must appear as it is; the same position
 * keeps a term of digits from matching inside an escape (`\303` of `é`).
 * A term of letters only has no such run and is matched as before. On
 * SQLite the same prefilter was no faster: reading the rows is most of a
 * search there (docs/performance.md, "Reads at scale").
 */
export function bodyContains(db: Db, body: AnyColumn, term: string): SQL {
  if (dialectOf(db) !== "postgres") return sql`CAST(${body} AS TEXT) LIKE ${likePattern(term)} ESCAPE '\\'`;
  const ilike = sql`encode(${body}, 'escape') ILIKE ${likePattern(escapedBytes(term))} ESCAPE '\\'`;
  const run = caseFreeRun(term);
  return run.length < 2 ? ilike : sql`(position(${Buffer.from(run)} in ${body}) > 0 AND ${ilike})`;
}

/**
 * `term`'s UTF-8 bytes as PostgreSQL's `encode(…, 'escape')` writes them: a
 * NUL or a byte with the high bit set as `\nnn` (octal), a backslash doubled.
 */
export function escapedBytes(term: string): string {
  let out = "";
  for (const byte of Buffer.from(term, "utf8")) {
    if (byte === 0x5c) out += "\\\\";
    else if (byte === 0 || byte >= 0x80) out += "\\" + byte.toString(8).padStart(3, "0");
    else out += String.fromCharCode(byte);
  }
  return out;
}

/** The longest run of printable ASCII other than letters in `term` (the first of equal length). */
export function caseFreeRun(term: string): string {
  let best = "";
  for (const run of term.split(/[^\x20-\x40\x5b-\x60\x7b-\x7e]+/)) if (run.length > best.length) best = run;
  return best;
}
