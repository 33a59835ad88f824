/**
 * A textarea for JSON (schemas, payloads) that says as you type whether the
 * text is JSON, and where it is not; the server's message for the text (ajv's,
 * for a schema that does not compile) is shown until the text changes.
 */
import { useMemo, useRef, type ReactNode } from "react";
import { Field } from "./components/forms";
import { checkJson } from "./json";

export function JsonField({
  label,
  value,
  onChange,
  error,
  help,
  object = false,
  rows = 8,
  placeholder,
  name,
}: {
  label: ReactNode;
  value: string;
  onChange: (v: string) => void;
  /** The server's message for this field. */
  error?: string;
  help?: ReactNode;
  /** Only a JSON object is accepted (a JSON Schema). */
  object?: boolean;
  rows?: number;
  placeholder?: string;
  name?: string;
}) {
  const check = useMemo(() => checkJson(value, { object }), [value, object]);
  // The server judged the text it was sent: once the text changes, its message no longer applies.
  const judged = useRef({ error, value });
  if (error !== judged.current.error) judged.current = { error, value };
  const serverError = error && value === judged.current.value ? error : undefined;
  const status = check.ok && !check.empty && !serverError ? <span className="json-ok">✓ Valid JSON. </span> : null;
  return (
    <Field
      label={label}
      error={check.ok ? serverError : check.error}
      help={
        status || help ? (
          <>
            {status}
            {help}
          </>
        ) : undefined
      }
    >
      {(p) => <textarea {...p} name={name} rows={rows} value={value} onChange={(e) => onChange(e.target.value)} placeholder={placeholder} spellCheck={false} autoCapitalize="off" autoCorrect="off" />}
    </Field>
  );
}

