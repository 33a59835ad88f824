/**
 * The buttons in the head of a detail page: its own (links, tests) first, then
 * the status moves it offers (Pause, Resume, Enable, Disable), then Delete,
 * which asks before it deletes. A role that may not write sees the page's own
 * links only (ui/src/can.tsx): callers pass no writing buttons as children.
 */
import type { ReactNode } from "react";
import { useCan } from "../can";

/** A status button: its label, and the status (or enabled flag) it sets. */
export interface StatusMove<S> {
  label: string;
  to: S;
}

export function DetailActions<S>({ children, moves = [], busy, onMove, onDelete }: { children?: ReactNode; moves?: StatusMove<S>[]; busy?: boolean; onMove?: (to: S) => void; onDelete: () => void }) {
  const canWrite = useCan("write");
  if (!canWrite) return <>{children}</>;
  return (
    <>
      {children}
      {moves.map((m) => (
        <button key={m.label} type="button" className="btn" disabled={busy} onClick={() => onMove?.(m.to)}>
          {m.label}
        </button>
      ))}
      <button type="button" className="btn danger" onClick={onDelete}>
        Delete
      </button>
    </>
  );
}
