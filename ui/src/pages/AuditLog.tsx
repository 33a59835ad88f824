/** The audit log (docs/audit.md): who changed what, when and from where; filters by actor, resource type, action and time; changes as before → after. */
import { useEffect, useState } from "react";
import type { AuditEntryDto } from "../../../src/contracts/audit";
import { auditActions, auditResourceTypes } from "../../../src/contracts/auditNames";
import { api } from "../api";
import { CursorPager } from "../components/cursorPager";
import { FilterBar } from "../components/filterBar";
import { Field, Options } from "../components/forms";
import { Empty, PageHead } from "../components/layout";
import { DataTable } from "../components/table";
import { Time } from "../components/time";
import { fromLocalInput, plural, shortId, toLocalInput } from "../format";
import { useLoad } from "../hooks";
import { FilterSelect, ListPanel, useQueryFilters } from "../resources";
import { setQuery } from "../router";

const PAGE = 50;
const FILTERS = ["actor_id", "resource_type", "resource_id", "action", "after", "before"] as const;

type Changes = Record<string, { before: unknown; after: unknown }>;

export function AuditLogPage() {
  const { filters, key, set } = useQueryFilters(FILTERS);
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors.at(-1);
  const log = useLoad(() => api.get<{ entries: AuditEntryDto[]; has_more: boolean; next_cursor: string | null }>("/audit-log", { ...filters, cursor, limit: PAGE }), [key, cursor]);
  useEffect(() => setCursors([]), [key]);
  const rows = log.data?.entries ?? [];
  const active = Object.keys(filters).length;

  return (
    <>
      <PageHead title="Audit log" sub="Every change made through the API, this UI or the CLI: who made it, from where, and the fields before and after (secrets masked)." />
      <FilterBar label="Filter the audit log" active={active}>
        <ActorFilter value={filters.actor_id} seen={rows} onChange={(v) => set({ actor_id: v })} />
        <FilterSelect label="Resource type" value={filters.resource_type} onChange={(v) => set({ resource_type: v })}>
          <Options values={auditResourceTypes} />
        </FilterSelect>
        <FilterSelect label="Action" value={filters.action} onChange={(v) => set({ action: v })}>
          <Options values={auditActions} />
        </FilterSelect>
        <TimeFilter label="After" value={filters.after} onChange={(v) => set({ after: v })} />
        <TimeFilter label="Before" value={filters.before} onChange={(v) => set({ before: v })} />
        {active > 0 ? (
          <button type="button" className="btn" onClick={() => setQuery({})}>
            Clear filters
          </button>
        ) : null}
      </FilterBar>
      <ListPanel
        label="Audit entries"
        loaded={log}
        what="Loading the audit log"
        isEmpty={rows.length === 0 && cursors.length === 0}
        empty={active > 0 ? <Empty title="No entries match these filters" /> : <Empty title="Nothing changed yet">Each change to a source, destination, key or any other resource is recorded here.</Empty>}
      >
        <DataTable
          label="Audit entries"
          rows={rows}
          rowKey={(e) => e.id}
          columns={[
            { label: "When", render: (e) => <Time iso={e.created_at} /> },
            {
              label: "Actor",
              render: (e) => (
                <button type="button" className="link-button" title={`${e.actor_type} ${e.actor_id ?? ""}`} onClick={() => e.actor_id && set({ actor_id: e.actor_id })}>
                  {e.actor_name ?? e.actor_type}
                  <span className="muted"> · {e.actor_type === "api_key" ? "API key" : e.actor_type}</span>
                </button>
              ),
            },
            { label: "Action", render: (e) => <span className={`badge ${e.action === "delete" || e.action === "login_failed" ? "bad" : "info"}`}>{e.action}</span> },
            {
              label: "Resource",
              render: (e) => (
                <>
                  {e.resource_type}{" "}
                  {e.resource_id ? (
                    <button type="button" className="link-button mono" title={e.resource_id} onClick={() => set({ resource_id: e.resource_id! })}>
                      {shortId(e.resource_id)}
                    </button>
                  ) : null}
                </>
              ),
            },
            { label: "Changes", render: (e) => <ChangeList text={e.changes} /> },
            { label: "From", hideNarrow: true, render: (e) => <span className="mono muted">{e.ip ?? "–"}</span> },
          ]}
        />
        <CursorPager cursors={cursors} setCursors={setCursors} next={log.data?.next_cursor} summary={rows.length > 0 ? ` · ${plural(rows.length, "entry", "entries")}` : ""} labels={["Newer", "Older"]} />
      </ListPanel>
    </>
  );
}

/** The actors of the entries on screen (and the one filtered by): the log names each with its id. */
function ActorFilter({ value, seen, onChange }: { value: string | undefined; seen: AuditEntryDto[]; onChange: (v: string | undefined) => void }) {
  const actors = new Map<string, string>();
  for (const e of seen) if (e.actor_id) actors.set(e.actor_id, `${e.actor_name ?? e.actor_id} (${e.actor_type === "api_key" ? "API key" : e.actor_type})`);
  if (value && !actors.has(value)) actors.set(value, shortId(value));
  return (
    <FilterSelect label="Actor" anyLabel="Anyone" value={value} onChange={onChange}>
      {[...actors].map(([id, name]) => (
        <option key={id} value={id}>
          {name}
        </option>
      ))}
    </FilterSelect>
  );
}

function TimeFilter({ label, value, onChange }: { label: string; value: string | undefined; onChange: (v: string | undefined) => void }) {
  return (
    <Field label={label}>
      {(p) => <input {...p} type="datetime-local" value={value ? toLocalInput(new Date(value)) : ""} onChange={(e) => onChange(fromLocalInput(e.target.value))} />}
    </Field>
  );
}

const shown = (v: unknown) => (v === null || v === undefined ? "–" : typeof v === "string" ? v : JSON.stringify(v));

/** `field: before → after`, one line each; a value too long for a line is cut, the whole of it in the tooltip. */
function ChangeList({ text }: { text: string | null }) {
  let changes: Changes | null = null;
  try {
    changes = text ? (JSON.parse(text) as Changes) : null;
  } catch {
    changes = null;
  }
  const fields = Object.entries(changes ?? {}).filter(([field]) => field !== "updated_at");
  if (fields.length === 0) return <span className="muted">–</span>;
  return (
    <ul className="audit-changes">
      {fields.map(([field, { before, after }]) => (
        <li key={field}>
          <span className="mono">{field}</span>: <span className="audit-before" title={shown(before)}>{shown(before)}</span> → <span className="audit-after" title={shown(after)}>{shown(after)}</span>
        </li>
      ))}
    </ul>
  );
}
