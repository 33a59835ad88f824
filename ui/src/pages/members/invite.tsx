import { useState, type FormEvent } from "react";
import type { MemberDto } from "../../../../src/contracts/members";
import type { Role } from "../../../../src/contracts/roles";
import { api } from "../../api";
import { CopyField } from "../../components/copy";
import { Field, FormActions } from "../../components/forms";
import { ErrorAlert } from "../../components/layout";
import { useSubmit } from "../../hooks";
import { roles } from "../../../../src/contracts/roles";

export interface Added {
  member: MemberDto;
  invite_url: string | null;
}

/** The roles a caller may hand out: an owner any, an admin those below owner. */
export const grantable = (mine: Role): Role[] => roles.filter((r) => r !== "owner" || mine === "owner");

/** Adds a member: an email with an account joins at once; a new one gets an invite link. */
export function InviteForm({ myRole, onAdded, onCancel }: { myRole: Role; onAdded: (added: Added) => void; onCancel: () => void }) {
  const [email, setEmail] = useState("");
  const [name, setName] = useState("");
  const [role, setRole] = useState<Role>("developer");
  const { busy, fieldErrors, formError, submit } = useSubmit();

  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    const body = { email: email.trim(), role, ...(name.trim() ? { name: name.trim() } : {}) };
    const added = await submit(() => api.post<Added>("/members", body), ["email", "role", "name"]);
    if (added) onAdded(added);
  };

  return (
    <form className="panel form" onSubmit={onSubmit} aria-label="Invite member" noValidate>
      <h2>Invite a member</h2>
      <ErrorAlert error={formError} />
      <div className="form-grid">
        <Field label="Email" error={fieldErrors.email}>
          {(p) => <input {...p} type="email" name="email" value={email} onChange={(e) => setEmail(e.target.value)} maxLength={320} autoFocus />}
        </Field>
        <Field label="Role" error={fieldErrors.role} help="Viewers read; developers also change relay resources; admins also manage members, keys and environments.">
          {(p) => (
            <select {...p} name="role" value={role} onChange={(e) => setRole(e.target.value as Role)}>
              {grantable(myRole).map((r) => (
                <option key={r} value={r}>
                  {r}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Name (optional)" error={fieldErrors.name} help="Until they set their own when accepting.">
          {(p) => <input {...p} type="text" name="name" value={name} onChange={(e) => setName(e.target.value)} maxLength={200} />}
        </Field>
      </div>
      <FormActions busy={busy} label="Invite" busyLabel="Inviting…" onCancel={onCancel} />
    </form>
  );
}

/** The invite link, shown once: only its hash is stored. */
export function InviteLinkBox({ added, onDone }: { added: Added & { invite_url: string }; onDone: () => void }) {
  return (
    <section className="secret-box" aria-label="Invite link" role="region">
      <h2>{added.member.email} is invited</h2>
      <p>Send them this link: it works once, for 7 days, and is not shown again. Inviting them again makes a new one and the old one stops working.</p>
      <CopyField value={added.invite_url} label="Invite link" />
      <div className="btn-row" style={{ marginTop: 12 }}>
        <button type="button" className="btn" onClick={onDone}>
          Done
        </button>
      </div>
    </section>
  );
}
