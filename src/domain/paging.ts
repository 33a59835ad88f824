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
  return { rows, pagination: paginationOf(rows, { total, limit: page.limit, offset, more, reversed: ks.reversed, cursor: Boolean(page.cursor) }, opts.key) };
}

/** The spec's `pagination` for a page already read: `more` says a row beyond the page exists in the walking direction. */
function paginationOf<Row>(rows: Row[], p: { total: number; limit: number; offset: number; more: boolean; reversed: boolean; cursor: boolean }, key: (row: Row) => CursorKey): Pagination {
  const first = rows[0];
  const last = rows[rows.length - 1];
  // Walking forward, `more` means older rows remain; walking back, newer ones.
  const hasOlder = p.reversed ? rows.length > 0 : p.more;
  const hasNewer = p.reversed ? p.more : p.cursor || p.offset > 0;
  return {
    total: p.total,
    limit: p.limit,
    offset: p.offset,
    has_more: p.more,
    next_cursor: last && hasOlder ? encodeCursor(key(last), "next") : null,
    prev_cursor: first && hasNewer ? encodeCursor(key(first), "prev") : null,
  };
}

/**
 * The same page and `pagination` as paginate gives, taken in memory from
 * every matching key, newest first (as the database orders (time, id): both
 * are fixed-width ASCII, so string order is the database's order). For a list
 * whose matching rows are bounded and costly to find (a search reads bodies,
 * src/domain/eventSearch.ts): one read finds them all, the total is their
 * number and the page a slice, instead of finding them once for the page and
 * again for the total.
 */
export function paginateKeys(keys: CursorKey[], page: PageQuery): { keys: CursorKey[]; pagination: Pagination } {
  const offset = page.cursor ? 0 : page.offset;
  let from = offset;
  let to = offset + page.limit + 1;
  let reversed = false;
  if (page.cursor) {
    const c = decodeCursor(page.cursor, page.direction);
    const older = (k: CursorKey) => k.t < c.t || (k.t === c.t && k.id < c.id);
    // keys are newest first: the older ones form a suffix, the newer ones a prefix.
    const firstOlder = firstIndex(keys, older);
    if (c.d === "next") {
      from = firstOlder;
      to = from + page.limit + 1;
    } else {
      const newerEnd = firstIndex(keys, (k) => older(k) || (k.t === c.t && k.id === c.id));
      reversed = true;
      from = Math.max(0, newerEnd - page.limit - 1);
      to = newerEnd;
    }
  }
  const fetched = keys.slice(from, to);
  const more = fetched.length > page.limit;
  // Walking back, the extra row is the newest one, at the front.
  const rows = reversed ? (more ? fetched.slice(1) : fetched) : fetched.slice(0, page.limit);
  return { keys: rows, pagination: paginationOf(rows, { total: keys.length, limit: page.limit, offset, more, reversed, cursor: Boolean(page.cursor) }, (k) => k) };
}

/** The first index of a newest-first list at which `past` holds (it holds for every later one too), or the length. */
function firstIndex(keys: CursorKey[], past: (k: CursorKey) => boolean): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (past(keys[mid]!)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
