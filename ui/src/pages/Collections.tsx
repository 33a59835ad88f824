import { useEffect, useRef, useState, type FormEvent } from "react";
import { api } from "../api";
import { DetailActions } from "../components/detailActions";
import { ConfirmDialog } from "../components/dialogs";
import { Field, FormActions } from "../components/forms";
import { Empty, ErrorAlert, PageHead, PageLoading } from "../components/layout";
import { DataTable } from "../components/table";
import { Time } from "../components/time";
import { toast } from "../components/toasts";
import { num, parseJsonField, pct, plural } from "../format";
import { useInterval, useLoad, useSubmit } from "../hooks";
import { parseData, shortJson } from "../json";
import { ListPanel, ResourceListPage, useDeleteResource, useQueryFilters } from "../resources";
import { Link, navigate } from "../router";
import type { Collection, CollectionRecord, Source } from "../types";

/** The URL of a record's page; keys may hold any character, `/` included. */
export const recordPath = (collectionId: string, key: string) => `/collections/${collectionId}/records/${encodeURIComponent(key)}`;

export function BuildBadge({ c }: { c: Collection }) {
  if (c.build_status === "backfilling") return <span className="badge warn">backfilling {pct(backfillPct(c))}</span>;
  return <span className="badge ok">{c.events_pending > 0 ? `live, ${num(c.events_pending)} waiting` : "live"}</span>;
}

const backfillPct = (c: Collection) => (c.backfill_total > 0 ? (c.backfill_processed / c.backfill_total) * 100 : 100);

// ---------------------------------------------------------------- list

export function CollectionsPage() {
  const collections = useLoad(() => api.get<{ collections: Collection[] }>("/collections"), []);
  const building = collections.data?.collections.some((c) => c.build_status === "backfilling" || c.events_pending > 0) ?? false;
  useInterval(() => void collections.reload(), building ? 2000 : null);
  return (
    <ResourceListPage
      title="Collections"
      noun="collection"
      path="/collections"
      sub="The current state of every record a source's events describe (every order, customer or issue a provider tells you about), with each record's history."
      emptyText="A collection reads a source's events, takes each event's record key from a path in its body, and keeps the latest version of every record with a changelog of its changes."
      loaded={collections}
      rows={collections.data?.collections}
      columns={[
        {
          label: "Name",
          render: (c) => (
            <>
              <Link to={`/collections/${c.id}`}>{c.name}</Link>
              <div className="muted mono" style={{ fontSize: 12 }}>
                key: {c.key_path}
              </div>
            </>
          ),
        },
        { label: "Source", render: (c) => c.source_name ?? <span className="muted mono">{c.source_id}</span> },
        { label: "Records", className: "num", render: (c) => num(c.record_count) },
        { label: "Build", render: (c) => <BuildBadge c={c} /> },
        {
          label: "Problems",
          hideNarrow: true,
          render: (c) =>
            c.events_missing_key + c.events_transform_failed > 0 ? (
              <span className="badge bad" title={c.last_error ?? undefined}>
                {plural(c.events_missing_key + c.events_transform_failed, "event")} not built
              </span>
            ) : (
              <span className="muted">none</span>
            ),
        },
        { label: "Created", hideNarrow: true, render: (c) => <Time iso={c.created_at} /> },
      ]}
    />
  );
}

// ---------------------------------------------------------------- create and edit

interface Form {
  name: string;
  description: string;
  source_id: string;
  key_path: string;
  event_type_path: string;
  event_types: string;
  delete_event_types: string;
  transform_expression: string;
}

const blank: Form = { name: "", description: "", source_id: "", key_path: "", event_type_path: "type", event_types: "", delete_event_types: "", transform_expression: "" };
const formFields = Object.keys(blank);
/** Changing any of these clears the records and changelog and builds again (docs/catalog.md, Rebuild). */
const REBUILDS = ["source_id", "key_path", "event_type_path", "event_types", "delete_event_types", "transform_expression"] as const;

function toForm(c: Collection): Form {
  const list = (v: string | null) => parseJsonField<string[]>(v, []).join(", ");
  return {
    name: c.name,
    description: c.description ?? "",
    source_id: c.source_id,
    key_path: c.key_path,
    event_type_path: c.event_type_path,
    event_types: list(c.event_types),
    delete_event_types: list(c.delete_event_types),
    transform_expression: c.transform_expression ?? "",
  };
}

/** "a, b" or one per line → ["a", "b"]; nothing → null (every type). */
function typeList(text: string): string[] | null {
  const items = text
    .split(/[\n,]/)
    .map((s) => s.trim())
    .filter(Boolean);
  return items.length > 0 ? items : null;
}

export function NewCollectionPage() {
  return (
    <>
      <PageHead title="New collection" sub={<Link to="/collections">← All collections</Link>} />
      <CollectionForm collection={null} onSaved={(c) => navigate(`/collections/${c.id}`)} />
    </>
  );
}

function CollectionForm({ collection, onSaved }: { collection: Collection | null; onSaved: (c: Collection) => void }) {
  const sources = useLoad(() => api.get<{ sources: Source[] }>("/sources"), []);
  const initial = useRef(collection ? toForm(collection) : blank);
  const [f, setF] = useState<Form>(initial.current);
  const set = <K extends keyof Form>(k: K, v: Form[K]) => setF((o) => ({ ...o, [k]: v }));
  const { busy, fieldErrors, formError, submit, setFieldErrors } = useSubmit();
  const [confirmRebuild, setConfirmRebuild] = useState(false);
  const keyRef = useRef<HTMLInputElement>(null);
  const editing = collection !== null;

  const bodyOf = (): Record<string, unknown> | null => {
    const errors: Record<string, string> = {};
    if (!f.source_id) errors.source_id = "Choose the source whose events build the records";
    if (!f.key_path.trim()) errors.key_path = "Say where each event's record key is, e.g. data.object.id";
    if (!f.event_type_path.trim()) errors.event_type_path = "Say where each event's type is (default: type)";
    if (Object.keys(errors).length > 0) {
      setFieldErrors(errors);
      if (errors.key_path) keyRef.current?.focus();
      return null;
    }
    const value: Record<keyof Form, unknown> = {
      name: f.name.trim() || (editing ? collection.name : undefined),
      description: f.description.trim() || null,
      source_id: f.source_id,
      key_path: f.key_path.trim(),
      event_type_path: f.event_type_path.trim(),
      event_types: typeList(f.event_types),
      delete_event_types: typeList(f.delete_event_types),
      transform_expression: f.transform_expression.trim() ? f.transform_expression : null,
    };
    const body: Record<string, unknown> = {};
    for (const k of Object.keys(value) as (keyof Form)[]) {
      if (value[k] === undefined) continue;
      if (editing && f[k] === initial.current[k]) continue;
      if (!editing && value[k] === null) continue;
      body[k] = value[k];
    }
    return body;
  };

  const save = async (body: Record<string, unknown>) => {
    setConfirmRebuild(false);
    const res = await submit(
      () => (editing ? api.patch<{ collection: Collection }>(`/collections/${collection.id}`, body) : api.post<{ collection: Collection }>("/collections", body)),
      formFields,
    );
    if (!res) return;
    toast(editing ? (REBUILDS.some((k) => k in body) ? "Collection saved; rebuilding" : "Collection saved") : `Collection “${res.collection.name}” created`);
    onSaved(res.collection);
  };

  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    const body = bodyOf();
    if (!body) return;
    if (editing && Object.keys(body).length === 0) return toast("Nothing changed");
    // Rebuilding throws the changelog away: ask first.
    if (editing && REBUILDS.some((k) => k in body)) return setConfirmRebuild(true);
    await save(body);
  };

  const sourceList = sources.data?.sources.map((s) => ({ id: s.id, name: s.type === "topic" ? `${s.name} (topic)` : s.name }));

  return (
    <form className="panel form" onSubmit={onSubmit} aria-label={editing ? "Collection settings" : "New collection"} noValidate>
      {editing ? <h2>Definition</h2> : null}
      <ErrorAlert error={formError ?? sources.error} />
      {editing ? (
        <p className="muted" style={{ margin: 0 }}>
          Changing the source, a path, the event types or the transform rebuilds the collection from the stored events; its changelog starts over. Name and description change in place.
        </p>
      ) : null}
      <div className="form-grid">
        <Field label={editing ? "Name" : "Name (optional)"} error={fieldErrors.name} help={editing ? undefined : "Default: “<source> by <key path>”."}>
          {(p) => <input {...p} type="text" name="name" value={f.name} onChange={(e) => set("name", e.target.value)} placeholder="Stripe customers" />}
        </Field>
        <Field label="Source" error={fieldErrors.source_id} help="Its events build the records: a webhook source or a topic's.">
          {(p) => (
            <select {...p} name="source_id" value={f.source_id} onChange={(e) => set("source_id", e.target.value)}>
              <option value="" disabled>
                Choose a source…
              </option>
              {sourceList?.map((s) => (
                <option key={s.id} value={s.id}>
                  {s.name}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      <Field label="Description (optional)" error={fieldErrors.description}>
        {(p) => <input {...p} type="text" name="description" value={f.description} onChange={(e) => set("description", e.target.value)} />}
      </Field>
      <div className="form-grid">
        <Field label="Record key path" error={fieldErrors.key_path} help="Dot path into the body to each record's key: a string or a number.">
          {(p) => <input {...p} ref={keyRef} type="text" name="key_path" className="mono" value={f.key_path} onChange={(e) => set("key_path", e.target.value)} placeholder="data.object.id" />}
        </Field>
        <Field label="Event type path" error={fieldErrors.event_type_path} help="Where the event's type is; without one there, the type ingest stored (a provider's header, a publish's event_type).">
          {(p) => <input {...p} type="text" name="event_type_path" className="mono" value={f.event_type_path} onChange={(e) => set("event_type_path", e.target.value)} />}
        </Field>
      </div>
      <div className="form-grid">
        <Field label="Event types that create and update records" error={fieldErrors.event_types} help="Comma-separated or one per line. Empty: every type.">
          {(p) => <textarea {...p} name="event_types" rows={3} value={f.event_types} onChange={(e) => set("event_types", e.target.value)} placeholder="customer.created, customer.updated" spellCheck={false} />}
        </Field>
        <Field label="Event types that delete the record" error={fieldErrors.delete_event_types} help="The record of their key is removed; its changelog stays.">
          {(p) => <textarea {...p} name="delete_event_types" rows={3} value={f.delete_event_types} onChange={(e) => set("delete_event_types", e.target.value)} placeholder="customer.deleted" spellCheck={false} />}
        </Field>
      </div>
      <Field
        label="Transform (JSONata, optional)"
        error={fieldErrors.transform_expression}
        help={
          <>
            Without it a record's data is the whole body; with it, the expression's result. The parsed body is the input; <code>$headers</code>, <code>$query</code>, <code>$method</code> are bound.
          </>
        }
      >
        {(p) => (
          <textarea
            {...p}
            name="transform_expression"
            rows={5}
            value={f.transform_expression}
            onChange={(e) => set("transform_expression", e.target.value)}
            placeholder={'data.object.{\n  "email": email,\n  "name": name\n}'}
            spellCheck={false}
          />
        )}
      </Field>
      <FormActions busy={busy} label={editing ? "Save collection" : "Create collection"} busyLabel={editing ? "Saving…" : "Creating…"} cancelTo={editing ? undefined : "/collections"} />

      <ConfirmDialog
        open={confirmRebuild}
        title="Rebuild this collection?"
        confirmLabel="Save and rebuild"
        busy={busy}
        onConfirm={() => {
          const body = bodyOf();
          if (body) void save(body);
        }}
        onCancel={() => setConfirmRebuild(false)}
      >
        <p>
          The new definition changes how records are built: the {plural(collection?.record_count ?? 0, "record")} of <strong>{collection?.name}</strong> and their whole changelog are deleted and built again from the source's
          stored events. Events older than the retention are gone and will not come back. This cannot be undone.
        </p>
      </ConfirmDialog>
    </form>
  );
}

// ---------------------------------------------------------------- detail

export function CollectionDetailPage({ id }: { id: string }) {
  const loaded = useLoad(() => api.get<{ collection: Collection }>(`/collections/${encodeURIComponent(id)}`), [id]);
  const c = loaded.data?.collection;
  const deletion = useDeleteResource("/collections", "Collection", c ?? null);
  // The builder runs in the background: follow it closely while it works, slowly once it is live.
  const working = c ? c.build_status === "backfilling" || c.events_pending > 0 : false;
  useInterval(() => void loaded.reload(), c ? (working ? 1000 : 5000) : null);

  if (!c) return <PageLoading title="Collection" sub={<Link to="/collections">← All collections</Link>} error={loaded.error} onRetry={loaded.reload} />;

  return (
    <>
      <PageHead
        title={c.name}
        sub={<Link to="/collections">← All collections</Link>}
        actions={<DetailActions onDelete={deletion.ask} />}
      />
      {c.description ? <p className="muted">{c.description}</p> : null}
      <BuildPanel c={c} />
      <RecordsBrowser collection={c} />
      <CollectionForm key={c.updated_at} collection={c} onSaved={(saved) => loaded.setData(() => ({ collection: saved }))} />

      <ConfirmDialog {...deletion.dialog} title="Delete this collection?" confirmLabel="Delete collection">
        <p>
          <strong>{c.name}</strong> is deleted with its {plural(c.record_count, "record")} and the changelog of every record, deleted ones included. The source and its events stay. This cannot be undone.
        </p>
      </ConfirmDialog>
    </>
  );
}

function Counter({ label, value, hint, bad }: { label: string; value: number; hint?: string; bad?: boolean }) {
  return (
    <div className="card" role="group" aria-label={label}>
      <div className="label">{label}</div>
      <div className="value" style={bad && value > 0 ? { color: "var(--danger)" } : undefined}>
        {num(value)}
      </div>
      {hint ? <div className="hint">{hint}</div> : null}
    </div>
  );
}

/** The builder's state: backfill progress, what it handled, and what it could not build (counted, never dropped silently). */
function BuildPanel({ c }: { c: Collection }) {
  const done = Math.round(backfillPct(c));
  return (
    <section className="panel" aria-label="Build">
      <div className="panel-head">
        <h2>Build</h2>
        <BuildBadge c={c} />
      </div>
      {c.build_status === "backfilling" ? (
        <div style={{ marginBottom: 14 }}>
          <div className="progress" role="progressbar" aria-valuemin={0} aria-valuemax={100} aria-valuenow={done} aria-label="Backfill progress">
            <div style={{ width: `${done}%` }} />
          </div>
          <div className="muted" style={{ marginTop: 6, fontSize: 13 }}>
            Backfilling from the events stored before the collection was created: {num(c.backfill_processed)} of {num(c.backfill_total)} handled.
          </div>
        </div>
      ) : (
        <p className="muted" style={{ marginTop: 0 }}>
          {c.backfill_total > 0 ? (
            <>
              Backfilled from {plural(c.backfill_total, "stored event")}, done <Time iso={c.backfill_completed_at} />.{" "}
            </>
          ) : null}
          Live: new events of {c.source_name ?? "the source"} are built as they arrive.
        </p>
      )}
      <div className="cards" style={{ marginBottom: 0 }}>
        <Counter label="Records" value={c.record_count} />
        <Counter label="Events handled" value={c.events_processed} hint="all of the below included" />
        <Counter label="Waiting" value={c.events_pending} hint="stored, not built yet" />
        <Counter label="Ignored" value={c.events_ignored} hint="other event types" />
        <Counter label="Missing key" value={c.events_missing_key} hint={`no string or number at ${c.key_path}`} bad />
        <Counter label="Transform failed" value={c.events_transform_failed} hint="failed or returned nothing" bad />
      </div>
      {c.last_error ? (
        <div className="alert warn" role="status" style={{ marginTop: 14, marginBottom: 0 }} data-testid="last-error">
          <strong>Last event not built:</strong> {c.last_error}
          {c.last_error_event_id ? (
            <>
              {" "}
              · event{" "}
              <Link to={`/events/${c.last_error_event_id}`} className="mono">
                {c.last_error_event_id}
              </Link>
            </>
          ) : null}{" "}
          · <Time iso={c.last_error_at} />
        </div>
      ) : null}
      <dl className="kv" style={{ marginTop: 14 }}>
        <dt>Last event handled</dt>
        <dd>
          {c.position_event_id ? (
            <>
              <Link to={`/events/${c.position_event_id}`} className="mono">
                {c.position_event_id}
              </Link>{" "}
              (received <Time iso={c.position_at} />)
            </>
          ) : (
            <span className="muted">none yet</span>
          )}
        </dd>
        <dt>Source</dt>
        <dd>
          <Link to={`/sources/${c.source_id}`}>{c.source_name ?? c.source_id}</Link> · <Link to={`/events?source_id=${c.source_id}`}>its events</Link>
        </dd>
      </dl>
    </section>
  );
}

// ---------------------------------------------------------------- records

const PAGE = 25;

/** Records newest first, with search and cursor paging (Previous goes back through the cursors seen). */
function RecordsBrowser({ collection }: { collection: Collection }) {
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
        <div className="pager">
          <span>
            Page {cursors.length + 1}
            {rows.length > 0 ? ` · ${plural(rows.length, "record")}` : ""}
          </span>
          <span className="btn-row">
            <button type="button" className="btn small" disabled={cursors.length === 0} onClick={() => setCursors((cs) => cs.slice(0, -1))}>
              Previous
            </button>
            <button
              type="button"
              className="btn small"
              disabled={!records.data?.has_more || !records.data.next_cursor}
              onClick={() => {
                const next = records.data?.next_cursor;
                if (next) setCursors((cs) => [...cs, next]);
              }}
            >
              Next
            </button>
          </span>
        </div>
      </ListPanel>
    </>
  );
}
