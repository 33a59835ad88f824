/** One notification channel: its settings, a test message, deleting it unless alert rules still use it. */
import { useState } from "react";
import { api, ApiError } from "../../api";
import { DetailActions } from "../../components/detailActions";
import { ConfirmDialog } from "../../components/dialogs";
import { ErrorAlert, PageHead, PageLoading } from "../../components/layout";
import { toast } from "../../components/toasts";
import { fullTime, parseJsonField, plural } from "../../format";
import { useAction, useLoad } from "../../hooks";
import { Link, navigate, useLocation } from "../../router";
import type { AlertRule, Channel, ChannelDetail } from "../../types";
import { ChannelForm } from "./form";
import { channelTypeLabel, target } from "./kinds";
import { Can } from "../../can";

type Conflict = { alert_rule_id: string; name: string }[];

/** The 409's details: the rules that still list the channel. */
function conflictOf(e: unknown): Conflict | null {
  if (!(e instanceof ApiError) || e.code !== "conflict" || !Array.isArray(e.details)) return null;
  return e.details.filter((d): d is Conflict[number] => typeof d === "object" && d !== null && typeof (d as Conflict[number]).alert_rule_id === "string");
}

export function ChannelDetailPage({ id }: { id: string }) {
  const { search } = useLocation();
  const loaded = useLoad(() => api.get<ChannelDetail>(`/notification-channels/${encodeURIComponent(id)}`), [id]);
  const rules = useLoad(() => api.get<{ alert_rules: AlertRule[] }>("/alert-rules"), []);
  const c = loaded.data;
  const [test, setTest] = useState<{ success: boolean; error: string | null; at: string } | null>(null);
  const testing = useAction();
  const [confirmDelete, setConfirmDelete] = useState(false);
  const [conflict, setConflict] = useState<Conflict | null>(null);
  const deleting = useAction();

  if (!c) return <PageLoading title="Notification channel" sub={<Link to="/notification-channels">← All channels</Link>} error={loaded.error} onRetry={loaded.reload} />;

  const usedBy = (rules.data?.alert_rules ?? []).filter((r) => parseJsonField<string[]>(r.channel_ids, []).includes(c.id));

  const sendTest = () =>
    testing.run(async () => {
      setTest(null);
      const r = await api.post<{ success: boolean; error: string | null }>(`/notification-channels/${encodeURIComponent(c.id)}/test`);
      setTest({ ...r, at: new Date().toISOString() });
    });

  const remove = () =>
    deleting.run(async () => {
      setConflict(null);
      try {
        await api.del(`/notification-channels/${encodeURIComponent(c.id)}`);
      } catch (e) {
        const rulesUsing = conflictOf(e);
        if (!rulesUsing) throw e;
        setConflict([...rulesUsing].sort((a, b) => a.name.localeCompare(b.name)));
        void rules.reload();
        return;
      }
      toast(`Channel “${c.name}” deleted`);
      navigate("/notification-channels");
    });

  return (
    <>
      <PageHead
        title={
          <>
            {c.name} <span className="badge info">{channelTypeLabel(c.type)}</span>
          </>
        }
        sub={<Link to="/notification-channels">← All channels</Link>}
        actions={
          <DetailActions
            onDelete={() => {
              setConflict(null);
              deleting.setError(null);
              setConfirmDelete(true);
            }}
          >
            <Can permission="write">
              <button type="button" className="btn primary" disabled={testing.busy} onClick={sendTest}>
                {testing.busy ? "Sending…" : "Send test"}
              </button>
            </Can>
          </DetailActions>
        }
      />
      {search.get("created") && !test ? (
        <div className="alert ok" role="status">
          Channel created. Send a test to check that alerts reach you, then pick the channel in an <Link to="/alert-rules">alert rule</Link>.
        </div>
      ) : null}
      <ErrorAlert error={testing.error} />
      {test ? (
        test.success ? (
          <div className="alert ok" role="status" data-testid="test-result">
            ✓ Test notification sent at {fullTime(test.at)}. Check that it arrived.
          </div>
        ) : (
          <div className="alert error" role="alert" data-testid="test-result">
            ✗ The test notification failed: {test.error}
          </div>
        )
      ) : null}

      <section className="panel" aria-label="Channel">
        <dl className="kv">
          <dt>Type</dt>
          <dd>{channelTypeLabel(c.type)}</dd>
          <dt>Sends to</dt>
          <dd className="mono" style={{ overflowWrap: "anywhere" }}>
            {target(c)}
          </dd>
          <dt>Used by</dt>
          <dd>
            {usedBy.length === 0 ? (
              <span className="muted">no alert rule yet</span>
            ) : (
              usedBy.map((r, i) => (
                <span key={r.id}>
                  {i > 0 ? ", " : ""}
                  <Link to={`/alert-rules/${r.id}`}>{r.name}</Link>
                </span>
              ))
            )}
          </dd>
          <dt>Created</dt>
          <dd>{fullTime(c.created_at)}</dd>
          <dt>Id</dt>
          <dd className="mono">{c.id}</dd>
        </dl>
      </section>

      <ChannelForm key={c.updated_at} channel={c} onSaved={() => void loaded.reload()} />

      <ConfirmDialog
        open={confirmDelete}
        title="Delete this channel?"
        confirmLabel="Delete channel"
        busy={deleting.busy}
        error={deleting.error}
        onConfirm={remove}
        onCancel={() => setConfirmDelete(false)}
      >
        {conflict ? (
          <div className="alert error" role="alert" data-testid="channel-in-use">
            <ChannelInUse name={c.name} rules={conflict} onFollow={() => setConfirmDelete(false)} />
          </div>
        ) : (
          <p>
            <strong>{c.name}</strong> is deleted; nothing is sent to it any more. {usedBy.length > 0 ? `It is still picked in ${plural(usedBy.length, "alert rule")}: remove it there first.` : ""} This cannot be undone.
          </p>
        )}
      </ConfirmDialog>
    </>
  );
}

/** The 409 in words: which rules still notify the channel, each a link to fix it. */
function ChannelInUse({ name, rules, onFollow }: { name: string; rules: Conflict; onFollow: () => void }) {
  const links = rules.map((r, i) => (
    <span key={r.alert_rule_id}>
      {i === 0 ? "" : i === rules.length - 1 ? " and " : ", "}“
      <Link to={`/alert-rules/${r.alert_rule_id}`} onClick={onFollow}>
        {r.name}
      </Link>
      ”
    </span>
  ));
  return (
    <>
      “{name}” cannot be deleted: the alert {rules.length === 1 ? "rule" : "rules"} {links} still {rules.length === 1 ? "notifies" : "notify"} it. Remove the channel from {rules.length === 1 ? "that rule" : "those rules"} (or delete{" "}
      {rules.length === 1 ? "it" : "them"}) first.
    </>
  );
}
