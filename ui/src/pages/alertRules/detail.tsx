/** One alert rule: its settings to edit, enable or disable it, delete it, and what it sent. */
import { useState } from "react";
import { api } from "../../api";
import { DetailActions } from "../../components/detailActions";
import { ConfirmDialog } from "../../components/dialogs";
import { ErrorAlert, PageHead, PageLoading } from "../../components/layout";
import { Time } from "../../components/time";
import { toast } from "../../components/toasts";
import { fullTime, num, parseJsonField, plural } from "../../format";
import { useAction, useInterval, useLoad } from "../../hooks";
import { useDeleteResource } from "../../resources";
import { Link } from "../../router";
import type { AlertHistoryEntry, AlertRule } from "../../types";
import { RuleForm } from "./form";
import { HistoryPanel } from "./history";
import { ruleSentence, ruleTypeLabel } from "./kinds";
import { EnabledBadge } from "./list";
import { useLookups } from "./lookups";

export function AlertRuleDetailPage({ id }: { id: string }) {
  const loaded = useLoad(() => api.get<{ alert_rule: AlertRule; history: AlertHistoryEntry[] }>(`/alert-rules/${encodeURIComponent(id)}`), [id]);
  const lookups = useLookups();
  const rule = loaded.data?.alert_rule;
  const deletion = useDeleteResource("/alert-rules", "Alert rule", rule ?? null);
  const { busy, error, run } = useAction();
  const [historyStamp, setHistoryStamp] = useState(0);
  // Rules fire in the background: show new triggers without a reload.
  useInterval(() => {
    void loaded.reload();
    setHistoryStamp((s) => s + 1);
  }, 5000);

  if (!rule || !lookups.ready) return <PageLoading title="Alert rule" sub={<Link to="/alert-rules">← All alert rules</Link>} error={loaded.error ?? lookups.error} onRetry={loaded.reload} />;

  const setEnabled = (enabled: boolean) =>
    run(async () => {
      const res = await api.patch<{ alert_rule: AlertRule }>(`/alert-rules/${rule.id}`, { enabled });
      loaded.setData((d) => (d ? { ...d, alert_rule: res.alert_rule } : d));
      toast(enabled ? "Alert rule enabled" : "Alert rule disabled");
    });

  const channelIds = parseJsonField<string[]>(rule.channel_ids, []);
  const config = parseJsonField<Record<string, unknown>>(rule.rule_config, {});

  return (
    <>
      <PageHead
        title={
          <>
            {rule.name} <EnabledBadge rule={rule} />
          </>
        }
        sub={<Link to="/alert-rules">← All alert rules</Link>}
        actions={<DetailActions moves={[{ label: rule.enabled ? "Disable" : "Enable", to: rule.enabled !== 1 }]} busy={busy} onMove={setEnabled} onDelete={deletion.ask} />}
      />
      <ErrorAlert error={error} />
      {rule.enabled ? null : <div className="alert warn">Disabled: the rule is not checked and never fires until you enable it.</div>}
      <section className="panel" aria-label="Alert rule">
        <p style={{ marginTop: 0 }} data-testid="rule-summary">
          {ruleSentence(rule.rule_type, config, lookups.namesOf(rule))}
        </p>
        {rule.description ? <p className="muted">{rule.description}</p> : null}
        <dl className="kv">
          <dt>Type</dt>
          <dd>{ruleTypeLabel(rule.rule_type)}</dd>
          <dt>Last triggered</dt>
          <dd>{rule.last_triggered_at ? <>{fullTime(rule.last_triggered_at)} (<Time iso={rule.last_triggered_at} />)</> : <span className="muted">never</span>}</dd>
          <dt>Triggers</dt>
          <dd>{num(rule.trigger_count)}</dd>
          <dt>Notifies</dt>
          <dd>
            {channelIds.length === 0 ? (
              <span className="muted">no channel</span>
            ) : (
              channelIds.map((cid, i) => (
                <span key={cid}>
                  {i > 0 ? ", " : ""}
                  <Link to={`/notification-channels/${cid}`}>{lookups.channels?.find((c) => c.id === cid)?.name ?? cid}</Link>
                </span>
              ))
            )}
          </dd>
          <dt>Cooldown</dt>
          <dd>{rule.cooldown_minutes === 0 ? "none: every time it fires" : plural(rule.cooldown_minutes, "minute")}</dd>
        </dl>
      </section>
      <HistoryPanel ruleId={rule.id} stamp={`${historyStamp}:${rule.trigger_count}`} />
      <RuleForm key={rule.updated_at} rule={rule} lookups={lookups} onSaved={(saved) => loaded.setData((d) => (d ? { ...d, alert_rule: saved } : d))} />

      <ConfirmDialog {...deletion.dialog} title="Delete this alert rule?" confirmLabel="Delete alert rule">
        <p>
          <strong>{rule.name}</strong> stops watching and is deleted with its history ({plural(rule.trigger_count, "trigger")}). Its channels stay. This cannot be undone.
        </p>
      </ConfirmDialog>
    </>
  );
}
