/** Browsing a collection's records, and the URL of one record's page. */
import { useEffect, useState } from "react";
import { api } from "../../api";
import { CursorPager } from "../../components/cursorPager";
import { Field } from "../../components/forms";
import { Empty } from "../../components/layout";
import { DataTable } from "../../components/table";
import { Time } from "../../components/time";
import { parseJsonField, plural } from "../../format";
import { useLoad } from "../../hooks";
import { parseData, shortJson } from "../../json";
import { ListPanel, useQueryFilters } from "../../resources";
import { Link, navigate } from "../../router";
import type { Collection, CollectionRecord } from "../../types";

/** The URL of a record's page; keys may hold any character, `/` included. */
export const recordPath = (collectionId: string, key: string) => `/collections/${collectionId}/records/${encodeURIComponent(key)}`;

const PAGE = 25;

/** Records newest first, with search and cursor paging (Previous goes back through the cursors seen). */
export function RecordsBrowser({ collection }: { collection: Collection }) {
  const { filters, key, set } = useQueryFilters(["search", "event_type"] as const);
  const [text, setText] = useState(filters.search ?? "");
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors.at(-1);
  // On the first page the list follows the builder; further pages stay as they were opened.
  const follow = cursors.length === 0 ? `${collection.position_event_id}:${collection.record_count}:${collection.updated_at}` : "";
  const records = useLoad(
    () => api.get<{ records: CollectionRecord[]; has_more: boolean; next_cursor: string | null }>(`/collections/${collection.id}/records`, { ...filters, cursor, limit: PAGE }),
    [collection.id, key, cursor, follow],
  );

  useEffect(() => setCursors([]), [key]);
  // Search as you type, once the typing pauses.
  useEffect(() => {
    if (text.trim() === (filters.search ?? "")) return;
    const t = setTimeout(() => set({ search: text.trim() || undefined }), 300);
    return () => clearTimeout(t);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [text]);

  const rows = records.data?.records ?? [];
  const types = parseJsonField<string[]>(collection.event_types, []);
  const anyFilter = Boolean(filters.search || filters.event_type);
  return (
    <>
      <div className="panel-head" style={{ marginTop: 8 }}>
        <h2>Records</h2>
      </div>
      <form className="filters" role="search" aria-label="Search records" onSubmit={(e) => e.preventDefault()}>
        <Field label="Search">
          {(p) => <input {...p} type="search" value={text} onChange={(e) => setText(e.target.value)} placeholder="key or text in the data" />}
        </Field>
        <Field label="Last event type">
          {(p) => (
            <input
              {...p}
              type="text"
              list="record-event-types"
              value={filters.event_type ?? ""}
              onChange={(e) => set({ event_type: e.target.value || undefined })}
              placeholder="any"
            />
          )}
        </Field>
        <datalist id="record-event-types">
          {types.map((t) => (
            <option key={t} value={t} />
          ))}
        </datalist>
      </form>
      <ListPanel
        label="Records"
        loaded={records}
        what="Loading records"
        isEmpty={rows.length === 0 && cursors.length === 0}
        empty={
          anyFilter ? (
            <Empty title="No matching records">Nothing in the keys or data matches. Clear the search to see every record.</Empty>
          ) : (
            <Empty title="No records yet">
              {collection.build_status === "backfilling" ? "The collection is being built from the stored events." : `Records appear as events with a key at ${collection.key_path} arrive from ${collection.source_name ?? "the source"}.`}
            </Empty>
          )
        }
      >
        <DataTable
          label="Records"
          rows={rows}
          rowKey={(r) => r.id}
          onRowClick={(r) => navigate(recordPath(collection.id, r.record_key))}
          columns={[
            {
              label: "Key",
              render: (r) => (
                <Link to={recordPath(collection.id, r.record_key)} className="mono">
                  {r.record_key}
                </Link>
              ),
            },
            {
              label: "Data",
              render: (r) => (
                <span className="mono muted" style={{ overflowWrap: "anywhere" }}>
                  {shortJson(parseData(r.data), 120)}
                </span>
              ),
            },
            { label: "Last event type", hideNarrow: true, render: (r) => (r.event_type ? <code>{r.event_type}</code> : <span className="muted">–</span>) },
            { label: "Updated", render: (r) => <Time iso={r.updated_at} /> },
          ]}
        />
        <CursorPager cursors={cursors} setCursors={setCursors} next={records.data?.has_more ? records.data.next_cursor : null} summary={rows.length > 0 ? ` · ${plural(rows.length, "record")}` : ""} />
      </ListPanel>
    </>
  );
}
