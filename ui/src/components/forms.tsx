/** Form fields: a labelled control wired for screen readers, a checkbox, select options, the buttons under a form. */
import { useId, type ReactNode } from "react";
import { Link } from "../router";
import { useFormLocked } from "./writeForm";

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

/**
 * The buttons under a form: submit (busyLabel while it runs), then Cancel as a link back or a button.
 * None in a WriteForm the caller's role may not submit (ui/src/components/writeForm.tsx).
 */
export function FormActions({ busy, label, busyLabel = "Saving…", cancelTo, onCancel }: { busy: boolean; label: string; busyLabel?: string; cancelTo?: string; onCancel?: () => void }) {
  if (useFormLocked()) return null;
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
