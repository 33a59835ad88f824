/**
 * A form that changes something. For a role that may not (ui/src/can.tsx)
 * its fields stay readable but disabled (one disabled fieldset, so no field
 * can be missed), a note says why, and its FormActions show no buttons.
 * Forms anyone may submit (a password change) are plain forms.
 */
import { createContext, useContext, type FormHTMLAttributes } from "react";
import type { Permission } from "../../../src/contracts/roles";
import { ReadOnlyNote, useCan } from "../can";

const Locked = createContext(false);

/** Whether the form around the caller is a WriteForm the caller's role may not submit. */
export function useFormLocked(): boolean {
  return useContext(Locked);
}

export function WriteForm({ permission = "write", children, ...form }: FormHTMLAttributes<HTMLFormElement> & { permission?: Permission }) {
  const allowed = useCan(permission);
  return (
    <form {...form}>
      {allowed ? null : <ReadOnlyNote />}
      <fieldset className="form-lock" disabled={!allowed}>
        <Locked.Provider value={!allowed}>{children}</Locked.Provider>
      </fieldset>
    </form>
  );
}
