import { and, gt, lt, or, eq, asc, desc, type SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { decodeCursor, encodeCursor, type CursorKey, type PageQuery, type Pagination } from "../contracts/pagination";

/**
 * Newest-first pages over (time, id) for the spec's `pagination` object.
 * With a cursor, pages are keyset-based: rows arriving meanwhile neither
 * repeat nor shift a page. Without one, limit/offset as asked.
 */
export interface KeysetColumns {
  time: SQLiteColumn;
  id: SQLiteColumn;
}

export function keysetWhere(cols: KeysetColumns, page: PageQuery): { where: SQL | undefined; order: SQL[]; reversed: boolean } {
  if (!page.cursor) return { where: undefined, order: [desc(cols.time), desc(cols.id)], reversed: false };
  const c = decodeCursor(page.cursor, page.direction);
  if (c.d === "next") {
    return { where: or(lt(cols.time, c.t), and(eq(cols.time, c.t), lt(cols.id, c.id))), order: [desc(cols.time), desc(cols.id)], reversed: false };
  }
  // Walking back to newer rows: read ascending from the cursor, then flip to newest-first.
  return { where: or(gt(cols.time, c.t), and(eq(cols.time, c.t), gt(cols.id, c.id))), order: [asc(cols.time), asc(cols.id)], reversed: true };
}

/**
 * Runs a list query page. `select` builds the query with the extra where and
 * order applied; `total` counts all rows matching the filters.
 */
export async function paginate<Row>(opts: {
  page: PageQuery;
  cols: KeysetColumns;
  filters: SQL | undefined;
  select: (where: SQL | undefined, order: SQL[], limit: number, offset: number) => Promise<Row[]>;
  total: (where: SQL | undefined) => Promise<number>;
  key: (row: Row) => CursorKey;
}): Promise<{ rows: Row[]; pagination: Pagination }> {
  const { page } = opts;
  const ks = keysetWhere(opts.cols, page);
  const where = ks.where ? and(opts.filters, ks.where) : opts.filters;
  const offset = page.cursor ? 0 : page.offset;
  const fetched = await opts.select(where, ks.order, page.limit + 1, offset);
  const more = fetched.length > page.limit;
  let rows = fetched.slice(0, page.limit);
  if (ks.reversed) rows = rows.reverse();
  const total = await opts.total(opts.filters);
  const first = rows[0];
  const last = rows[rows.length - 1];
  // Walking forward, `more` means older rows remain; walking back, newer ones.
  const hasOlder = ks.reversed ? rows.length > 0 : more;
  const hasNewer = ks.reversed ? more : Boolean(page.cursor) || offset > 0;
  return {
    rows,
    pagination: {
      total,
      limit: page.limit,
      offset,
      has_more: more,
      next_cursor: last && hasOlder ? encodeCursor(opts.key(last), "next") : null,
      prev_cursor: first && hasNewer ? encodeCursor(opts.key(first), "prev") : null,
    },
  };
}
