/** One event: its summary, headers and body as received, its delivery attempts, retrying it. */
import { useMemo, useState } from "react";
import { api } from "../../api";
import { AttemptWhen, summaryAttemptTimes } from "../../attemptTime";
import { RefusedRetry, retryToast, useEventRetry, type RetryResult } from "../../retry";
import { ForcedBadge, StatusBadge } from "../../components/badges";
import { CopyButton } from "../../components/copy";
import { Empty, ErrorAlert, PageHead, PageLoading } from "../../components/layout";
import { DataTable } from "../../components/table";
import { Time } from "../../components/time";
import { bytes, fullTime, ms, prettyJson, shortId } from "../../format";
import { useInterval, useLoad } from "../../hooks";
import { Link } from "../../router";
import type { Destination, EventDetail, Source } from "../../types";
import { Can } from "../../can";

export function EventDetailPage({ id }: { id: string }) {
  const ev = useLoad(() => api.get<EventDetail>(`/events/${encodeURIComponent(id)}`), [id]);
  const dests = useLoad(() => api.get<{ destinations: Destination[] }>("/destinations"), []);
  const destName = (did: string) => dests.data?.destinations.find((d) => d.id === did)?.name;
  const [retry, setRetry] = useState<RetryResult | null>(null);
  const [pollUntil, setPollUntil] = useState(0);
  const [showRaw, setShowRaw] = useState(false);
  const e = ev.data;

  // While deliveries are outstanding (and for a few seconds after a retry), look again every second.
  const outstanding = !!e && (e.status === "pending" || e.delivery_attempts.some((a) => a.status === "queued" || a.status === "delivering"));
  useInterval(() => void ev.reload(), outstanding || Date.now() < pollUntil ? 1000 : null);

  const body = useMemo(() => (e ? (e.body_encoding === "base64" ? { text: e.body, isJson: false } : prettyJson(e.body)) : { text: "", isJson: false }), [e]);

  const retrying = useEventRetry(id, (r, forced) => {
    setRetry(r);
    setPollUntil(Date.now() + 5_000);
    retryToast(r, forced);
    void ev.reload();
  });

  if (!e) return <PageLoading title="Event" sub={<Link to="/events">← All events</Link>} error={ev.error} onRetry={ev.reload} />;

  const headerRows = Object.entries(e.headers).sort(([a], [b]) => a.localeCompare(b));

  return (
    <>
      <PageHead
        title={
          <>
            <span className="mono" style={{ fontSize: 18 }}>
              {e.id}
            </span>{" "}
            <StatusBadge status={e.status} />
          </>
        }
        sub={<Link to="/events">← All events</Link>}
        actions={
          <Can permission="write">
            <button type="button" className="btn primary" onClick={retrying.retry} disabled={retrying.busy}>
              {retrying.busy ? "Retrying…" : "Retry"}
            </button>
          </Can>
        }
      />
      <ErrorAlert error={retrying.confirming ? null : retrying.error} />
      <RefusedRetry state={retrying} />
      {retry && retry.errors.length > 0 ? (
        <div className="alert warn" role="status">
          {retry.errors.map((x) => (
            <div key={x.connection_id}>{x.message}</div>
          ))}
        </div>
      ) : null}
      {retry && retry.retried.length === 0 && retry.errors.length === 0 ? (
        <div className="alert info" role="status">
          No connection leads from this source to a destination. <Link to="/connections/new">Create a connection</Link> to deliver its events.
        </div>
      ) : null}

      <div className="grid-2">
        <section className="panel" aria-label="Summary">
          <h2>Summary</h2>
          <dl className="kv">
            <dt>Source</dt>
            <dd>{e.source_name ? <Link to={`/sources/${e.source_id}`}>{e.source_name}</Link> : <span className="mono">{e.source_id}</span>}</dd>
            <dt>Received</dt>
            <dd>
              {fullTime(e.received_at)} (<Time iso={e.received_at} />)
            </dd>
            <dt>Request</dt>
            <dd className="mono">
              {e.method} {e.path ?? ""}
              {e.query ? `?${e.query}` : ""}
            </dd>
            {e.event_type ? (
              <>
                <dt>Type</dt>
                <dd>{e.event_type}</dd>
              </>
            ) : null}
            <dt>Content</dt>
            <dd>
              {e.content_type ?? "no content type"} · {bytes(e.payload_size)}
            </dd>
            <dt>From</dt>
            <dd className="mono">{e.source_ip ?? "–"}</dd>
            <dt>Signature</dt>
            <dd>
              <StatusBadge status={e.verification_status} /> {e.verification_error ? <span className="muted">{e.verification_error}</span> : null}
            </dd>
            <dt>Dedup</dt>
            <dd>
              <StatusBadge status={e.dedup_status} /> {e.dedup_key ? <span className="muted mono">{e.dedup_key}</span> : null}
              {e.duplicate_of ? (
                <>
                  {" "}
                  duplicate of <Link to={`/events/${e.duplicate_of}`}>{shortId(e.duplicate_of)}</Link>
                </>
              ) : null}
            </dd>
          </dl>
          {e.schema_errors && e.schema_errors.length > 0 ? (
            <div className="alert warn" style={{ marginTop: 12, marginBottom: 0 }}>
              <strong>Schema violations</strong>
              <ul style={{ margin: "4px 0 0", paddingLeft: 18 }}>
                {e.schema_errors.map((s, i) => (
                  <li key={i}>
                    <span className="mono">{s.path || "(root)"}</span> {s.message}
                  </li>
                ))}
              </ul>
            </div>
          ) : null}
        </section>

        <section className="panel" aria-label="Headers">
          <h2>Headers</h2>
          <dl className="kv mono" style={{ fontSize: 12 }}>
            {headerRows.map(([k, v]) => (
              <div key={k} style={{ display: "contents" }}>
                <dt>{k}</dt>
                <dd>{v}</dd>
              </div>
            ))}
          </dl>
        </section>
      </div>

      <section className="panel" aria-label="Body">
        <div className="panel-head">
          <h2>Body {e.body_encoding === "base64" ? <span className="badge">base64</span> : body.isJson ? <span className="badge">JSON</span> : null}</h2>
          <div className="btn-row">
            {body.isJson ? (
              <button type="button" className="btn small" onClick={() => setShowRaw((r) => !r)} aria-pressed={showRaw}>
                {showRaw ? "Pretty" : "Raw"}
              </button>
            ) : null}
            <CopyButton text={showRaw ? e.body : body.text} label="Copy body" />
          </div>
        </div>
        {e.body === "" ? <p className="muted">Empty body.</p> : <pre className="code" data-testid="event-body">{showRaw ? e.body : body.text}</pre>}
      </section>

      <section className="panel flush" aria-label="Delivery attempts">
        <div className="panel-head" style={{ padding: "14px 16px 0" }}>
          <h2>Delivery attempts</h2>
          <Link to={`/attempts?event_id=${e.id}`}>Open in delivery attempts →</Link>
        </div>
        {e.status === "rejected" ? <RejectedNote event={e} /> : null}
        {e.delivery_attempts.length === 0 ? (
          e.status === "rejected" ? null : (
            <Empty title="No deliveries yet">
              {e.status === "ignored" ? "No enabled connection matched this event." : "Connect this source to a destination to deliver its events."}{" "}
              <Link to={`/connections/new?source_id=${e.source_id}`}>Create a connection</Link>
            </Empty>
          )
        ) : (
          <DataTable
            label="Delivery attempts"
            rows={e.delivery_attempts}
            rowKey={(a) => a.id}
            columns={[
              { label: "#", render: (a) => a.attempt_number ?? "–" },
              {
                label: "Status",
                render: (a) => (
                  <>
                    {a.is_dlq ? <span className="badge bad">DLQ</span> : <StatusBadge status={a.status} />} {a.forced ? <ForcedBadge /> : null}
                  </>
                ),
              },
              { label: "Response", render: (a) => (a.status_code ? <span className="mono">{a.status_code}</span> : (a.error ?? "–")) },
              { label: "Latency", className: "num", render: (a) => ms(a.latency_ms) },
              { label: "Trigger", render: (a) => a.trigger_type ?? "–" },
              { label: "Destination", render: (a) => <Link to={`/destinations/${a.destination_id}`}>{destName(a.destination_id) ?? shortId(a.destination_id)}</Link> },
              { label: "When", render: (a) => <AttemptWhen times={summaryAttemptTimes(a)} /> },
            ]}
          />
        )}
      </section>
    </>
  );
}

/** Why a rejected event was not delivered, from its verification fields: the signature check or the schema. */
function RejectedNote({ event: e }: { event: EventDetail }) {
  const signature = e.verification_status === "failed";
  const schema = !signature && (e.schema_errors?.length ?? 0) > 0;
  return (
    <div className="alert warn" role="note" data-testid="rejected-note" style={{ margin: "12px 16px" }}>
      <strong>Not delivered: this event was rejected.</strong>{" "}
      {signature ? (
        <>
          Its signature did not verify{e.verification_error ? <> ({e.verification_error})</> : null}, so it may not come from the provider at all.
        </>
      ) : schema ? (
        <>Its body does not match the source's JSON Schema (see the violations in the summary).</>
      ) : (
        <>It failed the source's checks.</>
      )}{" "}
      hookrelay never delivers a rejected event on its own, and retries skip it. If you have checked the payload and trust it, <strong>Retry</strong> offers to deliver it anyway.
    </div>
  );
}
