/** What an alert rule sent: each firing with the channels it reached and what it reported. */
import { useState, type ReactNode } from "react";
import { api } from "../../api";
import { Empty, ErrorAlert } from "../../components/layout";
import { Pager } from "../../components/table";
import { Time } from "../../components/time";
import { fullTime, parseJsonField, plural } from "../../format";
import { useLoad } from "../../hooks";
import { Link } from "../../router";
import type { AlertHistoryEntry, ChannelNotified, Pagination } from "../../types";
import { channelTypeLabel } from "../notificationChannels/kinds";

const HISTORY_LIMIT = 20;

export function HistoryPanel({ ruleId, stamp }: { ruleId: string; stamp: string }) {
  const [offset, setOffset] = useState(0);
  const history = useLoad(() => api.get<{ history: AlertHistoryEntry[]; pagination: Pagination }>(`/alert-rules/${ruleId}/history`, { limit: HISTORY_LIMIT, offset }), [ruleId, offset, stamp]);
  const entries = history.data?.history ?? [];
  return (
    <section className="panel" aria-label="History">
      <div className="panel-head">
        <h2>History</h2>
        <span className="muted">each time the rule fired or resolved, newest first</span>
      </div>
      <ErrorAlert error={history.error} onRetry={history.reload} />
      {history.loading && !history.data ? null : entries.length === 0 ? (
        <Empty title="Not fired yet">When the rule fires, each trigger shows here with why, the numbers measured and how each channel took it.</Empty>
      ) : (
        <ol className="timeline alert-history">
          {entries.map((e) => (
            <HistoryItem key={e.id} entry={e} />
          ))}
        </ol>
      )}
      {(history.data?.pagination.total ?? 0) > HISTORY_LIMIT ? <Pager pagination={history.data?.pagination} offset={offset} limit={HISTORY_LIMIT} count={entries.length} onPage={setOffset} /> : null}
    </section>
  );
}

const label = (key: string) => key.replace(/_/g, " ");

function HistoryItem({ entry }: { entry: AlertHistoryEntry }) {
  const data = parseJsonField<Record<string, unknown>>(entry.trigger_data, {});
  const outcomes = parseJsonField<ChannelNotified[]>(entry.channels_notified, []);
  const failed = outcomes.filter((o) => !o.success).length;
  // A firing rule whose condition cleared sent a resolved notification (docs/alerts.md).
  const resolved = entry.status === "resolved";
  return (
    <li className={failed > 0 ? "bad" : "ok"} aria-label={`${resolved ? "Resolved" : "Fired"} ${fullTime(entry.created_at)}`}>
      <div className="tl-head">
        {resolved ? <span className="badge ok">resolved</span> : <span className="badge warn">fired</span>}
        <Time iso={entry.created_at} />
        <span className="muted">{fullTime(entry.created_at)}</span>
      </div>
      <p style={{ margin: "0 0 8px" }}>{entry.trigger_reason}</p>
      {Object.keys(data).length > 0 ? (
        <dl className="kv trigger-data">
          {Object.entries(data).map(([k, v]) => (
            <FragmentKV key={k} k={k} v={v} />
          ))}
        </dl>
      ) : null}
      <div className="tl-note muted" style={{ marginTop: 8 }}>
        {outcomes.length === 0 ? "No channel to notify." : failed > 0 ? `${failed} of ${plural(outcomes.length, "channel")} failed:` : `Notified ${plural(outcomes.length, "channel")}:`}
      </div>
      {outcomes.length > 0 ? (
        <ul className="outcomes">
          {outcomes.map((o) => (
            <li key={o.channel_id}>
              {o.success ? <span className="badge ok">sent</span> : <span className="badge bad">failed</span>} {o.channel_name !== null ? <Link to={`/notification-channels/${o.channel_id}`}>{o.channel_name}</Link> : <span className="muted">a deleted channel</span>}{" "}
              <span className="muted">
                ({o.channel_type ? channelTypeLabel(o.channel_type) : "?"}
                {o.attempts > 1 ? `, ${plural(o.attempts, "try", "tries")}` : ""})
              </span>
              {o.error ? <div className="outcome-error">{o.error}</div> : null}
            </li>
          ))}
        </ul>
      ) : null}
    </li>
  );
}

function FragmentKV({ k, v }: { k: string; v: unknown }) {
  let value: ReactNode = typeof v === "string" || typeof v === "number" || typeof v === "boolean" ? String(v) : JSON.stringify(v);
  if (k === "issue_id" && typeof v === "string") value = <Link to={`/issues/${v}`} className="mono">{v}</Link>;
  if (k === "destination_id" && typeof v === "string") value = <Link to={`/destinations/${v}`} className="mono">{v}</Link>;
  return (
    <>
      <dt>{label(k)}</dt>
      <dd>{value}</dd>
    </>
  );
}
