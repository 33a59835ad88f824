/** The events page: every stored request, filtered, newest first, with new ones flowing in live. */
import { useEffect, useRef, useState } from "react";
import { api, withQuery } from "../../api";
import { StatusBadge } from "../../components/badges";
import { ConfirmDialog } from "../../components/dialogs";
import { FilterBar } from "../../components/filterBar";
import { Field, NamedOptions, Options } from "../../components/forms";
import { JobBar } from "../../components/jobBar";
import { Empty, ErrorAlert, Loading, PageHead } from "../../components/layout";
import { DataTable, Pager } from "../../components/table";
import { Time } from "../../components/time";
import { toast } from "../../components/toasts";
import { bytes, fromLocalInput, plural, shortId, toLocalInput } from "../../format";
import { useAction, useLoad } from "../../hooks";
import { useJob } from "../../jobs";
import { FilterSelect, ListPanel, useQueryFilters } from "../../resources";
import { useEventStream } from "../../live";
import { Link, navigate, setQuery } from "../../router";
import { DEDUP_STATUSES, EVENT_STATUSES, METHODS, VERIFICATION_STATUSES, type EventListItem, type Pagination, type Source } from "../../types";
import { Can } from "../../can";

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
          <Can permission="write">
            <button type="button" className="btn" disabled={!pg || pg.total === 0} onClick={() => setBulkOpen(true)}>
              Retry {anyFilter ? "matching" : "all"}…
            </button>
          </Can>
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
            <Empty title="No events yet" action={<Can permission="write"><Link to="/sources/new" className="btn primary">Create your first source</Link></Can>}>
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
