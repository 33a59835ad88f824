/** The applications page (docs/outbound.md): the list with search and cursor paging. */
import { useEffect, useState } from "react";
import { api } from "../../api";
import { StatusBadge } from "../../components/badges";
import { CursorPager } from "../../components/cursorPager";
import { Field } from "../../components/forms";
import { Empty, PageHead } from "../../components/layout";
import { DataTable } from "../../components/table";
import { Time } from "../../components/time";
import { num, plural } from "../../format";
import { useLoad } from "../../hooks";
import { ListPanel, useQueryFilters } from "../../resources";
import { Link, navigate } from "../../router";
import type { ApplicationListItem } from "../../types";
import { appUrl } from "./withApplication";
import { useCan } from "../../can";

const PAGE = 25;

export function ApplicationsPage() {
  const { filters, key, set } = useQueryFilters(["search"] as const);
  const [text, setText] = useState(filters.search ?? "");
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors.at(-1);
  const apps = useLoad(() => api.get<{ applications: ApplicationListItem[]; cursor: string | null }>("/applications", { ...filters, cursor, limit: PAGE }), [key, cursor]);
  useEffect(() => setCursors([]), [key]);
  // Search as you type, once the typing pauses.
  useEffect(() => {
    if (text.trim() === (filters.search ?? "")) return;
    const t = setTimeout(() => set({ search: text.trim() || undefined }), 300);
    return () => clearTimeout(t);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [text]);

  const rows = apps.data?.applications ?? [];
  const canWrite = useCan("write");
  const create = (label: string) =>
    canWrite ? (
      <Link to="/applications/new" className="btn primary">
        {label}
      </Link>
    ) : null;
  return (
    <>
      <PageHead
        title="Applications"
        sub="Webhooks you send to your own customers: one application per customer, each with its endpoints (their URLs), the messages sent to them, and a portal link they can manage them with."
        actions={create("New application")}
      />
      <form className="filters" role="search" aria-label="Search applications" onSubmit={(e) => e.preventDefault()}>
        <Field label="Search">
          {(p) => <input {...p} type="search" value={text} onChange={(e) => setText(e.target.value)} placeholder="name or uid" />}
        </Field>
      </form>
      <ListPanel
        label="Applications"
        loaded={apps}
        what="Loading applications"
        isEmpty={rows.length === 0 && cursors.length === 0}
        empty={
          filters.search ? (
            <Empty title="No matching applications">No name or uid contains “{filters.search}”.</Empty>
          ) : (
            <Empty title="No applications yet" action={create("Create your first application")}>
              Create an application for each customer you send webhooks to (give it your own id for them as its uid), add their endpoints, then send messages with POST /v1/applications/{"{uid}"}/messages.
            </Empty>
          )
        }
      >
        <DataTable
          label="Applications"
          rows={rows}
          rowKey={(a) => a.id}
          onRowClick={(a) => navigate(appUrl(a.id))}
          columns={[
            {
              label: "Name",
              render: (a) => (
                <>
                  <Link to={appUrl(a.id)}>{a.name}</Link>
                  <div className="muted mono" style={{ fontSize: 12 }}>
                    {a.uid}
                  </div>
                </>
              ),
            },
            { label: "Status", render: (a) => <StatusBadge status={a.status} /> },
            { label: "Endpoints", className: "num", render: (a) => num(a.endpoint_count) },
            { label: "Messages", className: "num", render: (a) => num(a.message_count) },
            { label: "Rate limit", hideNarrow: true, render: (a) => (a.rate_limit ? `${num(a.rate_limit)}/s` : <span className="muted">none</span>) },
            { label: "Created", hideNarrow: true, render: (a) => <Time iso={a.created_at} /> },
          ]}
        />
        <CursorPager cursors={cursors} setCursors={setCursors} next={apps.data?.cursor} summary={rows.length > 0 ? ` · ${plural(rows.length, "application")}` : ""} />
      </ListPanel>
    </>
  );
}
