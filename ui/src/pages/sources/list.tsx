/** The sources page: every source with its ingest URL, status and event count. */
import { api } from "../../api";
import { StatusBadge } from "../../components/badges";
import { CopyButton } from "../../components/copy";
import { Field, Options } from "../../components/forms";
import { Empty } from "../../components/layout";
import { Time } from "../../components/time";
import { num } from "../../format";
import { useLoad } from "../../hooks";
import { ResourceListPage } from "../../resources";
import { Link, navigate, useLocation } from "../../router";
import { SOURCE_STATUSES, type Source } from "../../types";

export function SourcesPage() {
  const { search } = useLocation();
  const status = search.get("status") ?? "";
  const sources = useLoad(() => api.get<{ sources: Source[] }>("/sources", { status }), [status]);
  return (
    <ResourceListPage
      title="Sources"
      noun="source"
      path="/sources"
      sub="Each source has an ingest URL that providers send webhooks to. Signatures are checked, duplicates dropped, events stored."
      emptyText="A source gives you a URL to paste into GitHub, Stripe, Shopify or any other webhook sender."
      empty={status ? <Empty title={`No ${status} sources`}>Clear the status filter to see every source.</Empty> : undefined}
      filters={
        <div className="filters" role="search" aria-label="Filter sources">
          <Field label="Status">
            {(p) => (
              <select {...p} value={status} onChange={(e) => navigate(e.target.value ? `/sources?status=${e.target.value}` : "/sources", { replace: true })}>
                <option value="">Any status</option>
                <Options values={SOURCE_STATUSES} />
              </select>
            )}
          </Field>
        </div>
      }
      loaded={sources}
      rows={sources.data?.sources}
      columns={[
        {
          label: "Name",
          render: (s) => (
            <>
              <Link to={`/sources/${s.id}`}>{s.name}</Link>
              <div className="muted mono" style={{ fontSize: 12 }}>
                {s.slug}
              </div>
            </>
          ),
        },
        { label: "Status", render: (s) => <StatusBadge status={s.status} /> },
        { label: "Verification", render: (s) => (s.verification_enabled ? (s.template ?? s.verification_type ?? "on") : <span className="muted">off</span>) },
        { label: "Events", className: "num", render: (s) => num(s.event_count) },
        { label: "Last event", render: (s) => <Time iso={s.last_event_at} /> },
        { label: "Created", hideNarrow: true, render: (s) => <Time iso={s.created_at} /> },
        { label: "Ingest URL", srOnly: true, className: "actions", render: (s) => <CopyButton text={s.ingest_url} label="Copy ingest URL" /> },
      ]}
    />
  );
}
