/** Creating and editing a collection: its source, how events become records, and which settings rebuild it. */
import { useRef, useState, type FormEvent } from "react";
import { api } from "../../api";
import { ConfirmDialog } from "../../components/dialogs";
import { Field, FormActions } from "../../components/forms";
import { Empty, ErrorAlert, PageHead } from "../../components/layout";
import { toast } from "../../components/toasts";
import { parseJsonField, plural } from "../../format";
import { useLoad, useSubmit } from "../../hooks";
import { Link, navigate } from "../../router";
import type { Collection, Source } from "../../types";
import { WriteForm } from "../../components/writeForm";

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

export function CollectionForm({ collection, onSaved }: { collection: Collection | null; onSaved: (c: Collection) => void }) {
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
    <WriteForm className="panel form" onSubmit={onSubmit} aria-label={editing ? "Collection settings" : "New collection"} noValidate>
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
    </WriteForm>
  );
}
