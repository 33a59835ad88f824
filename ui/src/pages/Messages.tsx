/**
 * An application's messages, in the admin UI and in the consumer portal: the
 * list (filtered by event type, in cursor pages), sending one (admin only: a
 * portal link does not grant it), and a message's page with its payload, its
 * delivery attempts with request and response, and resending it to one
 * endpoint.
 */
import { useEffect, useState, type FormEvent } from "react";
import { api, ApiError } from "../api";
import { AttemptExchange } from "../attemptExchange";
import { AttemptWhen, listedAttemptTimes, notSentText } from "../attemptTime";
import { StatusBadge } from "../components/badges";
import { CodeBlock } from "../components/code";
import { Modal } from "../components/dialogs";
import { Field, NamedOptions } from "../components/forms";
import { Empty, ErrorAlert, PageHead, PageLoading } from "../components/layout";
import { DataTable } from "../components/table";
import { Time } from "../components/time";
import { toast } from "../components/toasts";
import { bytes, fullTime, ms, plural, shortId } from "../format";
import { useAction, useInterval, useLoad, useSubmit } from "../hooks";
import { checkJson } from "../json";
import { JsonField } from "../jsonField";
import { appPath, endpointIdOf, endpointLabel, endpointPage, isExpired, messagePage, messagePath, violations, type AppPlace, type SchemaViolation } from "../outbound";
import { ListPanel, useQueryFilters } from "../resources";
import { Link, navigate } from "../router";
import type { DeliveryAttempt, Endpoint, EventType, Message } from "../types";
import { BackToApp } from "./Endpoints";

const PAGE = 25;

/** What a message's status means, in a sentence. */
const STATUS_TEXT: Record<string, string> = {
  pending: "Deliveries are outstanding: being sent, or waiting for a retry.",
  delivered: "Every endpoint it was sent to answered with a 2xx.",
  failed: "At least one endpoint kept failing until its retries were used up. Resend it once the endpoint works again.",
  ignored: "No endpoint received it: none was active, unexpired and subscribed to its event type.",
};

function useEventTypes(place: AppPlace) {
  return useLoad(() => api.get<{ event_types: EventType[] }>(appPath(place, "/event-types")), [place.app.id]);
}

// ---------------------------------------------------------------- list

export function MessagesPanel({ place, sent }: { place: AppPlace; /** Changes when a message was sent from this page: the first page loads again. */ sent?: unknown }) {
  const { filters, key, set } = useQueryFilters(["event_type"] as const);
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors.at(-1);
  const messages = useLoad(() => api.get<{ messages: (Message | null)[]; cursor: string | null }>(appPath(place, "/messages"), { ...filters, cursor, limit: PAGE }), [place.app.id, key, cursor, sent]);
  const types = useEventTypes(place);
  useEffect(() => setCursors([]), [key, sent]);

  const rows = (messages.data?.messages ?? []).filter((m): m is Message => m !== null);
  // Statuses change as deliveries end: follow the first page while any is pending.
  const pending = cursors.length === 0 && rows.some((m) => m.status === "pending");
  useInterval(() => void messages.reload(), pending ? 2000 : null);

  return (
    <>
      <div className="panel-head">
        <h2>Messages</h2>
        <button type="button" className="btn small" onClick={() => void messages.reload()} disabled={messages.loading}>
          Refresh
        </button>
      </div>
      <form className="filters" role="search" aria-label="Filter messages" onSubmit={(e) => e.preventDefault()}>
        <Field label="Event type">
          {(p) => (
            <select {...p} value={filters.event_type ?? ""} onChange={(e) => set({ event_type: e.target.value || undefined })}>
              <option value="">All event types</option>
              {filters.event_type && !types.data?.event_types.some((t) => t.name === filters.event_type) ? <option value={filters.event_type}>{filters.event_type}</option> : null}
              <NamedOptions items={types.data?.event_types.map((t) => ({ id: t.name, name: t.name }))} />
            </select>
          )}
        </Field>
      </form>
      <ListPanel
        label="Messages"
        loaded={messages}
        what="Loading messages"
        isEmpty={rows.length === 0 && cursors.length === 0}
        empty={
          filters.event_type ? (
            <Empty title={`No ${filters.event_type} messages`}>Choose another event type, or all of them.</Empty>
          ) : (
            <Empty title="No messages yet">
              {place.portal
                ? "Webhooks sent to your endpoints show up here, each with every delivery attempt and the response your endpoint gave."
                : `Send one below, or with POST /v1/applications/${place.app.uid}/messages (hookrelay messages send ${place.app.uid} --type … --data @payload.json).`}
            </Empty>
          )
        }
      >
        <DataTable
          label="Messages"
          rows={rows}
          rowKey={(m) => m.id}
          onRowClick={(m) => navigate(messagePage(place, m.id))}
          columns={[
            {
              label: "Event type",
              render: (m) => (
                <Link to={messagePage(place, m.id)} className="mono">
                  {m.event_type}
                </Link>
              ),
            },
            { label: "Message", hideNarrow: true, render: (m) => <span className="mono muted">{shortId(m.id)}</span> },
            { label: "Status", render: (m) => <StatusBadge status={m.status} /> },
            { label: "Size", className: "num", hideNarrow: true, render: (m) => bytes(new TextEncoder().encode(m.payload).length) },
            { label: "Created", render: (m) => <Time iso={m.created_at} /> },
          ]}
        />
        <div className="pager">
          <span>
            Page {cursors.length + 1}
            {rows.length > 0 ? ` · ${plural(rows.length, "message")}` : ""}
          </span>
          <span className="btn-row">
            <button type="button" className="btn small" disabled={cursors.length === 0} onClick={() => setCursors((cs) => cs.slice(0, -1))}>
              Newer
            </button>
            <button
              type="button"
              className="btn small"
              disabled={!messages.data?.cursor}
              onClick={() => {
                const next = messages.data?.cursor;
                if (next) setCursors((cs) => [...cs, next]);
              }}
            >
              Older
            </button>
          </span>
        </div>
      </ListPanel>
    </>
  );
}

// ---------------------------------------------------------------- send (admin)

export function SendMessagePanel({ place, onSent }: { place: AppPlace; onSent: (m: Message) => void }) {
  const types = useEventTypes(place);
  const [eventType, setEventType] = useState("");
  const [payload, setPayload] = useState('{\n  "id": "ord_1001",\n  "total": 4200\n}');
  const [key, setKey] = useState("");
  const [sent, setSent] = useState<Message | null>(null);
  const [rejected, setRejected] = useState<{ message: string; errors: SchemaViolation[] } | null>(null);
  const { busy, fieldErrors, formError, submit, setFieldErrors } = useSubmit();

  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    setSent(null);
    setRejected(null);
    const errors: Record<string, string> = {};
    if (!eventType.trim()) errors.event_type = "Name the message's event type, e.g. order.created";
    const parsed = checkJson(payload);
    if (!parsed.ok || parsed.empty) errors.payload = parsed.ok ? "Write the JSON payload to send" : parsed.error;
    if (Object.keys(errors).length > 0) return setFieldErrors(errors);
    const res = await submit(async () => {
      try {
        return await api.post<{ message: Message }>(appPath(place, "/messages"), { event_type: eventType.trim(), payload: parsed.ok ? parsed.value : null, ...(key.trim() ? { id: key.trim() } : {}) });
      } catch (err) {
        // A schema refusal lists what is wrong with the payload: shown under it, not as one line.
        if (err instanceof ApiError && err.code === "schema_violation") {
          setRejected({ message: err.message, errors: violations(err) });
          return undefined;
        }
        throw err;
      }
    }, ["event_type", "payload", "id"]);
    if (res) {
      setSent(res.message);
      onSent(res.message);
    }
  };

  return (
    <form className="panel form" onSubmit={onSubmit} aria-label="Send a message" noValidate>
      <h2>Send a message</h2>
      <p className="muted" style={{ margin: 0 }}>
        Sent to every active endpoint of {place.app.name} whose event types include it, signed with each endpoint's secret. An event type with a JSON Schema checks the payload first.
      </p>
      <ErrorAlert error={formError} />
      <div className="form-grid">
        <Field label="Event type" error={fieldErrors.event_type}>
          {(p) => <input {...p} type="text" name="event_type" list="send-event-types" value={eventType} onChange={(e) => setEventType(e.target.value)} placeholder="order.created" />}
        </Field>
        <Field label="Idempotency key (optional)" error={fieldErrors.id} help="Sending the same key again returns the first message and sends nothing.">
          {(p) => <input {...p} type="text" name="id" value={key} onChange={(e) => setKey(e.target.value)} placeholder="order-1001-created" />}
        </Field>
      </div>
      <datalist id="send-event-types">
        {types.data?.event_types.map((t) => (
          <option key={t.id} value={t.name} />
        ))}
      </datalist>
      <JsonField label="Payload" name="payload" rows={6} value={payload} onChange={setPayload} error={fieldErrors.payload} />
      {rejected ? (
        <div className="alert error" role="alert" data-testid="schema-violation">
          {rejected.message}
          {rejected.errors.length > 0 ? (
            <ul className="violations">
              {rejected.errors.map((v, i) => (
                <li key={i}>
                  <code>{v.path || "(the payload)"}</code> {v.message}
                </li>
              ))}
            </ul>
          ) : null}
        </div>
      ) : null}
      {sent ? (
        <div className="alert ok" role="status">
          Message{" "}
          <Link to={messagePage(place, sent.id)} className="mono">
            {sent.id}
          </Link>{" "}
          accepted: <StatusBadge status={sent.status} />
        </div>
      ) : null}
      <div className="btn-row">
        <button type="submit" className="btn primary" disabled={busy || place.app.status !== "active"} title={place.app.status !== "active" ? "The application is disabled: enable it to send" : undefined}>
          {busy ? "Sending…" : "Send message"}
        </button>
      </div>
    </form>
  );
}

// ---------------------------------------------------------------- one message

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

      <ResendPanel place={place} message={m} endpoints={endpoints.data?.endpoints} onResent={refresh} />

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

function useResend(place: AppPlace, message: Message, onResent: () => void) {
  const { busy, error, setError, run } = useAction();
  const resend = (endpoint: Endpoint) =>
    run(async () => {
      await api.post(messagePath(place, message.id, "/resend"), { endpoint_id: endpoint.id });
      toast(`Resending to ${endpointLabel(endpoint)}`);
      onResent();
    });
  return { busy, error, setError, resend };
}

/** Send the message again to one endpoint (a new delivery with a fresh retry budget). */
function ResendPanel({ place, message, endpoints, onResent }: { place: AppPlace; message: Message; endpoints: Endpoint[] | undefined; onResent: () => void }) {
  const [chosen, setChosen] = useState("");
  const { busy, error, resend } = useResend(place, message, onResent);
  const usable = (endpoints ?? []).filter((e) => e.status === "active" && !isExpired(e));
  const endpoint = usable.find((e) => e.id === chosen) ?? (usable.length === 1 ? usable[0] : undefined);
  if (endpoints && endpoints.length === 0) return null;
  return (
    <section className="panel" aria-label="Resend">
      <h2>Resend</h2>
      <p className="muted" style={{ marginTop: 0 }}>
        Sends this message to one endpoint again, whatever happened before (a failed delivery leaves the failed state). Disabled and expired endpoints are not offered.
      </p>
      <ErrorAlert error={error} />
      <div className="filters" style={{ marginBottom: 0 }}>
        <Field label="Endpoint">
          {(p) => (
            <select {...p} value={endpoint?.id ?? ""} onChange={(e) => setChosen(e.target.value)}>
              {endpoint ? null : (
                <option value="" disabled>
                  {usable.length === 0 ? "No active endpoint" : "Choose an endpoint…"}
                </option>
              )}
              <NamedOptions items={usable.map((e) => ({ id: e.id, name: e.description ? `${e.description} (${e.url})` : e.url }))} />
            </select>
          )}
        </Field>
        <button type="button" className="btn primary" disabled={!endpoint || busy} onClick={() => endpoint && resend(endpoint)}>
          {busy ? "Resending…" : "Resend"}
        </button>
      </div>
    </section>
  );
}

/** One attempt: the request sent (headers and the payload as its body) and the response received; resend to its endpoint. */
function AttemptDialog({
  place,
  message,
  attempt: a,
  endpoint,
  onClose,
  onResent,
}: {
  place: AppPlace;
  message: Message;
  attempt: DeliveryAttempt | null;
  endpoint: Endpoint | undefined;
  onClose: () => void;
  onResent: () => void;
}) {
  const { busy, error, setError, resend } = useResend(place, message, () => {
    onResent();
    onClose();
  });
  useEffect(() => setError(null), [a, setError]);
  const times = a ? listedAttemptTimes(a) : null;
  const notSent = times !== null && times.sent === null;
  const canResend = endpoint !== undefined && endpoint.status === "active" && !isExpired(endpoint);
  return (
    <Modal open={a !== null} onClose={onClose} title="Delivery attempt" wide>
      {a && times ? (
        <div style={{ display: "grid", gap: 14 }}>
          <dl className="kv">
            <dt>Status</dt>
            <dd>
              <StatusBadge status={a.status} /> {a.is_dlq ? <span className="badge bad">retries used up {fullTime(a.dlq_at)}</span> : null}
            </dd>
            <dt>Attempt</dt>
            <dd>
              #{a.attempt_number ?? "–"} ({a.trigger_type ?? "–"})
            </dd>
            <dt>Sent</dt>
            <dd>{times.sent ? fullTime(times.sent) : <span className="muted">{notSentText(times)}</span>}</dd>
            {a.next_retry_at ? (
              <>
                <dt>Next retry</dt>
                <dd>{fullTime(a.next_retry_at)}</dd>
              </>
            ) : null}
            <dt>Endpoint</dt>
            <dd>
              {endpoint ? (
                <Link to={endpointPage(place, endpoint.id)} onClick={onClose} className="mono">
                  {endpoint.url}
                </Link>
              ) : (
                <span className="muted">deleted</span>
              )}
            </dd>
            {a.error ? (
              <>
                <dt>Error</dt>
                <dd>
                  <span className="mono">{a.error}</span> {a.error_detail ? <span>{a.error_detail}</span> : null}
                </dd>
              </>
            ) : null}
          </dl>
          <AttemptExchange attempt={a} requestBody={message.payload} />
          <ErrorAlert error={error} />
          <div className="btn-row" style={{ justifyContent: "flex-end" }}>
            <button type="button" className="btn" onClick={onClose}>
              Close
            </button>
            <button
              type="button"
              className="btn primary"
              disabled={!canResend || busy}
              title={canResend ? undefined : "The endpoint is deleted, disabled or expired"}
              onClick={() => endpoint && resend(endpoint)}
            >
              {busy ? "Resending…" : "Resend to this endpoint"}
            </button>
          </div>
        </div>
      ) : null}
    </Modal>
  );
}
