/**
 * A form that changes something. For a role that may not (ui/src/can.tsx)
 * its fields stay readable but disabled (one disabled fieldset, so no field
 * can be missed), a note says why, and FormActions hides its submit button.
 */
import type { FormHTMLAttributes } from "react";
import type { Permission } from "../../../src/contracts/roles";
import { ReadOnlyNote, useCan } from "../can";

export function WriteForm({ permission = "write", children, ...form }: FormHTMLAttributes<HTMLFormElement> & { permission?: Permission }) {
  const allowed = useCan(permission);
  return (
    <form {...form}>
      {allowed ? null : <ReadOnlyNote />}
      <fieldset className="form-lock" disabled={!allowed}>
        {children}
      </fieldset>
    </form>
  );
}
