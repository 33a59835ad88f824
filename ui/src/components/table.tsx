/** Lists as tables that stack at phone width, offset paging under them, and ids that link to their page. */
import type { ReactNode } from "react";
import { Link } from "../router";

export interface Column<T> {
  label: string;
  render: (row: T) => ReactNode;
  className?: string;
  /** Left out at phone width (the table stacks there). */
  hideNarrow?: boolean;
  /** The label is read by screen readers only (action columns). */
  srOnly?: boolean;
}

/**
 * A table that becomes a stack of label/value rows at phone width. onRowClick
 * adds a mouse shortcut; rows must still carry a real link for the keyboard.
 */
export function DataTable<T>({
  rows,
  columns,
  rowKey,
  label,
  onRowClick,
  rowClass,
}: {
  rows: T[];
  columns: Column<T>[];
  rowKey: (row: T) => string;
  label: string;
  onRowClick?: (row: T) => void;
  rowClass?: (row: T) => string | undefined;
}) {
  return (
    <div className="table-wrap">
      <table className="stack" aria-label={label}>
        <thead>
          <tr>
            {columns.map((c, i) => (
              <th key={i} className={[c.className, c.hideNarrow ? "hide-narrow" : ""].filter(Boolean).join(" ") || undefined}>
                {c.srOnly ? <span className="sr-only">{c.label}</span> : c.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr
              key={rowKey(r)}
              data-row-id={rowKey(r)}
              className={[onRowClick ? "clickable" : "", rowClass?.(r) ?? ""].filter(Boolean).join(" ") || undefined}
              onClick={
                onRowClick
                  ? (e) => {
                      // Clicks on links, buttons and inputs do their own thing.
                      if ((e.target as HTMLElement).closest("a, button, input, select, textarea, label")) return;
                      if (window.getSelection()?.toString()) return;
                      onRowClick(r);
                    }
                  : undefined
              }
            >
              {columns.map((c, i) => (
                <td key={i} data-label={c.srOnly ? "" : c.label} className={[c.className, c.hideNarrow ? "hide-narrow" : ""].filter(Boolean).join(" ") || undefined}>
                  {c.render(r)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Offset paging under a list: "1–50 of 320", previous / next. Nothing until the list's pagination is known. */
export function Pager({
  pagination,
  offset,
  limit,
  count,
  onPage,
}: {
  pagination: { total: number; has_more: boolean } | undefined;
  offset: number;
  limit: number;
  count: number;
  onPage: (offset: number) => void;
}) {
  if (!pagination || pagination.total === 0) return null;
  const { total, has_more: hasMore } = pagination;
  return (
    <div className="pager">
      <span>
        {offset + 1}–{offset + count} of {total.toLocaleString()}
      </span>
      <span className="btn-row">
        <button type="button" className="btn small" disabled={offset === 0} onClick={() => onPage(Math.max(0, offset - limit))}>
          Previous
        </button>
        <button type="button" className="btn small" disabled={!hasMore} onClick={() => onPage(offset + limit)}>
          Next
        </button>
      </span>
    </div>
  );
}

export function IdLink({ to, id }: { to: string; id: string }) {
  return (
    <Link to={to} className="mono" title={id}>
      {id}
    </Link>
  );
}
