import { useRef, useState, type FormEvent } from "react";
import { api } from "../api";
import { StatusBadge } from "../components/badges";
import { DetailActions } from "../components/detailActions";
import { ConfirmDialog } from "../components/dialogs";
import { Field, FormActions, Options } from "../components/forms";
import { ErrorAlert, PageHead, PageLoading } from "../components/layout";
import { Time } from "../components/time";
import { toast } from "../components/toasts";
import { prettyJson } from "../format";
import { useLoad, useSubmit } from "../hooks";
import { checkJson } from "../json";
import { JsonField } from "../jsonField";
import { ResourceListPage, useDeleteResource } from "../resources";
import { Link, navigate } from "../router";
import { EVENT_TYPE_STATUSES, type EventType } from "../types";
import { WriteForm } from "../components/writeForm";

export function EventTypesPage() {
  const types = useLoad(() => api.get<{ event_types: EventType[] }>("/event-types"), []);
  return (
    <ResourceListPage
      title="Event types"
      noun="event type"
      path="/event-types"
      sub="The catalogue of event names, each with an optional JSON Schema that topic publishes and outbound messages of that type must match."
      emptyText="Name the events that flow through the relay (order.created, customer.updated…) and give each a JSON Schema to refuse malformed payloads."
      loaded={types}
      rows={types.data?.event_types}
      columns={[
        {
          label: "Name",
          render: (t) => (
            <>
              <Link to={`/event-types/${t.id}`} className="mono">
                {t.name}
              </Link>
              {t.description ? (
                <div className="muted" style={{ fontSize: 12 }}>
                  {t.description}
                </div>
              ) : null}
            </>
          ),
        },
        { label: "Status", render: (t) => <StatusBadge status={t.status} /> },
        { label: "Schema", render: (t) => (t.json_schema ? "JSON Schema" : <span className="muted">none</span>) },
        { label: "Updated", hideNarrow: true, render: (t) => <Time iso={t.updated_at} /> },
      ]}
    />
  );
}

export function EventTypeEditPage({ id }: { id?: string }) {
  const existing = useLoad(() => (id ? api.get<{ event_type: EventType }>(`/event-types/${encodeURIComponent(id)}`) : Promise.resolve(null)), [id]);
  const t = existing.data?.event_type;
  if (id && !t) return <PageLoading title="Event type" sub={<Link to="/event-types">← All event types</Link>} error={existing.error} onRetry={existing.reload} />;
  return <EventTypeForm key={t?.updated_at ?? "new"} eventType={t ?? null} onSaved={(saved) => existing.setData(() => ({ event_type: saved }))} />;
}

const fields = ["name", "description", "json_schema", "status"];

function EventTypeForm({ eventType, onSaved }: { eventType: EventType | null; onSaved: (t: EventType) => void }) {
  const initial = useRef({ name: eventType?.name ?? "", description: eventType?.description ?? "", status: eventType?.status ?? "active", json_schema: prettyJson(eventType?.json_schema).text });
  const [f, setF] = useState(initial.current);
  const set = (k: keyof typeof f, v: string) => setF((o) => ({ ...o, [k]: v }));
  const { busy, fieldErrors, formError, submit, setFieldErrors } = useSubmit();
  const deletion = useDeleteResource("/event-types", "Event type", eventType);
  const nameRef = useRef<HTMLInputElement>(null);
  const editing = eventType !== null;

  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    const init = initial.current;
    const errors: Record<string, string> = {};
    if (!f.name.trim()) errors.name = "Name the event type, e.g. order.created";
    const schema = checkJson(f.json_schema, { object: true });
    if (!schema.ok) errors.json_schema = schema.error;
    if (Object.keys(errors).length > 0) {
      setFieldErrors(errors);
      if (errors.name) nameRef.current?.focus();
      return;
    }
    const schemaValue = schema.ok && !schema.empty ? schema.value : null;
    const body: Record<string, unknown> = {};
    if (!editing || f.name !== init.name) body.name = f.name.trim();
    if (!editing || f.status !== init.status) body.status = f.status;
    if (f.description !== init.description) body.description = f.description.trim() || null;
    if (f.json_schema !== init.json_schema && (editing || schemaValue !== null)) body.json_schema = schemaValue;
    if (editing && Object.keys(body).length === 0) return toast("Nothing changed");
    const res = await submit(
      () => (editing ? api.patch<{ event_type: EventType }>(`/event-types/${encodeURIComponent(eventType.id)}`, body) : api.post<{ event_type: EventType }>("/event-types", body)),
      fields,
    );
    if (!res) return;
    toast(editing ? "Event type saved" : `Event type “${res.event_type.name}” created`);
    if (editing) onSaved(res.event_type);
    else navigate(`/event-types/${res.event_type.id}`);
  };

  return (
    <>
      <PageHead
        title={
          editing ? (
            <>
              <span className="mono" style={{ fontSize: "0.85em" }}>
                {eventType.name}
              </span>{" "}
              <StatusBadge status={eventType.status} />
            </>
          ) : (
            "New event type"
          )
        }
        sub={<Link to="/event-types">← All event types</Link>}
        actions={
          editing ? (
            <DetailActions onDelete={deletion.ask} />
          ) : null
        }
      />
      <WriteForm className="panel form" onSubmit={onSubmit} aria-label={editing ? "Event type settings" : "New event type"} noValidate>
        <ErrorAlert error={formError} />
        <div className="form-grid">
          <Field label="Name" error={fieldErrors.name} help="Letters, digits and . _ : / - (order.created, issues/opened).">
            {(p) => <input {...p} ref={nameRef} type="text" name="name" className="mono" value={f.name} onChange={(e) => set("name", e.target.value)} maxLength={200} placeholder="order.created" />}
          </Field>
          <Field label="Status" error={fieldErrors.status} help="Deprecated types still validate; lists that offer types mark them.">
            {(p) => (
              <select {...p} value={f.status} onChange={(e) => set("status", e.target.value)}>
                <Options values={EVENT_TYPE_STATUSES} />
              </select>
            )}
          </Field>
        </div>
        <Field label="Description (optional)" error={fieldErrors.description}>
          {(p) => <input {...p} type="text" name="description" value={f.description} onChange={(e) => set("description", e.target.value)} />}
        </Field>
        <JsonField
          label="JSON Schema (optional)"
          name="json_schema"
          object
          rows={14}
          value={f.json_schema}
          onChange={(v) => set("json_schema", v)}
          error={fieldErrors.json_schema}
          placeholder={'{\n  "type": "object",\n  "required": ["id", "total"],\n  "properties": {\n    "id": { "type": "string" },\n    "total": { "type": "integer", "minimum": 0 }\n  }\n}'}
          help="Draft-07 unless $schema names 2019-09 or 2020-12. Payloads of this type that do not match are refused with 422. Empty: no check."
        />
        <FormActions busy={busy} label={editing ? "Save event type" : "Create event type"} cancelTo="/event-types" />
      </WriteForm>

      <ConfirmDialog {...deletion.dialog} title="Delete this event type?" confirmLabel="Delete event type">
        <p>
          <strong className="mono">{eventType?.name}</strong> is deleted with its schema: topic publishes and outbound messages of this type are no longer checked against it. Events already stored keep their type. This cannot
          be undone.
        </p>
      </ConfirmDialog>
    </>
  );
}
