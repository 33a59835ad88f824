import { useState, type FormEvent } from "react";
import { api } from "../api";
import { StatusBadge } from "../components/badges";
import { Modal } from "../components/dialogs";
import { FilterBar } from "../components/filterBar";
import { Field, NamedOptions } from "../components/forms";
import { Empty, ErrorAlert, PageHead, PageLoading } from "../components/layout";
import { DataTable, Pager } from "../components/table";
import { Tabs } from "../components/tabs";
import { Time } from "../components/time";
import { toast } from "../components/toasts";
import { fromLocalInput, fullTime, num, plural, shortId, toLocalInput } from "../format";
import { useAction, useInterval, useLoad } from "../hooks";
import { useDebounced, useEventStream } from "../live";
import { FilterSelect, ListPanel, useQueryFilters } from "../resources";
import { Link, navigate } from "../router";
import type { DeliveryAttempt, Destination, Issue, IssueStatus, Pagination } from "../types";
import { AttemptExchange } from "../attemptExchange";
import { useCan } from "../can";

const LIMIT = 50;
const HOUR = 3600_000;

type Tab = IssueStatus | "all";
const TABS: { id: Tab; label: string }[] = [
  { id: "open", label: "Open" },
  { id: "acknowledged", label: "Acknowledged" },
  { id: "resolved", label: "Resolved" },
  { id: "ignored", label: "Ignored" },
  { id: "all", label: "All" },
];

/** What each status means, in the words the list's empty state and the detail page use. */
const MEANING: Record<IssueStatus, string> = {
  open: "Deliveries to this destination fail this way and nobody has looked yet.",
  acknowledged: "Someone is on it. New failures keep counting; the next successful delivery resolves it.",
  resolved: "Fixed, or a delivery to the destination succeeded since. A new failure of this kind reopens it.",
  ignored: "Failures keep counting, but deliveries neither resolve nor reopen it, and it stays off the Open list until someone changes it.",
};

export function isSnoozed(issue: Pick<Issue, "snoozed_until">, now = Date.now()) {
  return issue.snoozed_until !== null && Date.parse(issue.snoozed_until) > now;
}

function SnoozedBadge({ issue }: { issue: Issue }) {
  if (!isSnoozed(issue)) return null;
  return (
    <span className="badge info" title={`No “issue opened” alert until ${fullTime(issue.snoozed_until)}`}>
      snoozed
    </span>
  );
}

// ---------------------------------------------------------------- list

export function IssuesPage() {
  const { filters, offset, key, set, setOffset } = useQueryFilters(["status", "destination_id"] as const);
  const tab = (TABS.some((t) => t.id === filters.status) ? filters.status : "open") as Tab;
  const issues = useLoad(
    () => api.get<{ issues: Issue[]; pagination: Pagination }>("/issues", { status: tab === "all" ? undefined : tab, destination_id: filters.destination_id, limit: LIMIT, offset }),
    [key],
  );
  const dests = useLoad(() => api.get<{ destinations: Destination[] }>("/destinations"), []);
  const list = issues.data?.issues ?? [];
  // Deliveries open, count and resolve issues: follow them, and poll slowly for retries that change no event.
  const refresh = useDebounced(() => void issues.reload(), 1000);
  useEventStream({ updated: refresh });
  useInterval(() => void issues.reload(), 15_000);

  return (
    <>
      <PageHead
        title="Issues"
        sub="Deliveries that keep failing, one issue per destination and kind of failure (HTTP 503, timeouts, …). A successful delivery to the destination resolves its issues; a new failure reopens them."
        actions={
          <Link to="/alert-rules" className="btn">
            Alert rules
          </Link>
        }
      />
      <Tabs label="Issue status" tabs={TABS} value={tab} onChange={(v) => set({ status: v === "open" ? undefined : v })} />
      <FilterBar label="Filter issues" active={filters.destination_id ? 1 : 0}>
        <FilterSelect label="Destination" anyLabel="All destinations" value={filters.destination_id} onChange={(v) => set({ destination_id: v })}>
          <NamedOptions items={dests.data?.destinations} />
        </FilterSelect>
      </FilterBar>
      <ListPanel
        label="Issues"
        loaded={issues}
        what="Loading issues"
        isEmpty={list.length === 0}
        empty={
          tab === "open" && !filters.destination_id ? (
            <Empty title="No open issues">Deliveries are going through. When a destination starts failing, an issue opens here, and alert rules can tell you about it.</Empty>
          ) : (
            <Empty title={`No ${tab === "all" ? "" : `${tab} `}issues${filters.destination_id ? " for this destination" : ""}`}>{tab === "all" ? null : MEANING[tab]}</Empty>
          )
        }
      >
        <DataTable
          label="Issues"
          rows={list}
          rowKey={(i) => i.id}
          onRowClick={(i) => navigate(`/issues/${i.id}`)}
          columns={[
            {
              label: "Issue",
              render: (i) => (
                <>
                  <Link to={`/issues/${i.id}`}>{i.title}</Link>
                  {i.last_error ? (
                    <div className="muted" style={{ fontSize: 12 }}>
                      {i.last_error}
                    </div>
                  ) : null}
                </>
              ),
            },
            { label: "Destination", render: (i) => (i.destination_name === null ? <span className="muted">deleted</span> : <Link to={`/destinations/${i.destination_id}`}>{i.destination_name}</Link>) },
            {
              label: "Status",
              render: (i) => (
                <>
                  <StatusBadge status={i.status} /> <SnoozedBadge issue={i} />
                </>
              ),
            },
            { label: "Failures", className: "num", render: (i) => num(i.occurrence_count) },
            { label: "Last seen", render: (i) => <Time iso={i.last_seen_at} /> },
            { label: "First seen", hideNarrow: true, render: (i) => <Time iso={i.first_seen_at} /> },
          ]}
        />
        <Pager pagination={issues.data?.pagination} offset={offset} limit={LIMIT} count={list.length} onPage={setOffset} />
      </ListPanel>
    </>
  );
}

// ---------------------------------------------------------------- detail

const ACTIONS: { status: IssueStatus; label: string; done: string }[] = [
  { status: "acknowledged", label: "Acknowledge", done: "Issue acknowledged" },
  { status: "resolved", label: "Resolve", done: "Issue resolved" },
  { status: "ignored", label: "Ignore", done: "Issue ignored" },
  { status: "open", label: "Reopen", done: "Issue reopened" },
];

export function IssueDetailPage({ id }: { id: string }) {
  const loaded = useLoad(() => api.get<{ issue: Issue; last_attempt: DeliveryAttempt | null }>(`/issues/${encodeURIComponent(id)}`), [id]);
  useInterval(() => void loaded.reload(), 15_000);
  const { busy, error, run } = useAction();
  const [customOpen, setCustomOpen] = useState(false);
  const canWrite = useCan("write");
  const issue = loaded.data?.issue;
  const attempt = loaded.data?.last_attempt ?? null;

  const change = (body: { status?: IssueStatus; snoozed_until?: string | null }, done: string) =>
    run(async () => {
      const res = await api.patch<{ issue: Issue }>(`/issues/${encodeURIComponent(id)}`, body);
      loaded.setData((d) => (d ? { ...d, issue: res.issue } : d));
      toast(done);
    });
  const snooze = (until: Date) => change({ snoozed_until: until.toISOString() }, `Snoozed until ${until.toLocaleString()}`);

  if (!issue) return <PageLoading title="Issue" sub={<Link to="/issues">← All issues</Link>} error={loaded.error} onRetry={loaded.reload} />;
  const status = issue.status as IssueStatus;
  const snoozed = isSnoozed(issue);

  return (
    <>
      <PageHead
        title={
          <>
            {issue.title} <StatusBadge status={issue.status} /> <SnoozedBadge issue={issue} />
          </>
        }
        sub={
          <>
            <Link to="/issues">← All issues</Link> · {issue.destination_name === null ? "a deleted destination" : <Link to={`/destinations/${issue.destination_id}`}>{issue.destination_name}</Link>}
          </>
        }
        actions={ACTIONS.filter((a) => canWrite && a.status !== status).map((a) => (
          <button key={a.status} type="button" className={a.status === "resolved" ? "btn primary" : "btn"} disabled={busy} onClick={() => change({ status: a.status }, a.done)}>
            {a.label}
          </button>
        ))}
      />
      <ErrorAlert error={error} />
      <p className="muted" style={{ marginTop: 0 }}>
        {MEANING[status] ?? null}
      </p>

      <section className="panel" aria-label="Issue">
        <dl className="kv">
          <dt>Failures</dt>
          <dd>
            {plural(issue.occurrence_count, "failed attempt")} of this kind ·{" "}
            <Link to={`/attempts?destination_id=${issue.destination_id}&status=failed`}>failed attempts to this destination</Link>
          </dd>
          <dt>Last error</dt>
          <dd>{issue.last_error ?? <span className="muted">–</span>}</dd>
          <dt>First seen</dt>
          <dd>
            {fullTime(issue.first_seen_at)} (<Time iso={issue.first_seen_at} />)
          </dd>
          <dt>Last seen</dt>
          <dd>
            {fullTime(issue.last_seen_at)} (<Time iso={issue.last_seen_at} />)
          </dd>
          {issue.resolved_at ? (
            <>
              <dt>Resolved</dt>
              <dd>{fullTime(issue.resolved_at)}</dd>
            </>
          ) : null}
          <dt>Last event</dt>
          <dd>
            {issue.last_event_id ? (
              <Link to={`/events/${issue.last_event_id}`} className="mono">
                {issue.last_event_id}
              </Link>
            ) : (
              <span className="muted">–</span>
            )}
          </dd>
          <dt>Fingerprint</dt>
          <dd className="mono">{issue.fingerprint}</dd>
        </dl>
      </section>

      <section className="panel" aria-label="Snooze">
        <h2>Snooze</h2>
        <p className="muted" style={{ margin: "0 0 10px" }}>
          {snoozed ? (
            <>
              Snoozed until <strong>{fullTime(issue.snoozed_until)}</strong>: until then, this issue reopening sends no “issue opened” alert. It changes nothing else.
            </>
          ) : (
            <>While an issue is snoozed, it reopening sends no “issue opened” alert. It changes nothing else: failures keep counting and a success still resolves it.</>
          )}
        </p>
        {canWrite ? (
          <div className="btn-row">
            <button type="button" className="btn" disabled={busy} onClick={() => snooze(new Date(Date.now() + HOUR))}>
              Snooze 1 h
            </button>
            <button type="button" className="btn" disabled={busy} onClick={() => snooze(new Date(Date.now() + 24 * HOUR))}>
              Snooze 24 h
            </button>
            <button type="button" className="btn" disabled={busy} onClick={() => setCustomOpen(true)}>
              Snooze until…
            </button>
            {snoozed ? (
              <button type="button" className="btn" disabled={busy} onClick={() => change({ snoozed_until: null }, "Snooze ended")}>
                End snooze
              </button>
            ) : null}
          </div>
        ) : null}
      </section>

      <section className="panel" aria-label="Last failed attempt">
        <div className="panel-head">
          <h2>Last failed attempt</h2>
          {attempt ? (
            <span className="muted">
              #{attempt.attempt_number ?? "–"} ({attempt.trigger_type ?? "–"}) · {fullTime(attempt.created_at)} · attempt <span className="mono">{shortId(attempt.id)}</span>
            </span>
          ) : null}
        </div>
        {attempt ? (
          <div style={{ display: "grid", gap: 14 }}>
            <AttemptExchange attempt={attempt} />
          </div>
        ) : (
          <p className="muted">The last failed attempt is no longer stored: retention removed it with its event.</p>
        )}
      </section>

      <SnoozeDialog open={customOpen} busy={busy} onClose={() => setCustomOpen(false)} onSnooze={(until) => void snooze(until).then(() => setCustomOpen(false))} />
    </>
  );
}

function SnoozeDialog({ open, busy, onClose, onSnooze }: { open: boolean; busy: boolean; onClose: () => void; onSnooze: (until: Date) => void }) {
  const [value, setValue] = useState(() => toLocalInput(new Date(Date.now() + 3 * 24 * HOUR)));
  const [error, setError] = useState<string | undefined>();
  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    const iso = fromLocalInput(value);
    if (!iso) return setError("Choose a date and time");
    if (Date.parse(iso) <= Date.now()) return setError("Choose a time in the future");
    setError(undefined);
    onSnooze(new Date(iso));
  };
  return (
    <Modal open={open} onClose={onClose} title="Snooze until">
      <form onSubmit={onSubmit} noValidate>
        <Field label="Until" error={error} help="Your local time. No “issue opened” alert for this issue until then.">
          {(p) => <input {...p} type="datetime-local" value={value} onChange={(e) => setValue(e.target.value)} />}
        </Field>
        <div className="btn-row">
          <button type="button" className="btn" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="btn primary" disabled={busy}>
            Snooze
          </button>
        </div>
      </form>
    </Modal>
  );
}
