/** An application's messages, in the admin UI and in the consumer portal: filtered by event type, in cursor pages, followed while any is pending. */
import { useEffect, useState } from "react";
import { api } from "../../api";
import { StatusBadge } from "../../components/badges";
import { CursorPager } from "../../components/cursorPager";
import { Field, NamedOptions } from "../../components/forms";
import { Empty } from "../../components/layout";
import { DataTable } from "../../components/table";
import { Time } from "../../components/time";
import { bytes, plural, shortId } from "../../format";
import { useInterval, useLoad } from "../../hooks";
import { appPath, messagePage, type AppPlace } from "../../outbound";
import { ListPanel, useQueryFilters } from "../../resources";
import { Link, navigate } from "../../router";
import type { Message } from "../../types";
import { useEventTypes } from "./eventTypes";

const PAGE = 25;

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
        <CursorPager cursors={cursors} setCursors={setCursors} next={messages.data?.cursor} summary={rows.length > 0 ? ` · ${plural(rows.length, "message")}` : ""} labels={["Newer", "Older"]} />
      </ListPanel>
    </>
  );
}
