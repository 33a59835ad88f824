/** One message: its payload, its delivery attempts with request and response, resending it. */
import { useState } from "react";
import { api } from "../../api";
import { AttemptWhen, listedAttemptTimes } from "../../attemptTime";
import { StatusBadge } from "../../components/badges";
import { CodeBlock } from "../../components/code";
import { Empty, PageHead, PageLoading } from "../../components/layout";
import { DataTable } from "../../components/table";
import { fullTime, ms } from "../../format";
import { useInterval, useLoad } from "../../hooks";
import { appPath, endpointIdOf, endpointPage, messagePath, type AppPlace } from "../../outbound";
import { ListPanel } from "../../resources";
import { Link } from "../../router";
import type { DeliveryAttempt, Endpoint, Message } from "../../types";
import { BackToApp } from "../backToApp";
import { AttemptDialog } from "./attemptDialog";
import { ResendPanel } from "./resend";
import { Can } from "../../can";

/** What a message's status means, in a sentence. */
const STATUS_TEXT: Record<string, string> = {
  pending: "Deliveries are outstanding: being sent, or waiting for a retry.",
  delivered: "Every endpoint it was sent to answered with a 2xx.",
  failed: "At least one endpoint kept failing until its retries were used up. Resend it once the endpoint works again.",
  ignored: "No endpoint received it: none was active, unexpired and subscribed to its event type.",
};

export function MessagePage({ place, id }: { place: AppPlace; id: string }) {
  const loaded = useLoad(() => api.get<{ message: Message }>(messagePath(place, id)), [place.app.id, id]);
  const attempts = useLoad(() => api.get<{ attempts: DeliveryAttempt[] }>(messagePath(place, id, "/attempts")), [place.app.id, id]);
  const endpoints = useLoad(() => api.get<{ endpoints: Endpoint[] }>(appPath(place, "/endpoints")), [place.app.id]);
  const [open, setOpen] = useState<DeliveryAttempt | null>(null);
  const m = loaded.data?.message;
  const list = attempts.data?.attempts ?? [];
  const working = m?.status === "pending" || list.some((a) => a.status === "queued" || a.status === "delivering");
  useInterval(
    () => {
      void loaded.reload();
      void attempts.reload();
    },
    working ? 1500 : null,
  );

  if (!m) return <PageLoading title="Message" sub={<BackToApp place={place} />} error={loaded.error} onRetry={loaded.reload} />;

  const endpointOf = (a: DeliveryAttempt) => endpoints.data?.endpoints.find((e) => e.id === endpointIdOf(a));
  const refresh = () => {
    void loaded.reload();
    void attempts.reload();
  };

  return (
    <>
      <PageHead
        title={
          <>
            <span className="mono" style={{ fontSize: "inherit" }}>
              {m.event_type}
            </span>{" "}
            <StatusBadge status={m.status} />
          </>
        }
        sub={<BackToApp place={place} />}
      />
      <section className="panel" aria-label="Message">
        <p className="muted" style={{ marginTop: 0 }}>
          {STATUS_TEXT[m.status] ?? null}
        </p>
        <dl className="kv">
          <dt>Id</dt>
          <dd className="mono">{m.id}</dd>
          <dt>Event type</dt>
          <dd className="mono">{m.event_type}</dd>
          <dt>Created</dt>
          <dd>{fullTime(m.created_at)}</dd>
          {m.updated_at !== m.created_at ? (
            <>
              <dt>Updated</dt>
              <dd>{fullTime(m.updated_at)}</dd>
            </>
          ) : null}
        </dl>
        <h3 style={{ marginTop: 14 }}>Payload</h3>
        <CodeBlock text={m.payload} label="Payload" />
      </section>

      <Can permission="write">
        <ResendPanel place={place} message={m} endpoints={endpoints.data?.endpoints} onResent={refresh} />
      </Can>

      <div className="panel-head" style={{ marginTop: 8 }}>
        <h2>Delivery attempts</h2>
      </div>
      <ListPanel
        label="Delivery attempts"
        loaded={attempts}
        what="Loading attempts"
        isEmpty={list.length === 0}
        empty={<Empty title="No attempts">{m.status === "ignored" ? "No endpoint was subscribed to this event type when it was sent. Resend it to one endpoint above." : "Attempts show up here as the message is sent."}</Empty>}
      >
        <DataTable
          label="Delivery attempts"
          rows={list}
          rowKey={(a) => a.id}
          onRowClick={setOpen}
          columns={[
            { label: "When", render: (a) => <AttemptWhen times={listedAttemptTimes(a)} /> },
            {
              label: "Endpoint",
              render: (a) => {
                const e = endpointOf(a);
                return e ? (
                  <Link to={endpointPage(place, e.id)} className="mono" style={{ overflowWrap: "anywhere" }}>
                    {e.url}
                  </Link>
                ) : (
                  <span className="mono muted" style={{ overflowWrap: "anywhere" }} title="This endpoint was deleted">
                    {a.request_url}
                  </span>
                );
              },
            },
            { label: "Status", render: (a) => (a.is_dlq ? <span className="badge bad">failed, retries used up</span> : <StatusBadge status={a.status} />) },
            { label: "Response", render: (a) => (a.response_status ? <span className="mono">{a.response_status}</span> : <span className="muted">{a.error ?? "–"}</span>) },
            { label: "Duration", className: "num", hideNarrow: true, render: (a) => ms(a.duration_ms) },
            { label: "#", hideNarrow: true, render: (a) => a.attempt_number ?? "–" },
            { label: "Trigger", hideNarrow: true, render: (a) => a.trigger_type ?? "–" },
            {
              label: "Details",
              srOnly: true,
              className: "actions",
              render: (a) => (
                <button type="button" className="btn small" onClick={() => setOpen(a)} aria-label={`Request and response of attempt ${a.attempt_number ?? ""} to ${endpointOf(a)?.url ?? a.request_url}`}>
                  Details
                </button>
              ),
            },
          ]}
        />
      </ListPanel>
      <AttemptDialog place={place} message={m} attempt={open} endpoint={open ? endpointOf(open) : undefined} onClose={() => setOpen(null)} onResent={refresh} />
    </>
  );
}
