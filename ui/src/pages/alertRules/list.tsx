/** The alert rules page: every rule as a sentence, with its channels and when it last fired. */
import { api } from "../../api";
import { ErrorAlert } from "../../components/layout";
import { Time } from "../../components/time";
import { toast } from "../../components/toasts";
import { num, parseJsonField } from "../../format";
import { useAction, useInterval, useLoad } from "../../hooks";
import { ResourceListPage } from "../../resources";
import { Link } from "../../router";
import type { AlertRule } from "../../types";
import { ruleSentence, ruleTypeLabel } from "./kinds";
import { useLookups } from "./lookups";
import { useCan } from "../../can";

export function EnabledBadge({ rule }: { rule: AlertRule }) {
  return rule.enabled ? <span className="badge ok">enabled</span> : <span className="badge">disabled</span>;
}

export function AlertRulesPage() {
  const rules = useLoad(() => api.get<{ alert_rules: AlertRule[] }>("/alert-rules"), []);
  const lookups = useLookups();
  useInterval(() => void rules.reload(), 15_000);
  const { busy, error, run } = useAction();
  const canWrite = useCan("write");

  const replace = (rule: AlertRule) => rules.setData((d) => (d ? { alert_rules: d.alert_rules.map((r) => (r.id === rule.id ? rule : r)) } : d));
  // The switch moves at once; a refusal puts it back.
  const toggle = (rule: AlertRule, enabled: boolean) =>
    run(async () => {
      replace({ ...rule, enabled: enabled ? 1 : 0 });
      try {
        replace((await api.patch<{ alert_rule: AlertRule }>(`/alert-rules/${rule.id}`, { enabled })).alert_rule);
      } catch (e) {
        replace(rule);
        throw e;
      }
      toast(`“${rule.name}” ${enabled ? "enabled" : "disabled"}`);
    });

  return (
    <>
      <ErrorAlert error={error} />
      <ResourceListPage
        title="Alert rules"
        noun="alert rule"
        path="/alert-rules"
        sub="Rules watch failure rates, delivery times, the dead-letter queue, event volume and new issues, and notify your channels when something is wrong."
        emptyText="An alert rule checks something every 30 seconds (or the moment an issue opens) and, when it fires, notifies the channels you pick: a webhook, Slack, Discord or email."
        loaded={rules}
        rows={rules.data?.alert_rules}
        columns={[
          {
            label: "Name",
            render: (r) => (
              <>
                <Link to={`/alert-rules/${r.id}`}>{r.name}</Link>
                <div className="muted" style={{ fontSize: 12 }}>
                  {ruleSentence(r.rule_type, parseJsonField(r.rule_config, {}), lookups.namesOf(r))}
                </div>
              </>
            ),
          },
          { label: "Type", render: (r) => ruleTypeLabel(r.rule_type) },
          {
            label: "Channels",
            hideNarrow: true,
            render: (r) => {
              const ids = parseJsonField<string[]>(r.channel_ids, []);
              if (ids.length === 0) return <span className="muted">none</span>;
              return ids.map((id) => lookups.channels?.find((c) => c.id === id)?.name ?? id).join(", ");
            },
          },
          {
            label: "Enabled",
            render: (r) => (
              <label className="check">
                <input type="checkbox" role="switch" checked={r.enabled === 1} disabled={busy || !canWrite} onChange={(e) => toggle(r, e.target.checked)} aria-label={`Enabled: ${r.name}`} />
                {r.enabled ? "on" : "off"}
              </label>
            ),
          },
          { label: "Last triggered", render: (r) => <Time iso={r.last_triggered_at} /> },
          { label: "Triggers", className: "num", render: (r) => num(r.trigger_count) },
        ]}
      />
    </>
  );
}
