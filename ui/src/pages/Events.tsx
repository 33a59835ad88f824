import { useEffect, useMemo, useRef, useState } from "react";
import { api, withQuery } from "../api";
import { AttemptWhen, summaryAttemptTimes } from "../attemptTime";
import { RefusedRetry, retryToast, useEventRetry, type RetryResult } from "../retry";
import { ForcedBadge, StatusBadge } from "../components/badges";
import { CopyButton } from "../components/copy";
import { ConfirmDialog } from "../components/dialogs";
import { FilterBar } from "../components/filterBar";
import { Field, NamedOptions, Options } from "../components/forms";
import { JobBar } from "../components/jobBar";
import { Empty, ErrorAlert, Loading, PageHead, PageLoading } from "../components/layout";
import { DataTable, Pager } from "../components/table";
import { Time } from "../components/time";
import { toast } from "../components/toasts";
import { bytes, fromLocalInput, fullTime, ms, plural, prettyJson, shortId, toLocalInput } from "../format";
import { useAction, useInterval, useLoad } from "../hooks";
import { useJob } from "../jobs";
import { FilterSelect, ListPanel, useQueryFilters } from "../resources";
import { useEventStream } from "../live";
import { Link, navigate, setQuery } from "../router";
import { DEDUP_STATUSES, EVENT_STATUSES, METHODS, VERIFICATION_STATUSES, type Destination, type EventDetail, type EventListItem, type Pagination, type Source } from "../types";

const LIMIT = 50;
const FILTERS = ["source_id", "status", "verification_status", "dedup_status", "method", "search", "after", "before"] as const;
type Filters = Partial<Record<(typeof FILTERS)[number], string>>;

/** Does a live event belong on the first page under these filters? (search and before cannot be checked here) */
function matches(e: EventListItem, f: Filters) {
  if (f.search || f.before) return false;
  if (f.source_id && e.source_id !== f.source_id) return false;
  if (f.status && !f.status.split(",").includes(e.status)) return false;
  if (f.verification_status && !f.verification_status.split(",").includes(e.verification_status)) return false;
  if (f.dedup_status && !f.dedup_status.split(",").includes(e.dedup_status)) return false;
  if (f.method && !f.method.split(",").includes(e.method)) return false;
  if (f.after && Date.parse(e.received_at) < Date.parse(f.after)) return false;
  return true;
}

const newestFirst = (a: EventListItem, b: EventListItem) => (a.received_at < b.received_at ? 1 : a.received_at > b.received_at ? -1 : a.id < b.id ? 1 : -1);

export function EventsPage() {
  const { filters, offset, key, set, setOffset } = useQueryFilters(FILTERS);

  const sources = useLoad(() => api.get<{ sources: Source[] }>("/sources"), []);
  const events = useLoad(() => api.get<{ events: EventListItem[]; pagination: Pagination }>("/events", { ...filters, limit: LIMIT, offset }), [key]);
  const [fresh, setFresh] = useState<Set<string>>(new Set());
  const [missed, setMissed] = useState(0);
  const [bulkOpen, setBulkOpen] = useState(false);
  const bulkStart = useAction();
  const [bulkJob, setBulkJob] = useState<string | null>(null);
  const bulk = useJob(bulkJob ? `/jobs/${bulkJob}` : null);
  const filtersRef = useRef(filters);
  filtersRef.current = filters;
  const offsetRef = useRef(offset);
  offsetRef.current = offset;

  useEffect(() => setMissed(0), [key]);

  // Live arrivals over SSE: new events slide in on the first page; status changes update rows in place.
  const upsert = (item: EventListItem, created: boolean) => {
    const f = filtersRef.current;
    events.setData((d) => {
      if (!d) return d;
      const i = d.events.findIndex((e) => e.id === item.id);
      if (i >= 0) {
        if (!matches(item, { ...f, search: undefined, before: undefined })) return d;
        const copy = d.events.slice();
        copy[i] = item;
        return { ...d, events: copy };
      }
      if (offsetRef.current !== 0 || !matches(item, f)) {
        if (created) setMissed((n) => n + 1);
        return d;
      }
      const rows = [item, ...d.events].sort(newestFirst);
      const overflow = rows.length > LIMIT;
      return { events: rows.slice(0, LIMIT), pagination: { ...d.pagination, total: d.pagination.total + 1, has_more: d.pagination.has_more || overflow } };
    });
    if (created) setFresh((s) => new Set(s).add(item.id));
  };
  const live = useEventStream({ created: (e) => upsert(e, true), updated: (e) => upsert(e, false) }, filters.source_id);

  const list = events.data?.events ?? [];
  const pg = events.data?.pagination;
  const anyFilter = Object.keys(filters).length > 0;
  const sourceName = (id: string) => sources.data?.sources.find((s) => s.id === id)?.name;

  const startBulk = () =>
    bulkStart.run(async () => {
      // job_id is null when nothing matched that may be retried: no job was created (docs/api.md).
      const r = await api.post<{ job_id: string | null; total: number; skipped?: number }>(withQuery("/events/retry", filters), {});
      setBulkOpen(false);
      const skipped = r.skipped ? `${plural(r.skipped, "rejected event")} skipped` : "";
      if (r.job_id === null) return toast(`Nothing to retry${skipped ? `: ${skipped}` : ""}`);
      setBulkJob(r.job_id);
      toast(`Retrying ${plural(r.total, "event")}${skipped ? `; ${skipped}` : ""}`);
    });

  return (
    <>
      <PageHead
        title="Events"
        sub={
          <span>
            <span className={`live-dot ${live ? "on" : ""}`} aria-hidden="true" />
            {live ? "Live: new events appear as they arrive" : "Connecting to the live stream…"}
          </span>
        }
        actions={
          <button type="button" className="btn" disabled={!pg || pg.total === 0} onClick={() => setBulkOpen(true)}>
            Retry {anyFilter ? "matching" : "all"}…
          </button>
        }
      />

      <FilterBar label="Filter events" active={Object.keys(filters).length}>
        <FilterSelect label="Source" anyLabel="All sources" value={filters.source_id} onChange={(v) => set({ source_id: v })}>
          <NamedOptions items={sources.data?.sources} />
        </FilterSelect>
        <FilterSelect label="Status" value={filters.status} onChange={(v) => set({ status: v })}>
          <Options values={EVENT_STATUSES} />
        </FilterSelect>
        <FilterSelect label="Verification" value={filters.verification_status} onChange={(v) => set({ verification_status: v })}>
          <Options values={VERIFICATION_STATUSES} />
        </FilterSelect>
        <FilterSelect label="Dedup" value={filters.dedup_status} onChange={(v) => set({ dedup_status: v })}>
          <Options values={DEDUP_STATUSES} />
        </FilterSelect>
        <FilterSelect label="Method" value={filters.method} onChange={(v) => set({ method: v })}>
          <Options values={METHODS} />
        </FilterSelect>
        <SearchFilter value={filters.search ?? ""} onChange={(v) => set({ search: v })} />
        <Field label="After">
          {(p) => <input {...p} type="datetime-local" value={filters.after ? toLocalInput(new Date(filters.after)) : ""} onChange={(e) => set({ after: fromLocalInput(e.target.value) })} />}
        </Field>
        <Field label="Before">
          {(p) => <input {...p} type="datetime-local" value={filters.before ? toLocalInput(new Date(filters.before)) : ""} onChange={(e) => set({ before: fromLocalInput(e.target.value) })} />}
        </Field>
        {anyFilter ? (
          <button type="button" className="btn" onClick={() => setQuery({})}>
            Clear filters
          </button>
        ) : null}
      </FilterBar>

      {bulkJob ? (
        <section className="panel" aria-label="Bulk retry">
          <h2>Bulk retry</h2>
          <ErrorAlert error={bulk.error} />
          {bulk.job ? <JobBar job={bulk.job} /> : <Loading what="Starting" />}
          {bulk.job?.skipped ? (
            <p className="muted" style={{ margin: "8px 0 0" }} data-testid="bulk-skipped">
              {plural(bulk.job.skipped, "rejected event")} skipped: {bulk.job.skipped === 1 ? "its" : "their"} signature or schema check failed, so {bulk.job.skipped === 1 ? "it is" : "they are"} never retried in bulk. Open one to deliver it
              anyway.
            </p>
          ) : null}
        </section>
      ) : null}

      {missed > 0 ? (
        <div className="alert info" role="status">
          {missed} new {missed === 1 ? "event" : "events"} arrived.{" "}
          <button type="button" className="btn small" onClick={() => (offset === 0 ? events.reload().then(() => setMissed(0)) : set({ offset: undefined }))}>
            Show newest
          </button>
        </div>
      ) : null}

      <ListPanel
        label="Events"
        loaded={events}
        what="Loading events"
        isEmpty={list.length === 0}
        empty={
          anyFilter ? (
            <Empty title="No events match these filters" action={<button type="button" className="btn" onClick={() => setQuery({})}>Clear filters</button>}>
              New matching events still appear here live.
            </Empty>
          ) : (sources.data?.sources.length ?? 0) === 0 ? (
            <Empty title="No events yet" action={<Link to="/sources/new" className="btn primary">Create your first source</Link>}>
              Events are the webhooks your sources receive. Create a source and send a request to its ingest URL.
            </Empty>
          ) : (
            <Empty title="Waiting for the first event" action={<Link to="/sources" className="btn">Copy an ingest URL</Link>}>
              Send a webhook to one of your sources' ingest URLs; it will show up here the moment it arrives.
            </Empty>
          )
        }
      >
        <DataTable
          label="Events"
          rows={list}
          rowKey={(e) => e.id}
          rowClass={(e) => (fresh.has(e.id) ? "new" : undefined)}
          onRowClick={(e) => navigate(`/events/${e.id}`)}
          columns={[
            {
              label: "Event",
              render: (e) => (
                <Link to={`/events/${e.id}`} className="mono">
                  {shortId(e.id)}
                </Link>
              ),
            },
            { label: "Source", render: (e) => e.source_name ?? sourceName(e.source_id) ?? <span className="muted">deleted</span> },
            { label: "Type", hideNarrow: true, render: (e) => e.event_type ?? <span className="muted">–</span> },
            { label: "Method", render: (e) => <span className="mono">{e.method}</span> },
            { label: "Status", render: (e) => <StatusBadge status={e.status} /> },
            { label: "Signature", render: (e) => <StatusBadge status={e.verification_status} /> },
            { label: "Dedup", hideNarrow: true, render: (e) => <StatusBadge status={e.dedup_status} /> },
            { label: "Size", className: "num", hideNarrow: true, render: (e) => bytes(e.payload_size) },
            { label: "Received", render: (e) => <Time iso={e.received_at} /> },
          ]}
        />
        <Pager pagination={pg} offset={offset} limit={LIMIT} count={list.length} onPage={setOffset} />
      </ListPanel>

      <ConfirmDialog open={bulkOpen} title="Retry these events?" confirmLabel={`Retry ${plural(pg?.total ?? 0, "event")}`} danger={false} busy={bulkStart.busy} error={bulkStart.error} onConfirm={startBulk} onCancel={() => setBulkOpen(false)}>
        <p>
          Every event {anyFilter ? "matching the current filters" : "in this environment"} ({pg?.total.toLocaleString() ?? 0}) is delivered again to each connected destination. Destinations receive a second copy of events they already have.
        </p>
        <p>Rejected events (failed signature or schema check) are skipped and counted.</p>
      </ConfirmDialog>
    </>
  );
}

/** Search applies after a short pause in typing (or Enter), not on every key. */
function SearchFilter({ value, onChange }: { value: string; onChange: (v: string | undefined) => void }) {
  const [text, setText] = useState(value);
  useEffect(() => setText(value), [value]);
  useEffect(() => {
    if (text === value) return;
    const t = setTimeout(() => onChange(text.trim() || undefined), 400);
    return () => clearTimeout(t);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [text]);
  return (
    <Field label="Search">
      {(p) => <input {...p} type="search" value={text} onChange={(e) => setText(e.target.value)} onKeyDown={(e) => e.key === "Enter" && onChange(text.trim() || undefined)} placeholder="Event id or body text" title="An event id prefix, or text found in the body" />}
    </Field>
  );
}

// ---------------------------------------------------------------- detail

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
          <button type="button" className="btn primary" onClick={retrying.retry} disabled={retrying.busy}>
            {retrying.busy ? "Retrying…" : "Retry"}
          </button>
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
