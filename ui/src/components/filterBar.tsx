import { useId, useState, type ReactNode } from "react";

/** A row of filters; at phone width it folds behind a "Filters" button so the list comes first. */
export function FilterBar({ label, active, children }: { label: string; active: number; children: ReactNode }) {
  const [open, setOpen] = useState(false);
  const id = useId();
  return (
    <>
      <button type="button" className="btn small filter-toggle" aria-expanded={open} aria-controls={id} onClick={() => setOpen((o) => !o)}>
        Filters{active > 0 ? ` (${active})` : ""}
      </button>
      <form id={id} className="filters" data-open={open} role="search" aria-label={label} onSubmit={(e) => e.preventDefault()}>
        {children}
      </form>
    </>
  );
}
