import { useState } from "react";
import type { MemberDto } from "../../../../src/contracts/members";
import type { Role } from "../../../../src/contracts/roles";
import { api } from "../../api";
import { ConfirmDialog } from "../../components/dialogs";
import { ErrorAlert, PageHead } from "../../components/layout";
import { DataTable } from "../../components/table";
import { Time } from "../../components/time";
import { toast } from "../../components/toasts";
import { useAction, useLoad } from "../../hooks";
import { ListPanel } from "../../resources";
import { useCan } from "../../can";
import { useSession } from "../../session";
import { grantable, InviteForm, InviteLinkBox, type Added } from "./invite";

const STATUS_BADGE: Record<MemberDto["status"], string> = { active: "badge ok", invited: "badge info", disabled: "badge bad" };

/**
 * The organization's members (docs/teams.md, "Members and invites"): every
 * role sees the list; admins and owners invite, change roles, disable and
 * remove, and only owners touch owners. Nobody changes themselves here.
 */
export function MembersPage() {
  const { me } = useSession();
  const members = useLoad(() => api.get<{ members: MemberDto[] }>("/members"), []);
  const [inviting, setInviting] = useState(false);
  const [shown, setShown] = useState<(Added & { invite_url: string }) | null>(null);
  const [removing, setRemoving] = useState<MemberDto | null>(null);
  const change = useAction();
  const removal = useAction();
  const list = members.data?.members ?? [];
  const manages = useCan("administer");
  /** Whether the caller may change this member: not themselves, and owners only as an owner. */
  const mayChange = (m: MemberDto) => manages && m.user_id !== me.user?.id && (m.role !== "owner" || me.role === "owner");

  const patch = (m: MemberDto, body: { role?: Role; disabled?: boolean }, done: string) =>
    change.run(async () => {
      await api.patch(`/members/${encodeURIComponent(m.user_id)}`, body);
      toast(done);
      await members.reload();
    });

  const remove = async () => {
    if (!removing) return;
    await removal.run(async () => {
      await api.del(`/members/${encodeURIComponent(removing.user_id)}`);
      toast(`${removing.email} removed`);
      setRemoving(null);
      await members.reload();
    });
  };

  return (
    <>
      <PageHead
        title="Members"
        sub={`Who works in ${me.organization.name}, and what each may do. Your role here: ${me.role}.`}
        actions={
          manages && !inviting ? (
            <button type="button" className="btn primary" onClick={() => setInviting(true)}>
              Invite member
            </button>
          ) : null
        }
      />
      {shown ? <InviteLinkBox added={shown} onDone={() => setShown(null)} /> : null}
      {inviting ? (
        <InviteForm
          myRole={me.role}
          onCancel={() => setInviting(false)}
          onAdded={async (added) => {
            setInviting(false);
            if (added.invite_url) setShown({ ...added, invite_url: added.invite_url });
            else toast(`${added.member.email} added: they already had an account`);
            await members.reload();
          }}
        />
      ) : null}
      <ErrorAlert error={change.error} />
      <ListPanel label="Members" loaded={members} what="Loading members" isEmpty={list.length === 0} empty={null}>
        <DataTable
          label="Members"
          rows={list}
          rowKey={(m) => m.user_id}
          columns={[
            {
              label: "Member",
              render: (m) => (
                <>
                  <div>{m.name ?? m.email}</div>
                  {m.name ? <div className="muted">{m.email}</div> : null}
                  {m.user_id === me.user?.id ? <span className="muted"> (you)</span> : null}
                </>
              ),
            },
            {
              label: "Role",
              render: (m) =>
                mayChange(m) ? (
                  <select aria-label={`Role of ${m.email}`} value={m.role} disabled={change.busy} onChange={(e) => void patch(m, { role: e.target.value as Role }, `${m.email} is now ${e.target.value}`)}>
                    {grantable(me.role).map((r) => (
                      <option key={r} value={r}>
                        {r}
                      </option>
                    ))}
                  </select>
                ) : (
                  m.role
                ),
            },
            { label: "Status", render: (m) => <span className={STATUS_BADGE[m.status]}>{m.status}</span> },
            { label: "Last login", hideNarrow: true, render: (m) => (m.last_login_at ? <Time iso={m.last_login_at} /> : <span className="muted">never</span>) },
            {
              label: "Actions",
              srOnly: true,
              className: "actions",
              render: (m) =>
                mayChange(m) ? (
                  <>
                    {m.status === "disabled" ? (
                      <button type="button" className="btn small" disabled={change.busy} onClick={() => void patch(m, { disabled: false }, `${m.email} enabled`)} aria-label={`Enable ${m.email}`}>
                        Enable
                      </button>
                    ) : (
                      <button type="button" className="btn small" disabled={change.busy} onClick={() => void patch(m, { disabled: true }, `${m.email} disabled`)} aria-label={`Disable ${m.email}`}>
                        Disable
                      </button>
                    )}{" "}
                    <button
                      type="button"
                      className="btn small danger"
                      onClick={() => {
                        removal.setError(null);
                        setRemoving(m);
                      }}
                      aria-label={`Remove ${m.email}`}
                    >
                      Remove
                    </button>
                  </>
                ) : null,
            },
          ]}
        />
      </ListPanel>
      <ConfirmDialog
        open={removing !== null}
        title="Remove this member?"
        confirmLabel="Remove member"
        busy={removal.busy}
        error={removal.error}
        onConfirm={remove}
        onCancel={() => setRemoving(null)}
      >
        <p>
          <strong>{removing?.email}</strong> leaves {me.organization.name} at once: their API keys here are revoked and they are signed out. Their account stays.
        </p>
      </ConfirmDialog>
    </>
  );
}
