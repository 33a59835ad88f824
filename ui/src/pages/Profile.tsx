/** The signed-in user's own account: who they are here, their password, their sessions (docs/teams.md, "Accounts"). */
import { useState, type FormEvent } from "react";
import type { z } from "zod";
import type { accountSession, passwordChanged } from "../../../src/contracts/account";
import { MIN_PASSWORD_LENGTH } from "../../../src/contracts/passwords";
import { api } from "../api";
import { Field, FormActions } from "../components/forms";
import { ErrorAlert, PageHead } from "../components/layout";
import { DataTable } from "../components/table";
import { Time } from "../components/time";
import { toast } from "../components/toasts";
import { useAction, useLoad, useSubmit } from "../hooks";
import { ListPanel } from "../resources";
import { useSession } from "../session";

type AccountSession = z.infer<typeof accountSession>;

export function ProfilePage() {
  const { me, logout } = useSession();
  const sessions = useLoad(() => api.get<{ sessions: AccountSession[] }>("/auth/sessions"), []);
  const ending = useAction();
  const list = sessions.data?.sessions ?? [];
  const others = list.filter((s) => !s.current);

  const end = (targets: AccountSession[]) =>
    ending.run(async () => {
      for (const s of targets) await api.del(`/auth/sessions/${encodeURIComponent(s.id)}`);
      toast(targets.length === 1 ? "Session signed out" : `${targets.length} sessions signed out`);
      await sessions.reload();
    });

  return (
    <>
      <PageHead
        title="Profile"
        sub={
          <>
            Signed in as <strong>{me.user?.email}</strong>
            {me.user?.name ? <> ({me.user.name})</> : null}, <span className="badge info">{me.role}</span> in {me.organization.name}.
          </>
        }
      />

      <PasswordForm onChanged={() => void sessions.reload()} />

      <div className="panel-head">
        <h2>Sessions</h2>
        {others.length > 0 ? (
          <button type="button" className="btn danger small" disabled={ending.busy} onClick={() => void end(others)}>
            Sign out everywhere else
          </button>
        ) : null}
      </div>
      <p className="muted">Every browser signed in as you. Signing one out ends it at once, live views included; changing your password signs out all but this one.</p>
      <ErrorAlert error={ending.error} />
      <ListPanel label="Sessions" loaded={sessions} what="Loading sessions" isEmpty={list.length === 0} empty={<p className="muted">No sessions.</p>}>
        <DataTable
          label="Sessions"
          rows={list}
          rowKey={(s) => s.id}
          columns={[
            {
              label: "Browser",
              render: (s) => (
                <span title={s.user_agent ?? undefined}>
                  {describeAgent(s.user_agent)} {s.current ? <span className="badge ok">this session</span> : null}
                </span>
              ),
            },
            { label: "Address", className: "mono nowrap", render: (s) => s.ip ?? "unknown" },
            { label: "Signed in with", hideNarrow: true, render: (s) => (s.method === "oidc" ? "single sign-on" : "password") },
            { label: "Signed in", render: (s) => <Time iso={s.created_at} /> },
            { label: "Last active", render: (s) => <Time iso={s.last_used_at} /> },
            {
              label: "Actions",
              srOnly: true,
              className: "actions",
              render: (s) =>
                s.current ? (
                  <button type="button" className="btn small" onClick={() => void logout()}>
                    Log out
                  </button>
                ) : (
                  <button type="button" className="btn small danger" disabled={ending.busy} onClick={() => void end([s])} aria-label={`Sign out ${describeAgent(s.user_agent)} from ${s.ip ?? "unknown address"}`}>
                    Sign out
                  </button>
                ),
            },
          ]}
        />
      </ListPanel>
    </>
  );
}

function PasswordForm({ onChanged }: { onChanged: () => void }) {
  const [current, setCurrent] = useState("");
  const [next, setNext] = useState("");
  const [again, setAgain] = useState("");
  const { busy, fieldErrors, formError, submit, setFieldErrors } = useSubmit();

  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    if (next !== again) {
      setFieldErrors({ again: "The two new passwords differ" });
      return;
    }
    const done = await submit(() => api.post<z.infer<typeof passwordChanged>>("/auth/password", { current_password: current, new_password: next }), ["current_password", "new_password"]);
    if (!done) return;
    setCurrent("");
    setNext("");
    setAgain("");
    toast(done.sessions_ended > 0 ? `Password changed; ${done.sessions_ended} other session${done.sessions_ended === 1 ? "" : "s"} signed out` : "Password changed");
    onChanged();
  };

  return (
    <form className="panel form" onSubmit={onSubmit} aria-label="Change password" noValidate>
      <h2>Change password</h2>
      <ErrorAlert error={formError} />
      <div className="form-grid">
        <Field label="Current password" error={fieldErrors.current_password}>
          {(p) => <input {...p} type="password" name="current_password" autoComplete="current-password" value={current} onChange={(e) => setCurrent(e.target.value)} />}
        </Field>
        <Field label="New password" error={fieldErrors.new_password} help={`At least ${MIN_PASSWORD_LENGTH} characters.`}>
          {(p) => <input {...p} type="password" name="new_password" autoComplete="new-password" value={next} onChange={(e) => setNext(e.target.value)} />}
        </Field>
        <Field label="New password again" error={fieldErrors.again}>
          {(p) => <input {...p} type="password" name="new_password_again" autoComplete="new-password" value={again} onChange={(e) => setAgain(e.target.value)} />}
        </Field>
      </div>
      <FormActions busy={busy} label="Change password" busyLabel="Changing…" />
    </form>
  );
}

/** "Firefox on Linux" from a User-Agent header: enough to tell one's own browsers apart; the full header is in the tooltip. */
export function describeAgent(ua: string | null): string {
  if (!ua) return "Unknown browser";
  const browser = /Edg\//.test(ua)
    ? "Edge"
    : /Firefox\//.test(ua)
      ? "Firefox"
      : /Chrom(e|ium)\//.test(ua)
        ? "Chrome"
        : /Safari\//.test(ua)
          ? "Safari"
          : /^curl\//.test(ua)
            ? "curl"
            : (ua.split(/[\s/]/)[0] ?? "Unknown").slice(0, 40);
  const os = /Windows/.test(ua) ? "Windows" : /iPhone|iPad/.test(ua) ? "iOS" : /Mac OS X/.test(ua) ? "macOS" : /Android/.test(ua) ? "Android" : /Linux/.test(ua) ? "Linux" : null;
  return os ? `${browser} on ${os}` : browser;
}
