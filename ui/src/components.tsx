/** Shared building blocks: form fields, dialogs, copy buttons, badges, empty states, toasts. */
import { useEffect, useId, useRef, useState, useSyncExternalStore, type ReactNode } from "react";
import { fullTime, timeAgo } from "./format";
import { Icon } from "./icons";
import { Link } from "./router";

// ---------- page frame ----------

export function PageHead({ title, sub, actions }: { title: ReactNode; sub?: ReactNode; actions?: ReactNode }) {
  return (
    <div className="page-head">
      <div>
        <h1>{title}</h1>
        {sub ? <div className="sub">{sub}</div> : null}
      </div>
      {actions ? <div className="actions">{actions}</div> : null}
    </div>
  );
}

export function Loading({ what = "Loading" }: { what?: string }) {
  return (
    <div className="spinner" role="status">
      {what}…
    </div>
  );
}

export function ErrorAlert({ error, onRetry }: { error: string | null | undefined; onRetry?: () => void }) {
  if (!error) return null;
  return (
    <div className="alert error" role="alert">
      {error}
      {onRetry ? (
        <>
          {" "}
          <button type="button" className="btn small" onClick={onRetry}>
            Try again
          </button>
        </>
      ) : null}
    </div>
  );
}

export function Empty({ title, children, action }: { title: string; children?: ReactNode; action?: ReactNode }) {
  return (
    <div className="empty">
      <h3>{title}</h3>
      {children ? <p>{children}</p> : null}
      {action}
    </div>
  );
}

/** A page whose data is still on its way: its head, then a spinner, or the error (with a retry when given). */
export function PageLoading({ title, sub, error, onRetry, what }: { title: ReactNode; sub?: ReactNode; error: string | null | undefined; onRetry?: () => void; what?: string }) {
  return (
    <>
      <PageHead title={title} sub={sub} />
      {error ? <ErrorAlert error={error} onRetry={onRetry} /> : <Loading what={what} />}
    </>
  );
}

// ---------- form fields ----------

interface FieldProps {
  label: ReactNode;
  error?: string | undefined;
  help?: ReactNode;
  children: (props: { id: string; "aria-invalid": boolean | undefined; "aria-describedby": string | undefined }) => ReactNode;
}

/** A labelled control with its help text and the API's message for it, wired for screen readers. */
export function Field({ label, error, help, children }: FieldProps) {
  const id = useId();
  const helpId = help ? `${id}-help` : undefined;
  const errId = error ? `${id}-err` : undefined;
  const describedBy = [errId, helpId].filter(Boolean).join(" ") || undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children({ id, "aria-invalid": error ? true : undefined, "aria-describedby": describedBy })}
      {error ? (
        <div className="field-error" id={errId} role="alert">
          {error}
        </div>
      ) : null}
      {help ? (
        <div className="help" id={helpId}>
          {help}
        </div>
      ) : null}
    </div>
  );
}

export function Check({ label, checked, onChange, help }: { label: ReactNode; checked: boolean; onChange: (v: boolean) => void; help?: ReactNode }) {
  return (
    <div className="field">
      <label className="check">
        <input type="checkbox" checked={checked} onChange={(e) => onChange(e.target.checked)} />
        {label}
      </label>
      {help ? <div className="help">{help}</div> : null}
    </div>
  );
}

/** The options of a select for a list of fixed values (statuses, methods), each its own label. */
export function Options({ values }: { values: readonly string[] }) {
  return (
    <>
      {values.map((v) => (
        <option key={v}>{v}</option>
      ))}
    </>
  );
}

/** The options of a select for stored things (sources, destinations…): the id as value, the name as label. */
export function NamedOptions({ items }: { items: readonly { id: string; name: string }[] | undefined }) {
  return (
    <>
      {items?.map((x) => (
        <option key={x.id} value={x.id}>
          {x.name}
        </option>
      ))}
    </>
  );
}

/** The buttons under a form: submit (busyLabel while it runs), then Cancel as a link back or a button. */
export function FormActions({ busy, label, busyLabel = "Saving…", cancelTo, onCancel }: { busy: boolean; label: string; busyLabel?: string; cancelTo?: string; onCancel?: () => void }) {
  return (
    <div className="btn-row">
      <button type="submit" className="btn primary" disabled={busy}>
        {busy ? busyLabel : label}
      </button>
      {cancelTo ? (
        <Link to={cancelTo} className="btn">
          Cancel
        </Link>
      ) : null}
      {onCancel ? (
        <button type="button" className="btn" onClick={onCancel}>
          Cancel
        </button>
      ) : null}
    </div>
  );
}

// ---------- dialogs ----------

/**
 * A modal on the native <dialog>: focus moves in, Escape closes, focus returns after.
 * A danger modal (something will be lost) is marked red, with a warning sign, as an alertdialog.
 */
export function Modal({ open, onClose, title, children, wide, danger }: { open: boolean; onClose: () => void; title: string; children: ReactNode; wide?: boolean; danger?: boolean }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);
  return (
    <dialog
      ref={ref}
      className={[wide ? "wide" : "", danger ? "danger" : ""].filter(Boolean).join(" ") || undefined}
      role={danger ? "alertdialog" : undefined}
      aria-labelledby={titleId}
      onCancel={(e) => {
        e.preventDefault();
        onClose();
      }}
    >
      {open ? (
        <>
          <h2 id={titleId}>
            {danger ? <Icon name="warning" size={20} /> : null}
            {title}
          </h2>
          {children}
        </>
      ) : null}
    </dialog>
  );
}

/** Asks before something that cannot be undone; the text says what is lost, the red button does it. */
export function ConfirmDialog({
  open,
  title,
  children,
  confirmLabel,
  danger = true,
  busy,
  error,
  onConfirm,
  onCancel,
}: {
  open: boolean;
  title: string;
  children: ReactNode;
  confirmLabel: string;
  danger?: boolean;
  busy?: boolean;
  error?: string | null;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  return (
    <Modal open={open} onClose={onCancel} title={title} danger={danger}>
      <div className="dialog-body">{children}</div>
      <ErrorAlert error={error} />
      <div className="btn-row">
        <button type="button" className="btn" onClick={onCancel} autoFocus>
          Cancel
        </button>
        <button type="button" className={danger ? "btn danger solid" : "btn primary"} onClick={onConfirm} disabled={busy}>
          {busy ? "Working…" : confirmLabel}
        </button>
      </div>
    </Modal>
  );
}

// ---------- copy ----------

/** Copies text: the Clipboard API when the page is a secure context, else a hidden textarea + execCommand. */
export async function copyText(text: string): Promise<boolean> {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    // fall through to the old way
  }
  const ta = document.createElement("textarea");
  ta.value = text;
  ta.setAttribute("readonly", "");
  ta.style.position = "fixed";
  ta.style.opacity = "0";
  document.body.appendChild(ta);
  ta.select();
  let ok = false;
  try {
    ok = document.execCommand("copy");
  } catch {
    ok = false;
  }
  ta.remove();
  return ok;
}

export function CopyButton({ text, label = "Copy", className = "btn small" }: { text: string; label?: string; className?: string }) {
  const [state, setState] = useState<"idle" | "ok" | "fail">("idle");
  useEffect(() => {
    if (state === "idle") return;
    const t = setTimeout(() => setState("idle"), 1800);
    return () => clearTimeout(t);
  }, [state]);
  return (
    <button type="button" className={className} onClick={async () => setState((await copyText(text)) ? "ok" : "fail")} aria-live="polite">
      {state === "ok" ? "Copied" : state === "fail" ? "Select and copy" : label}
    </button>
  );
}

/** A read-only value with a copy button (ingest URLs, keys, secrets). */
export function CopyField({ value, label }: { value: string; label: string }) {
  return (
    <div className="copy-field">
      <input type="text" readOnly value={value} aria-label={label} onFocus={(e) => e.currentTarget.select()} />
      <CopyButton text={value} />
    </div>
  );
}

// ---------- badges, times ----------

const good = new Set(["active", "success", "delivered", "verified", "unique", "completed", "enabled", "resolved", "ok"]);
const bad = new Set(["failed", "disabled", "rejected", "revoked", "error", "dlq", "open"]);
const warn = new Set(["paused", "held", "pending", "queued", "delivering", "running", "duplicate", "acknowledged", "retrying"]);

export function StatusBadge({ status }: { status: string | null | undefined }) {
  if (!status) return <span className="badge">–</span>;
  const cls = good.has(status) ? "ok" : bad.has(status) ? "bad" : warn.has(status) ? "warn" : "";
  return <span className={`badge ${cls}`}>{status}</span>;
}

/** Marks an attempt an operator forced through for a rejected event. */
export function ForcedBadge() {
  return (
    <span className="badge bad" title="An operator delivered this rejected event anyway (force)">
      forced
    </span>
  );
}

export function Time({ iso }: { iso: string | null | undefined }) {
  const [, tick] = useState(0);
  useEffect(() => {
    const t = setInterval(() => tick((n) => n + 1), 30_000);
    return () => clearInterval(t);
  }, []);
  if (!iso) return <span className="muted">never</span>;
  return (
    <time dateTime={iso} title={fullTime(iso)} className="nowrap">
      {timeAgo(iso)}
    </time>
  );
}

export function IdLink({ to, id }: { to: string; id: string }) {
  return (
    <Link to={to} className="mono" title={id}>
      {id}
    </Link>
  );
}

// ---------- toasts ----------

interface Toast {
  id: number;
  text: string;
  kind: "ok" | "error";
}
let toasts: Toast[] = [];
let toastSeq = 0;
const toastListeners = new Set<() => void>();

export function toast(text: string, kind: "ok" | "error" = "ok") {
  const t = { id: ++toastSeq, text, kind };
  toasts = [...toasts, t].slice(-3);
  toastListeners.forEach((l) => l());
  setTimeout(() => {
    toasts = toasts.filter((x) => x.id !== t.id);
    toastListeners.forEach((l) => l());
  }, 3500);
}

export function Toasts() {
  const list = useSyncExternalStore(
    (l) => {
      toastListeners.add(l);
      return () => toastListeners.delete(l);
    },
    () => toasts,
  );
  return (
    <div className="toasts" role="status" aria-live="polite">
      {list.map((t) => (
        <div key={t.id} className={`toast ${t.kind === "error" ? "error" : ""}`}>
          {t.text}
        </div>
      ))}
    </div>
  );
}

// ---------- tabs ----------

export function Tabs<T extends string>({ tabs, value, onChange, label }: { tabs: { id: T; label: string }[]; value: T; onChange: (v: T) => void; label: string }) {
  const ref = useRef<HTMLDivElement>(null);
  // On a phone the tabs scroll sideways: keep the chosen one in sight (the list only, never the page).
  useEffect(() => {
    const list = ref.current;
    const tab = list?.querySelector<HTMLElement>('[aria-selected="true"]');
    if (!list || !tab) return;
    if (tab.offsetLeft < list.scrollLeft) list.scrollLeft = tab.offsetLeft;
    else if (tab.offsetLeft + tab.offsetWidth > list.scrollLeft + list.clientWidth) list.scrollLeft = tab.offsetLeft + tab.offsetWidth - list.clientWidth;
  }, [value]);
  return (
    <div className="tabs" role="tablist" aria-label={label} ref={ref}>
      {tabs.map((t) => (
        <button
          key={t.id}
          type="button"
          role="tab"
          aria-selected={t.id === value}
          tabIndex={t.id === value ? 0 : -1}
          onClick={() => onChange(t.id)}
          onKeyDown={(e) => {
            const i = tabs.findIndex((x) => x.id === value);
            if (e.key === "ArrowRight") onChange(tabs[(i + 1) % tabs.length]!.id);
            if (e.key === "ArrowLeft") onChange(tabs[(i - 1 + tabs.length) % tabs.length]!.id);
          }}
        >
          {t.label}
        </button>
      ))}
    </div>
  );
}

// ---------- tables ----------

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

/** A job's progress (replay, redrive, bulk retry) as a bar with counts. */
export function JobBar({ job }: { job: { status: string; total: number; processed: number; succeeded: number; failed: number; skipped?: number } }) {
  const pctDone = job.total > 0 ? Math.round((job.processed / job.total) * 100) : job.status === "completed" ? 100 : 0;
  return (
    <div>
      <div className={`progress ${job.status === "completed" ? "done" : ""}`} role="progressbar" aria-valuemin={0} aria-valuemax={100} aria-valuenow={pctDone} aria-label="Progress">
        <div style={{ width: `${pctDone}%` }} />
      </div>
      <div className="muted" style={{ marginTop: 6, fontSize: 13 }}>
        <StatusBadge status={job.status} /> {job.processed.toLocaleString()} of {job.total.toLocaleString()} processed · {job.succeeded.toLocaleString()} succeeded · {job.failed.toLocaleString()} failed
        {job.skipped ? ` · ${job.skipped.toLocaleString()} skipped` : ""}
      </div>
    </div>
  );
}

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
