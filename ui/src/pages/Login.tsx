import { useState, type FormEvent } from "react";
import type { z } from "zod";
import type { loginMethods } from "../../../src/contracts/account";
import { api } from "../api";
import { Field } from "../components/forms";
import { ErrorAlert } from "../components/layout";
import { useLoad, useSubmit } from "../hooks";
import { setSessionHint } from "../session";

type LoginMethods = z.infer<typeof loginMethods>;

/**
 * The login page: the single sign-on button when the server has a provider
 * (a plain link: the sign-in is a chain of redirects, docs/teams.md "Single
 * sign-on"), and the email and password form unless password login is off.
 * On success the shell loads /auth/me and shows the app.
 */
export function LoginPage({ onLoggedIn }: { onLoggedIn: () => void }) {
  // Unknown (an older server, a failed request): the password form, as before.
  const methods = useLoad(() => api.get<LoginMethods>("/auth/methods", undefined, { quiet401: true }).catch((): LoginMethods => ({ password: true, oidc: null })), []);
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
        {methods.data?.oidc && (
          <div className="panel form login-sso">
            <h1>Log in</h1>
            {/* The provider sends the browser back to / signed in: the hint makes the app ask /auth/me then (ui/src/session.tsx). */}
            <a className="btn primary" href={methods.data.oidc.login_url} onClick={() => setSessionHint(true)}>
              Sign in with {methods.data.oidc.name}
            </a>
          </div>
        )}
        {methods.data?.password && (
          <form className="panel form" onSubmit={onSubmit} aria-label="Log in" noValidate>
            {methods.data.oidc ? <h2>Or with your email and password</h2> : <h1>Log in</h1>}
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
        )}
      </div>
    </main>
  );
}
