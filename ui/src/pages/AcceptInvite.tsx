import { useState, type FormEvent } from "react";
import { api, ApiError, errorMessage } from "../api";
import { Field } from "../components/forms";
import { ErrorAlert } from "../components/layout";
import { MIN_PASSWORD_LENGTH } from "../../../src/contracts/passwords";

/** The token of a one-time link: it rides in the fragment (/accept#token=…), which never reaches a server log. */
function tokenFromFragment(): string | null {
  const token = new URLSearchParams(location.hash.replace(/^#/, "")).get("token");
  return token && token.trim() ? token.trim() : null;
}

/**
 * Spends an invite (or a password reset) link: the person picks a name and a
 * password, POST /v1/auth/invites/accept signs them in, and the app opens on
 * the dashboard. Reachable signed out. A link that is spent, expired or
 * withdrawn shows the API's refusal in place of the form.
 */
export function AcceptInvitePage({ onAccepted }: { onAccepted: () => void }) {
  const [token] = useState(tokenFromFragment);
  const [name, setName] = useState("");
  const [password, setPassword] = useState("");
  const [again, setAgain] = useState("");
  const [busy, setBusy] = useState(false);
  const [fieldErrors, setFieldErrors] = useState<Record<string, string>>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [refused, setRefused] = useState<string | null>(token ? null : "This page opens from the link in your invite: the link you followed carries no token. Ask whoever invited you for a new one.");

  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    const problems: Record<string, string> = {};
    if (password.length < MIN_PASSWORD_LENGTH) problems.password = `At least ${MIN_PASSWORD_LENGTH} characters`;
    else if (again !== password) problems.again = "The two passwords differ";
    setFieldErrors(problems);
    setFormError(null);
    if (Object.keys(problems).length > 0) return;
    setBusy(true);
    try {
      await api.post("/auth/invites/accept", { token, password, ...(name.trim() ? { name: name.trim() } : {}) }, { quiet401: true });
      // The caller replaces the address (and with it the spent token) with the dashboard's.
      onAccepted();
    } catch (err) {
      if (err instanceof ApiError && err.issues.some((i) => i.field === "token")) setRefused(err.message);
      else if (err instanceof ApiError && Object.keys(err.fieldErrors()).length > 0) setFieldErrors(err.fieldErrors());
      else setFormError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <main className="login-wrap">
      <div className="login">
        <div className="brand">
          <span className="brand-mark" aria-hidden="true">
            h
          </span>
          hookrelay
        </div>
        {refused ? (
          <section className="panel" aria-label="Link refused" role="region">
            <h1>This link cannot be used</h1>
            <div className="alert error" role="alert">
              {refused}
            </div>
            <a className="btn" href="/">
              Go to the login page
            </a>
          </section>
        ) : (
          <form className="panel form" onSubmit={onSubmit} aria-label="Accept invite" noValidate>
            <h1>Set your password</h1>
            <p className="muted" style={{ margin: 0 }}>
              Choose how you are shown to your team and the password you will sign in with.
            </p>
            <ErrorAlert error={formError} />
            <Field label="Your name" error={fieldErrors.name}>
              {(p) => <input {...p} type="text" name="name" autoComplete="name" value={name} onChange={(e) => setName(e.target.value)} maxLength={200} autoFocus />}
            </Field>
            <Field label="Password" error={fieldErrors.password} help={`At least ${MIN_PASSWORD_LENGTH} characters.`}>
              {(p) => <input {...p} type="password" name="password" autoComplete="new-password" value={password} onChange={(e) => setPassword(e.target.value)} />}
            </Field>
            <Field label="Password again" error={fieldErrors.again}>
              {(p) => <input {...p} type="password" name="password-again" autoComplete="new-password" value={again} onChange={(e) => setAgain(e.target.value)} />}
            </Field>
            <button type="submit" className="btn primary" disabled={busy}>
              {busy ? "Signing in…" : "Set password and sign in"}
            </button>
          </form>
        )}
      </div>
    </main>
  );
}
