import { useRef, useState, type FormEvent } from "react";
import { api, ApiError, errorMessage } from "../api";
import { StatusBadge } from "../components/badges";
import { DetailActions } from "../components/detailActions";
import { ConfirmDialog } from "../components/dialogs";
import { Check, Field, FormActions, NamedOptions, Options } from "../components/forms";
import { Empty, ErrorAlert, PageHead, PageLoading } from "../components/layout";
import { Time } from "../components/time";
import { toast } from "../components/toasts";
import { num, parseJsonField, plural, shortId } from "../format";
import { useLoad, useSubmit } from "../hooks";
import { ResourceListPage, useDeleteResource } from "../resources";
import { Link, navigate, useLocation } from "../router";
import { FILTER_OPERATORS, type Connection, type Destination, type EventListItem, type FilterRule, type Source } from "../types";
import { WriteForm } from "../components/writeForm";
import { Can } from "../can";
import { OrderingPanel } from "../components/orderingPanel";
import { OrderFields } from "./connectionOrder";

export function ConnectionsPage() {
  const conns = useLoad(() => api.get<{ connections: Connection[] }>("/connections"), []);
  return (
    <ResourceListPage
      title="Connections"
      noun="connection"
      path="/connections"
      sub="A connection routes a source's events to a destination, optionally filtered and reshaped by a JSONata transform."
      emptyText="Events are stored but not delivered until a connection links their source to a destination."
      loaded={conns}
      rows={conns.data?.connections}
      columns={[
        { label: "Name", render: (c) => <Link to={`/connections/${c.id}`}>{c.name}</Link> },
        {
          label: "Route",
          render: (c) => (
            <span>
              <Link to={`/sources/${c.source_id}`}>{c.source_name ?? "source"}</Link> → <Link to={`/destinations/${c.destination_id}`}>{c.destination_name ?? "destination"}</Link>
            </span>
          ),
        },
        { label: "Enabled", render: (c) => (c.enabled ? <span className="badge ok">enabled</span> : <span className="badge">disabled</span>) },
        { label: "Filters", hideNarrow: true, render: (c) => parseJsonField<unknown[]>(c.filter_rules, []).length || <span className="muted">none</span> },
        { label: "Transform", hideNarrow: true, render: (c) => (c.transform_enabled && c.transform_expression ? "JSONata" : <span className="muted">none</span>) },
        { label: "Events", className: "num", render: (c) => num(c.event_count) },
        { label: "Last event", hideNarrow: true, render: (c) => <Time iso={c.last_event_at} /> },
      ]}
    />
  );
}

export function ConnectionEditPage({ id }: { id?: string }) {
  const existing = useLoad(() => (id ? api.get<{ connection: Connection | null }>(`/connections/${encodeURIComponent(id)}`) : Promise.resolve(null)), [id]);
  const sources = useLoad(() => api.get<{ sources: Source[] }>("/sources"), []);
  const dests = useLoad(() => api.get<{ destinations: Destination[] }>("/destinations"), []);
  const c = existing.data?.connection ?? null;
  const title = id ? (c?.name ?? "Connection") : "New connection";
  const error = existing.error ?? sources.error ?? dests.error;
  if ((id && !c) || !sources.data || !dests.data) {
    return <PageLoading title={title} sub={<Link to="/connections">← All connections</Link>} error={error} />;
  }
  return (
    <>
      <ConnectionForm key={c?.updated_at ?? "new"} connection={c} sources={sources.data.sources} destinations={dests.data.destinations} onSaved={(saved) => existing.setData(() => ({ connection: saved }))} />
      {c?.ordered ? <OrderingPanel path={`/connections/${encodeURIComponent(c.id)}`} /> : null}
    </>
  );
}

interface RuleRow {
  key: number;
  field: string;
  operator: string;
  value: string;
}

let ruleSeq = 0;

function ruleToRow(r: FilterRule): RuleRow {
  const v = r.value;
  return { key: ++ruleSeq, field: r.field, operator: r.operator, value: v === undefined ? "" : typeof v === "string" ? v : JSON.stringify(v) };
}

/** The value as typed, turned into what the operator expects: numbers, booleans and JSON arrays where they make sense. */
function parseValue(op: string, raw: string): unknown {
  const t = raw.trim();
  if (op === "exists") return t === "" ? undefined : t !== "false";
  if (op === "in") {
    if (t.startsWith("[")) {
      try {
        return JSON.parse(t) as unknown;
      } catch {
        return t;
      }
    }
    return t
      .split(",")
      .map((x) => x.trim())
      .filter(Boolean)
      .map((x) => scalar(x));
  }
  if (op === "regex" || op === "contains") return raw;
  return scalar(t);
}

function scalar(t: string): unknown {
  if (t === "true") return true;
  if (t === "false") return false;
  if (t === "null") return null;
  if (t !== "" && /^-?\d+(\.\d+)?$/.test(t)) return Number(t);
  return t;
}

const FIELD_HINTS = ["body.type", "body.data.id", "headers.x-github-event", "query.", "method", "path"];

function ConnectionForm({ connection, sources, destinations, onSaved }: { connection: Connection | null; sources: Source[]; destinations: Destination[]; onSaved: (c: Connection) => void }) {
  const { search } = useLocation();
  const editing = connection !== null;
  const [name, setName] = useState(connection?.name ?? "");
  const [description, setDescription] = useState(connection?.description ?? "");
  // Nothing is chosen for the user: a connection to the wrong destination delivers events where they do not belong.
  const [sourceId, setSourceId] = useState(connection?.source_id ?? search.get("source_id") ?? "");
  const [destinationId, setDestinationId] = useState(connection?.destination_id ?? search.get("destination_id") ?? "");
  const [enabled, setEnabled] = useState(connection ? connection.enabled === 1 : true);
  const [rules, setRules] = useState<RuleRow[]>(parseJsonField<FilterRule[]>(connection?.filter_rules, []).map(ruleToRow));
  const [transformEnabled, setTransformEnabled] = useState(connection ? connection.transform_enabled === 1 : false);
  const [expression, setExpression] = useState(connection?.transform_expression ?? "");
  const [ordered, setOrdered] = useState(connection?.ordered ?? false);
  const [orderingKey, setOrderingKey] = useState(connection?.ordering_key ?? "");
  const [onDlq, setOnDlq] = useState<"continue" | "block">(connection?.on_dlq ?? "continue");
  const { busy, fieldErrors, formError, submit, setFieldErrors } = useSubmit();
  const deletion = useDeleteResource("/connections", "Connection", connection);
  const nameRef = useRef<HTMLInputElement>(null);

  const setRule = (key: number, patch: Partial<RuleRow>) => setRules((rs) => rs.map((r) => (r.key === key ? { ...r, ...patch } : r)));
  // Rule errors are by position: once a rule is gone they no longer point at the right rows.
  const removeRule = (key: number) => {
    setRules((rs) => rs.filter((x) => x.key !== key));
    setFieldErrors(Object.fromEntries(Object.entries(fieldErrors).filter(([k]) => !k.startsWith("filter_rules."))));
  };

  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    const errors: Record<string, string> = {};
    if (!name.trim()) errors.name = "Give the connection a name, e.g. “GitHub → CI”";
    if (!sourceId) errors.source_id = "Pick the source whose events to deliver";
    if (!destinationId) errors.destination_id = "Pick where to deliver them";
    if (transformEnabled && !expression.trim()) errors.transform_expression = "Write a JSONata expression, or turn the transform off";
    // A rule left empty is a mistake to point at, not something to drop: the user meant to filter.
    rules.forEach((r, i) => {
      if (!r.field.trim()) errors[`filter_rules.${i}.field`] = r.value.trim() ? "Enter the field to test, e.g. body.type" : "Fill in this rule or remove it";
    });
    if (Object.keys(errors).length > 0) {
      setFieldErrors(errors);
      if (errors.name) nameRef.current?.focus();
      // After the render that marks the fields.
      else setTimeout(() => document.querySelector<HTMLElement>("form [aria-invalid=true]")?.focus(), 0);
      return;
    }
    const filter_rules = rules.map((r) => {
      const value = parseValue(r.operator, r.value);
      return value === undefined ? { field: r.field.trim(), operator: r.operator } : { field: r.field.trim(), operator: r.operator, value };
    });
    const body = {
      name: name.trim(),
      description: description.trim() || null,
      source_id: sourceId,
      destination_id: destinationId,
      enabled,
      filter_rules: filter_rules.length ? filter_rules : null,
      transform_enabled: transformEnabled,
      transform_expression: expression.trim() ? expression : null,
      ordered,
      ordering_key: orderingKey.trim() || null,
      on_dlq: onDlq,
    };
    const res = await submit(
      () => (editing ? api.patch<{ connection: Connection }>(`/connections/${encodeURIComponent(connection.id)}`, body) : api.post<{ connection: Connection }>("/connections", body)),
      ["name", "description", "source_id", "destination_id", "enabled", "filter_rules", ...rules.flatMap((_, i) => ["field", "operator", "value"].map((k) => `filter_rules.${i}.${k}`)), "transform_enabled", "transform_expression", "ordered", "ordering_key", "on_dlq"],
    );
    if (!res?.connection) return;
    toast(editing ? "Connection saved" : `Connection “${res.connection.name}” created`);
    if (editing) onSaved(res.connection);
    else navigate(`/connections/${res.connection.id}`);
  };

  if (sources.length === 0 || destinations.length === 0) {
    return (
      <>
        <PageHead title="New connection" sub={<Link to="/connections">← All connections</Link>} />
        <div className="panel">
          <Empty
            title={sources.length === 0 ? "Create a source first" : "Create a destination first"}
            action={
              <Can permission="write">
                <Link to={sources.length === 0 ? "/sources/new" : "/destinations/new"} className="btn primary">
                  {sources.length === 0 ? "New source" : "New destination"}
                </Link>
              </Can>
            }
          >
            A connection links a source to a destination.
          </Empty>
        </div>
      </>
    );
  }

  return (
    <>
      <PageHead
        title={editing ? connection.name : "New connection"}
        sub={<Link to="/connections">← All connections</Link>}
        actions={
          editing ? (
            <DetailActions onDelete={deletion.ask}>
              <Link to={`/attempts?connection_id=${connection.id}`} className="btn">
                Deliveries
              </Link>
              <Can permission="write">
                <Link to={`/replay?connection_id=${connection.id}`} className="btn">
                  Replay
                </Link>
              </Can>
            </DetailActions>
          ) : null
        }
      />
      <WriteForm className="panel form" onSubmit={onSubmit} aria-label={editing ? "Connection settings" : "New connection"} noValidate>
        <ErrorAlert error={formError} />
        {editing ? (
          <p className="muted" style={{ margin: 0 }}>
            <StatusBadge status={connection.status} /> {plural(connection.event_count, "event")} routed, last <Time iso={connection.last_event_at} />.
          </p>
        ) : null}
        <div className="form-grid">
          <Field label="Name" error={fieldErrors.name}>
            {(p) => <input {...p} ref={nameRef} type="text" name="name" value={name} onChange={(e) => setName(e.target.value)} />}
          </Field>
          <Field label="Source" error={fieldErrors.source_id}>
            {(p) => (
              <select {...p} name="source_id" value={sourceId} onChange={(e) => setSourceId(e.target.value)}>
                <option value="" disabled>
                  Choose a source…
                </option>
                <NamedOptions items={sources} />
              </select>
            )}
          </Field>
          <Field label="Destination" error={fieldErrors.destination_id}>
            {(p) => (
              <select {...p} name="destination_id" value={destinationId} onChange={(e) => setDestinationId(e.target.value)}>
                <option value="" disabled>
                  Choose a destination…
                </option>
                <NamedOptions items={destinations} />
              </select>
            )}
          </Field>
        </div>
        <Field label="Description (optional)" error={fieldErrors.description}>
          {(p) => <input {...p} type="text" value={description} onChange={(e) => setDescription(e.target.value)} />}
        </Field>
        <Check label="Enabled" checked={enabled} onChange={setEnabled} help="A disabled connection routes nothing." />

        <fieldset>
          <legend>Filter rules</legend>
          <p className="muted" style={{ margin: 0 }}>
            Only events matching <strong>every</strong> rule are delivered. Fields: <code>body.&lt;path&gt;</code>, <code>headers.&lt;name&gt;</code>, <code>query.&lt;name&gt;</code>, <code>method</code>, <code>path</code>. No rules: every event.
          </p>
          {fieldErrors.filter_rules ? (
            <div className="field-error" role="alert">
              {fieldErrors.filter_rules}
            </div>
          ) : null}
          <datalist id="rule-fields">
            {FIELD_HINTS.map((h) => (
              <option key={h} value={h} />
            ))}
          </datalist>
          {rules.map((r, i) => (
            <div className="rule-row" key={r.key} role="group" aria-label={`Rule ${i + 1}`}>
              <Field label="Field" error={fieldErrors[`filter_rules.${i}.field`]}>
                {(p) => <input {...p} type="text" list="rule-fields" value={r.field} onChange={(e) => setRule(r.key, { field: e.target.value })} placeholder="body.type" />}
              </Field>
              <Field label="Operator" error={fieldErrors[`filter_rules.${i}.operator`]}>
                {(p) => (
                  <select {...p} value={r.operator} onChange={(e) => setRule(r.key, { operator: e.target.value })}>
                    <Options values={FILTER_OPERATORS} />
                  </select>
                )}
              </Field>
              <Field label="Value" error={fieldErrors[`filter_rules.${i}.value`]} help={r.operator === "in" ? "Comma list or JSON array" : r.operator === "exists" ? "true or false" : undefined}>
                {(p) => <input {...p} type="text" value={r.value} onChange={(e) => setRule(r.key, { value: e.target.value })} placeholder={r.operator === "exists" ? "true" : "order.created"} />}
              </Field>
              <div className="field">
                <span className="label" aria-hidden="true">
                  &nbsp;
                </span>
                <button type="button" className="btn" onClick={() => removeRule(r.key)} aria-label={`Remove rule ${i + 1}`}>
                  Remove
                </button>
              </div>
            </div>
          ))}
          <div>
            <button type="button" className="btn small" onClick={() => setRules((rs) => [...rs, { key: ++ruleSeq, field: "", operator: "eq", value: "" }])}>
              Add rule
            </button>
          </div>
        </fieldset>

        <fieldset>
          <legend>Transform</legend>
          <Check label="Reshape the body with JSONata before delivery" checked={transformEnabled} onChange={setTransformEnabled} />
          <TransformEditor sourceId={sourceId} expression={expression} onChange={setExpression} error={fieldErrors.transform_expression} />
        </fieldset>

        <OrderFields ordered={ordered} setOrdered={setOrdered} orderingKey={orderingKey} setOrderingKey={setOrderingKey} onDlq={onDlq} setOnDlq={setOnDlq} errors={fieldErrors} />

        <FormActions busy={busy} label={editing ? "Save connection" : "Create connection"} cancelTo="/connections" />
      </WriteForm>

      <ConfirmDialog {...deletion.dialog} title="Delete this connection?" confirmLabel="Delete connection">
        <p>
          New events from <strong>{connection?.source_name}</strong> stop going to <strong>{connection?.destination_name}</strong>, and its filter rules and transform are deleted with it. Past deliveries stay recorded.
          This cannot be undone.
        </p>
      </ConfirmDialog>
    </>
  );
}

/** The JSONata expression with a preview of its result on a stored event of the chosen source. */
function TransformEditor({ sourceId, expression, onChange, error }: { sourceId: string; expression: string; onChange: (v: string) => void; error?: string }) {
  const events = useLoad(() => (sourceId ? api.get<{ events: EventListItem[] }>("/events", { source_id: sourceId, limit: 20 }) : Promise.resolve({ events: [] })), [sourceId]);
  const [eventId, setEventId] = useState("");
  const [result, setResult] = useState<string | null>(null);
  const [previewError, setPreviewError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const list = events.data?.events ?? [];
  // By default the newest event that passed verification: forged requests are rarely what you want to shape.
  const chosen = eventId || (list.find((e) => e.verification_status !== "failed") ?? list[0])?.id || "";

  const preview = async () => {
    setPreviewError(null);
    setResult(null);
    if (!expression.trim()) return setPreviewError("Write an expression to preview");
    if (!sourceId) return setPreviewError("Choose a source first: the preview runs on one of its events");
    if (!chosen) return setPreviewError("This source has no stored events yet: send one to its ingest URL first");
    setBusy(true);
    try {
      const r = await api.post<{ result: unknown }>("/connections/test-transform", { transform_expression: expression, event_id: chosen });
      setResult(r.result === undefined ? "undefined (nothing would be sent)" : JSON.stringify(r.result, null, 2));
    } catch (e) {
      setPreviewError(e instanceof ApiError ? (e.fieldErrors().transform_expression ?? e.message) : errorMessage(e));
    } finally {
      setBusy(false);
    }
  };

  const shownError = previewError ?? error;
  return (
    <div className="grid-2" style={{ alignItems: "start" }}>
      <Field label="JSONata expression" error={shownError ?? undefined} help={<>The parsed body is the input; <code>$headers</code>, <code>$query</code>, <code>$method</code> are bound. The result is the delivered body.</>}>
        {(p) => <textarea {...p} name="transform_expression" rows={8} value={expression} onChange={(e) => onChange(e.target.value)} placeholder={'{\n  "kind": type,\n  "id": data.id\n}'} spellCheck={false} />}
      </Field>
      <div className="field">
        <Field label="Preview on event">
          {(p) => (
            <select {...p} value={chosen} onChange={(e) => setEventId(e.target.value)} disabled={list.length === 0}>
              {list.length === 0 ? <option value="">{sourceId ? "No stored events for this source yet" : "Choose a source first"}</option> : null}
              {list.map((e) => (
                <option key={e.id} value={e.id}>
                  {shortId(e.id)} · {e.event_type ?? e.method} · {new Date(e.received_at).toLocaleString()}
                  {e.verification_status === "failed" ? " · signature failed" : ""}
                </option>
              ))}
            </select>
          )}
        </Field>
        <div>
          <button type="button" className="btn" onClick={preview} disabled={busy}>
            {busy ? "Running…" : "Preview transform"}
          </button>
        </div>
        {result !== null ? (
          <div aria-live="polite">
            <div className="label" style={{ fontWeight: 600, fontSize: 13, margin: "8px 0 4px" }}>
              Result
            </div>
            <pre className="code" data-testid="transform-result">
              {result}
            </pre>
          </div>
        ) : null}
      </div>
    </div>
  );
}
