/** Modals on the native <dialog>, and the confirmation asked before something that cannot be undone. */
import { useEffect, useId, useRef, type ReactNode } from "react";
import { Icon } from "../icons";
import { ErrorAlert } from "./layout";

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
