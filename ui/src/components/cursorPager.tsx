/** Cursor paging under a list: "Page 2 · 25 messages", back through the cursors seen so far, on to the next one. */
import type { Dispatch, SetStateAction } from "react";

export function CursorPager({
  cursors,
  setCursors,
  next,
  summary,
  labels = ["Previous", "Next"],
}: {
  /** The cursors of the pages before this one, oldest first. */
  cursors: string[];
  setCursors: Dispatch<SetStateAction<string[]>>;
  /** The cursor of the page after this one; none on the last page. */
  next: string | null | undefined;
  /** After the page number, e.g. " · 25 messages". */
  summary?: string;
  labels?: [back: string, forward: string];
}) {
  return (
    <div className="pager">
      <span>
        Page {cursors.length + 1}
        {summary}
      </span>
      <span className="btn-row">
        <button type="button" className="btn small" disabled={cursors.length === 0} onClick={() => setCursors((cs) => cs.slice(0, -1))}>
          {labels[0]}
        </button>
        <button
          type="button"
          className="btn small"
          disabled={!next}
          onClick={() => {
            if (next) setCursors((cs) => [...cs, next]);
          }}
        >
          {labels[1]}
        </button>
      </span>
    </div>
  );
}
