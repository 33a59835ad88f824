import { useState, type FormEvent } from "react";
import { api } from "../api";
import { Field } from "../components/forms";
import { ErrorAlert } from "../components/layout";
import { useSubmit } from "../hooks";

/** The login form; on success the shell loads /auth/me and shows the app. */
export function LoginPage({ onLoggedIn }: { onLoggedIn: () => void }) {
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const { busy, fieldErrors, formError, submit, setFieldErrors } = useSubmit();

  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    const missing: Record<string, string> = {};
    if (!email.trim()) missing.email = "Enter your email";
    if (!password) missing.password = "Enter your password";
    if (Object.keys(missing).length > 0) {
      setFieldErrors(missing);
      (document.querySelector<HTMLInputElement>(missing.email ? "input[name=email]" : "input[name=password]"))?.focus();
      return;
    }
    const ok = await submit(() => api.post("/auth/login", { email, password }, { quiet401: true }), ["email", "password"]);
    if (ok) onLoggedIn();
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
        <form className="panel form" onSubmit={onSubmit} aria-label="Log in" noValidate>
          <h1>Log in</h1>
          <ErrorAlert error={formError} />
          <Field label="Email" error={fieldErrors.email}>
            {(p) => <input {...p} type="email" name="email" autoComplete="username" value={email} onChange={(e) => setEmail(e.target.value)} required autoFocus />}
          </Field>
          <Field label="Password" error={fieldErrors.password}>
            {(p) => <input {...p} type="password" name="password" autoComplete="current-password" value={password} onChange={(e) => setPassword(e.target.value)} required />}
          </Field>
          <button type="submit" className="btn primary" disabled={busy}>
            {busy ? "Logging in…" : "Log in"}
          </button>
          <p className="muted" style={{ fontSize: 12, margin: 0 }}>
            The admin user is created on first start from HOOKRELAY_ADMIN_EMAIL and HOOKRELAY_ADMIN_PASSWORD (or printed once by <code>hookrelay serve</code>).
          </p>
        </form>
      </div>
    </main>
  );
}
