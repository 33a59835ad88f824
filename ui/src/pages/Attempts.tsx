import { useEffect, useState } from "react";
import { api } from "../api";
import { AttemptExchange } from "../attemptExchange";
import { AttemptWhen, listedAttemptTimes, notSentText } from "../attemptTime";
import { RefusedRetry, retryToast, useEventRetry } from "../retry";
import { ForcedBadge, StatusBadge } from "../components/badges";
import { ConfirmDialog, Modal } from "../components/dialogs";
import { FilterBar } from "../components/filterBar";
import { Field, NamedOptions, Options } from "../components/forms";
import { JobBar } from "../components/jobBar";
import { Empty, ErrorAlert, Loading, PageHead } from "../components/layout";
import { DataTable, Pager } from "../components/table";
import { Tabs } from "../components/tabs";
import { toast } from "../components/toasts";
import { fullTime, ms, plural, shortId } from "../format";
import { useAction, useInterval, useLoad } from "../hooks";
import { useJob } from "../jobs";
import { FilterSelect, ListPanel, useQueryFilters } from "../resources";
import { useDebounced, useEventStream } from "../live";
import { Link, setQuery } from "../router";
import { ATTEMPT_STATUSES, TRIGGER_TYPES, type Connection, type DeliveryAttempt, type Destination, type Pagination } from "../types";
import { Can, useCan } from "../can";

const LIMIT = 50;
const FILTERS = ["status", "destination_id", "connection_id", "trigger_type", "event_id", "is_dlq"] as const;

export function AttemptsPage() {
  const { filters, offset, key, set, setOffset } = useQueryFilters(FILTERS);
  const dlq = filters.is_dlq === "1";
  const attempts = useLoad(() => api.get<{ delivery_attempts: DeliveryAttempt[]; pagination: Pagination }>("/delivery-attempts", { ...filters, limit: LIMIT, offset }), [key]);
  const dests = useLoad(() => api.get<{ destinations: Destination[] }>("/destinations"), []);
  const conns = useLoad(() => api.get<{ connections: Connection[] }>("/connections"), []);
  const [open, setOpen] = useState<DeliveryAttempt | null>(null);
  const list = attempts.data?.delivery_attempts ?? [];
  const pg = attempts.data?.pagination;
  const anyFilter = Object.keys(filters).some((k) => k !== "is_dlq");
  const canWrite = useCan("write");

  // Deliveries in flight change by themselves: refresh while any is queued or delivering.
  const inFlight = list.some((a) => a.status === "queued" || a.status === "delivering");
  useInterval(() => void attempts.reload(), inFlight ? 2000 : null);
  // An event's status changes when its deliveries do: then the list has news (new attempts, DLQ entries).
  const refresh = useDebounced(() => {
    void attempts.reload();
    // New deliveries may name destinations and connections created since this page loaded.
    void dests.reload();
    void conns.reload();
  }, 700);
  useEventStream({ updated: refresh });

  return (
    <>
      <PageHead title="Delivery attempts" sub="Every request hookrelay made to a destination, with its response. Attempts out of retries land in the dead-letter queue (DLQ)." />
      <Tabs
        label="Attempts or dead-letter queue"
        tabs={[
          { id: "all", label: "All attempts" },
          { id: "dlq", label: "Dead-letter queue" },
        ]}
        value={dlq ? "dlq" : "all"}
        onChange={(v) => set({ is_dlq: v === "dlq" ? "1" : undefined })}
      />
      {dlq && canWrite ? <RedrivePanel destinations={dests.data?.destinations ?? []} initial={filters.destination_id} changed={attempts.data} onDone={attempts.reload} /> : null}
      <FilterBar label="Filter attempts" active={Object.keys(filters).filter((k) => k !== "is_dlq").length}>
        <FilterSelect label="Status" value={filters.status} onChange={(v) => set({ status: v })}>
          <Options values={ATTEMPT_STATUSES} />
        </FilterSelect>
        <FilterSelect label="Destination" anyLabel="All destinations" value={filters.destination_id} onChange={(v) => set({ destination_id: v })}>
          <NamedOptions items={dests.data?.destinations} />
        </FilterSelect>
        <FilterSelect label="Connection" anyLabel="All connections" value={filters.connection_id} onChange={(v) => set({ connection_id: v })}>
          <NamedOptions items={conns.data?.connections} />
        </FilterSelect>
        <FilterSelect label="Trigger" value={filters.trigger_type} onChange={(v) => set({ trigger_type: v })}>
          <Options values={TRIGGER_TYPES} />
        </FilterSelect>
        <EventFilter value={filters.event_id ?? ""} onChange={(v) => set({ event_id: v })} />
        {anyFilter ? (
          <button type="button" className="btn" onClick={() => setQuery(dlq ? { is_dlq: "1" } : {})}>
            Clear filters
          </button>
        ) : null}
      </FilterBar>
      <ListPanel
        label={dlq ? "Dead-letter queue" : "Delivery attempts"}
        loaded={attempts}
        what="Loading attempts"
        isEmpty={list.length === 0}
        empty={
          dlq ? (
            <Empty title="The dead-letter queue is empty">Deliveries that run out of retries land here, ready to be redriven once the destination is fixed.</Empty>
          ) : anyFilter ? (
            <Empty title="No attempts match these filters" />
          ) : (
            <Empty title="No deliveries yet" action={canWrite ? <Link to="/connections/new" className="btn primary">Create a connection</Link> : undefined}>
              Deliveries start once a connection links a source to a destination and an event arrives.
            </Empty>
          )
        }
      >
        <DataTable
          label={dlq ? "Dead-letter queue" : "Delivery attempts"}
          rows={list}
          rowKey={(a) => a.id}
          onRowClick={setOpen}
          columns={[
            { label: "When", render: (a) => <AttemptWhen times={listedAttemptTimes(a)} /> },
            {
              label: "Event",
              render: (a) => (
                <Link to={`/events/${a.event_id}`} className="mono">
                  {shortId(a.event_id)}
                </Link>
              ),
            },
            { label: "Destination", render: (a) => a.destination_name ?? <span className="muted">deleted</span> },
            { label: "Connection", hideNarrow: true, render: (a) => a.connection_name ?? <span className="muted">–</span> },
            {
              label: "Status",
              render: (a) => (
                <>
                  {a.is_dlq ? <span className="badge bad">DLQ</span> : <StatusBadge status={a.status} />} {a.forced ? <ForcedBadge /> : null}
                </>
              ),
            },
            { label: "Response", render: (a) => (a.response_status ? <span className="mono">{a.response_status}</span> : <span className="muted">{a.error ?? "–"}</span>) },
            { label: "Duration", className: "num", render: (a) => ms(a.duration_ms) },
            { label: "#", hideNarrow: true, render: (a) => a.attempt_number ?? "–" },
            { label: "Trigger", hideNarrow: true, render: (a) => a.trigger_type ?? "–" },
            {
              label: "Details",
              srOnly: true,
              className: "actions",
              render: (a) => (
                <button type="button" className="btn small" onClick={() => setOpen(a)} aria-label={`Details of attempt ${a.id}`}>
                  Details
                </button>
              ),
            },
          ]}
        />
        <Pager pagination={pg} offset={offset} limit={LIMIT} count={list.length} onPage={setOffset} />
      </ListPanel>
      <AttemptDetail attempt={open} onClose={() => setOpen(null)} onRetried={attempts.reload} />
    </>
  );
}

function EventFilter({ value, onChange }: { value: string; onChange: (v: string | undefined) => void }) {
  const [text, setText] = useState(value);
  useEffect(() => setText(value), [value]);
  return (
    <Field label="Event id">
      {(p) => (
        <input
          {...p}
          type="search"
          value={text}
          onChange={(e) => setText(e.target.value)}
          onBlur={() => text.trim() !== value && onChange(text.trim() || undefined)}
          onKeyDown={(e) => e.key === "Enter" && onChange(text.trim() || undefined)}
          placeholder="evt_…, then Enter"
        />
      )}
    </Field>
  );
}

/** One attempt: the request sent and the response received (or when it is due); retry its event. */
function AttemptDetail({ attempt: a, onClose, onRetried }: { attempt: DeliveryAttempt | null; onClose: () => void; onRetried: () => void }) {
  const retrying = useEventRetry(a?.event_id ?? null, (r, forced) => {
    if (r.errors.length > 0 && r.retried.length === 0) return toast(r.errors.map((e) => e.message).join("; "), "error");
    retryToast(r, forced);
    onRetried();
    onClose();
  });
  const { reset } = retrying;
  // eslint-disable-next-line react-hooks/exhaustive-deps
  useEffect(() => reset(), [a]);
  const times = a ? listedAttemptTimes(a) : null;
  return (
    <Modal open={a !== null} onClose={onClose} title="Delivery attempt" wide>
      {a && times ? (
        <div style={{ display: "grid", gap: 14 }}>
          <dl className="kv">
            <dt>Status</dt>
            <dd>
              <StatusBadge status={a.status} /> {a.is_dlq ? <span className="badge bad">DLQ since {fullTime(a.dlq_at)}</span> : null} {a.forced ? <ForcedBadge /> : null}
            </dd>
            <dt>Attempt</dt>
            <dd>
              #{a.attempt_number ?? "–"} ({a.trigger_type ?? "–"})
            </dd>
            <dt>Sent</dt>
            <dd>{times.sent ? fullTime(times.sent) : <span className="muted">{notSentText(times)}</span>}</dd>
            {times.scheduled && times.scheduled !== times.sent ? (
              <>
                <dt>Scheduled for</dt>
                <dd>{fullTime(times.scheduled)}</dd>
              </>
            ) : null}
            <dt>Queued</dt>
            <dd>{fullTime(a.created_at)}</dd>
            {a.next_retry_at ? (
              <>
                <dt>Next retry</dt>
                <dd>{fullTime(a.next_retry_at)}</dd>
              </>
            ) : null}
            <dt>Event</dt>
            <dd>
              <Link to={`/events/${a.event_id}`} className="mono" onClick={onClose}>
                {a.event_id}
              </Link>
            </dd>
            <dt>Destination</dt>
            <dd>
              <Link to={`/destinations/${a.destination_id}`} onClick={onClose}>
                {a.destination_name ?? a.destination_id}
              </Link>
              {a.connection_name ? ` via ${a.connection_name}` : ""}
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
          <AttemptExchange attempt={a} />
          <ErrorAlert error={retrying.confirming ? null : retrying.error} />
          <RefusedRetry state={retrying} />
          <div className="btn-row" style={{ justifyContent: "flex-end" }}>
            <button type="button" className="btn" onClick={onClose}>
              Close
            </button>
            <Can permission="write">
              <button type="button" className="btn primary" onClick={retrying.retry} disabled={retrying.busy}>
                {retrying.busy ? "Retrying…" : "Retry event"}
              </button>
            </Can>
          </div>
        </div>
      ) : null}
    </Modal>
  );
}

/** How many deliveries each destination has in the DLQ (a count per destination: the list's total). */
async function dlqCounts(destinations: Destination[]): Promise<Map<string, number>> {
  const totals = await Promise.all(
    destinations.map(async (d) => {
      const r = await api.get<{ pagination: Pagination }>("/delivery-attempts", { is_dlq: 1, destination_id: d.id, limit: 1 });
      return [d.id, r.pagination.total] as const;
    }),
  );
  return new Map(totals);
}

/**
 * Re-queue the DLQ of a destination once it is fixed; shows the job's progress.
 * Offers the destinations with their DLQ sizes and starts on one that has
 * entries (the filtered one when it has), so the first click redrives something.
 */
function RedrivePanel({ destinations, initial, changed, onDone }: { destinations: Destination[]; initial?: string; changed: unknown; onDone: () => void }) {
  const [destinationId, setDestinationId] = useState("");
  const [confirm, setConfirm] = useState(false);
  const { busy, error, run } = useAction();
  const [jobId, setJobId] = useState<string | null>(null);
  const { job, error: jobError } = useJob(jobId ? `/jobs/${jobId}` : null);
  const counts = useLoad(() => dlqCounts(destinations), [destinations.map((d) => d.id).join(), changed]);
  const sizes = counts.data;
  const fullest = sizes ? [...destinations].sort((x, y) => (sizes.get(y.id) ?? 0) - (sizes.get(x.id) ?? 0))[0] : undefined;
  const preferred = initial && (!sizes || (sizes.get(initial) ?? 0) > 0) ? initial : fullest && (sizes?.get(fullest.id) ?? 0) > 0 ? fullest.id : (initial ?? "");
  const chosen = destinationId || preferred;
  const name = destinations.find((d) => d.id === chosen)?.name;
  const size = sizes?.get(chosen);

  useEffect(() => {
    if (job?.status === "completed") onDone();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [job?.status]);

  const start = () =>
    run(async () => {
      const r = await api.post<{ job_id: string; total: number }>("/delivery-attempts/redrive", { destination_id: chosen });
      setJobId(r.job_id);
      setConfirm(false);
      toast(`Redriving ${plural(r.total, "delivery", "deliveries")} to ${name}`);
    });

  if (destinations.length === 0) return null;
  return (
    <section className="panel" aria-label="Redrive">
      <h2>Redrive the DLQ</h2>
      <div className="filters" style={{ marginBottom: 0 }}>
        <Field label="Destination" help={size === 0 ? `Nothing from ${name} is in the DLQ.` : undefined}>
          {(p) => (
            <select {...p} value={chosen} onChange={(e) => setDestinationId(e.target.value)}>
              {chosen === "" ? (
                <option value="" disabled>
                  Choose a destination…
                </option>
              ) : null}
              {destinations.map((d) => (
                <option key={d.id} value={d.id}>
                  {d.name}
                  {sizes ? ` (${sizes.get(d.id) ? `${(sizes.get(d.id) ?? 0).toLocaleString()} in the DLQ` : "empty"})` : ""}
                </option>
              ))}
            </select>
          )}
        </Field>
        <button type="button" className="btn primary" onClick={() => setConfirm(true)} disabled={!chosen || size === 0}>
          Redrive…
        </button>
      </div>
      {jobId ? <div style={{ marginTop: 12 }}>{job ? <JobBar job={job} /> : <Loading what="Starting" />}</div> : null}
      <ErrorAlert error={jobError ?? counts.error} />
      <ConfirmDialog open={confirm} title="Redrive the dead-letter queue?" confirmLabel={size ? `Redrive ${plural(size, "delivery", "deliveries")}` : "Redrive"} danger={false} busy={busy} error={error} onConfirm={start} onCancel={() => setConfirm(false)}>
        <p>
          Every delivery to <strong>{name}</strong> in the DLQ{size ? ` (${size.toLocaleString()})` : ""} is queued again with a fresh retry budget. Make sure the destination works again first.
        </p>
      </ConfirmDialog>
    </section>
  );
}
