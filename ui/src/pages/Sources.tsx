import { useEffect, useRef, useState, type FormEvent } from "react";
import { api, errorMessage } from "../api";
import { StatusBadge } from "../components/badges";
import { CopyButton, CopyField } from "../components/copy";
import { DetailActions } from "../components/detailActions";
import { ConfirmDialog } from "../components/dialogs";
import { Check, Field, FormActions, Options } from "../components/forms";
import { Empty, ErrorAlert, Loading, PageHead, PageLoading } from "../components/layout";
import { Time } from "../components/time";
import { toast } from "../components/toasts";
import { num, parseJsonField, plural, prettyJson } from "../format";
import { useAction, useLoad, useSubmit } from "../hooks";
import { ResourceListPage } from "../resources";
import { Link, navigate, useLocation } from "../router";
import { DEDUP_STRATEGIES, SOURCE_STATUSES, VERIFICATION_TYPES, type Source, type SourceTemplate } from "../types";

// ---------------------------------------------------------------- list

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

// ---------------------------------------------------------------- create

export function NewSourcePage() {
  const templates = useLoad(() => api.get<{ templates: SourceTemplate[] }>("/sources/templates"), []);
  const [template, setTemplate] = useState("");
  const [name, setName] = useState("");
  const [secret, setSecret] = useState("");
  const [description, setDescription] = useState("");
  const { busy, fieldErrors, formError, submit, setFieldErrors } = useSubmit();
  const nameRef = useRef<HTMLInputElement>(null);
  const secretRef = useRef<HTMLInputElement>(null);
  const chosen = templates.data?.templates.find((t) => t.id === template);

  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    const missing: Record<string, string> = {};
    if (!name.trim()) missing.name = "Give the source a name, e.g. “GitHub production”";
    if (template && !secret) missing.verification_secret = `Paste the signing secret you set in ${chosen?.name ?? "the provider"}`;
    if (Object.keys(missing).length > 0) {
      setFieldErrors(missing);
      (missing.name ? nameRef : secretRef).current?.focus();
      return;
    }
    const res = await submit(
      () =>
        api.post<{ source: Source }>("/sources", {
          name: name.trim(),
          ...(template ? { template, verification_secret: secret } : {}),
          ...(description.trim() ? { description: description.trim() } : {}),
        }),
      ["name", "template", "verification_secret", "description"],
    );
    if (res) {
      toast(`Source “${res.source.name}” created`);
      navigate(`/sources/${res.source.id}?created=1`);
    }
  };

  return (
    <>
      <PageHead title="New source" sub={<Link to="/sources">← All sources</Link>} />
      <form className="panel form" onSubmit={onSubmit} aria-label="New source" noValidate>
        <ErrorAlert error={formError ?? templates.error} />
        <fieldset>
          <legend>Provider</legend>
          <p className="muted" style={{ margin: 0 }}>
            A template fills in how the provider signs its requests; you only paste the secret.
          </p>
          {templates.loading && !templates.data ? (
            <Loading what="Loading templates" />
          ) : (
            <div className="choice-grid" role="radiogroup" aria-label="Template">
              <label className={`choice ${template === "" ? "on" : ""}`}>
                <input type="radio" name="template" value="" checked={template === ""} onChange={() => setTemplate("")} />
                <span>
                  <strong>No verification</strong>
                  <span className="muted">Accept every request. Set up checks later.</span>
                </span>
              </label>
              {templates.data?.templates.map((t) => (
                <label key={t.id} className={`choice ${template === t.id ? "on" : ""}`}>
                  <input type="radio" name="template" value={t.id} checked={template === t.id} onChange={() => setTemplate(t.id)} />
                  <span>
                    <strong>{t.name}</strong>
                    <span className="muted">{t.description}</span>
                  </span>
                </label>
              ))}
            </div>
          )}
          {fieldErrors.template ? <div className="field-error">{fieldErrors.template}</div> : null}
        </fieldset>
        <div className="form-grid">
          <Field label="Name" error={fieldErrors.name}>
            {(p) => <input {...p} ref={nameRef} type="text" name="name" value={name} onChange={(e) => setName(e.target.value)} maxLength={200} />}
          </Field>
          {template ? (
            <Field
              label={`${chosen?.name ?? ""} signing secret`}
              error={fieldErrors.verification_secret}
              help={chosen?.verification_type === "standard-webhooks" ? "The whsec_… secret from the provider." : "The secret you entered in the provider's webhook settings."}
            >
              {(p) => <input {...p} ref={secretRef} type="password" name="verification_secret" autoComplete="off" value={secret} onChange={(e) => setSecret(e.target.value)} />}
            </Field>
          ) : null}
        </div>
        <Field label="Description (optional)" error={fieldErrors.description}>
          {(p) => <input {...p} type="text" name="description" value={description} onChange={(e) => setDescription(e.target.value)} />}
        </Field>
        <FormActions busy={busy} label="Create source" busyLabel="Creating…" cancelTo="/sources" />
      </form>
    </>
  );
}

// ---------------------------------------------------------------- detail and settings

export function SourceDetailPage({ id }: { id: string }) {
  const { search } = useLocation();
  const source = useLoad(() => api.get<{ source: Source }>(`/sources/${encodeURIComponent(id)}`), [id]);
  const [confirmDelete, setConfirmDelete] = useState(false);
  const { busy, error: actionError, run } = useAction();
  const s = source.data?.source;

  const setStatus = (status: string) =>
    run(async () => {
      const res = await api.patch<{ source: Source }>(`/sources/${encodeURIComponent(id)}`, { status });
      source.setData(() => res);
      toast(`Source ${status === "active" ? "resumed" : status}`);
    });

  const remove = () =>
    run(async () => {
      await api.del(`/sources/${encodeURIComponent(id)}`);
      toast(`Source “${s?.name}” deleted`);
      navigate("/sources");
    });

  if (!s) return <PageLoading title="Source" sub={<Link to="/sources">← All sources</Link>} error={source.error} onRetry={source.reload} />;

  return (
    <>
      <PageHead
        title={
          <>
            {s.name} <StatusBadge status={s.status} />
          </>
        }
        sub={<Link to="/sources">← All sources</Link>}
        actions={
          <DetailActions
            moves={[
              s.status === "active" ? { label: "Pause", to: "paused" } : { label: s.status === "paused" ? "Resume" : "Enable", to: "active" },
              ...(s.status !== "disabled" ? [{ label: "Disable", to: "disabled" }] : []),
            ]}
            busy={busy}
            onMove={setStatus}
            onDelete={() => setConfirmDelete(true)}
          />
        }
      />
      <ErrorAlert error={actionError} />
      {search.get("created") ? (
        <div className="alert ok" role="status">
          Source created. Paste its ingest URL into the provider's webhook settings; events will show up on the <Link to={`/events?source_id=${s.id}`}>Events page</Link> as they arrive.
        </div>
      ) : null}
      {s.status === "paused" ? <div className="alert warn">Paused: requests are stored but held; they are delivered when you resume.</div> : null}
      {s.status === "disabled" ? <div className="alert warn">Disabled: the ingest URL answers 403 and stores nothing.</div> : null}

      <section className="panel" aria-label="Ingest URL">
        <h2>Ingest URL</h2>
        <CopyField value={s.ingest_url} label="Ingest URL" />
        <dl className="kv" style={{ marginTop: 14 }}>
          <dt>Events</dt>
          <dd>
            {num(s.event_count)} · <Link to={`/events?source_id=${s.id}`}>view events</Link>
          </dd>
          <dt>Requests</dt>
          <dd>{num(s.request_count)}</dd>
          <dt>Last event</dt>
          <dd>
            <Time iso={s.last_event_at} />
          </dd>
          <dt>Template</dt>
          <dd>{s.template ?? "none"}</dd>
          <dt>Id</dt>
          <dd className="mono">{s.id}</dd>
        </dl>
      </section>

      <SourceSettings key={s.updated_at} source={s} onSaved={(updated) => source.setData(() => ({ source: updated }))} />

      <ConfirmDialog open={confirmDelete} title="Delete this source?" confirmLabel="Delete source" busy={busy} error={actionError} onConfirm={remove} onCancel={() => setConfirmDelete(false)}>
        <p>
          <strong>{s.name}</strong> is deleted with its {plural(s.event_count, "stored event")} and their delivery history; deliveries still queued or waiting for a retry are never sent. Its connections are removed, and its
          ingest URL stops working: providers still sending to it get errors. This cannot be undone.
        </p>
      </ConfirmDialog>
    </>
  );
}

interface SettingsState {
  name: string;
  description: string;
  verification_enabled: boolean;
  verification_type: string;
  verification_header: string;
  verification_secret: string;
  verification_config: string;
  ip_allowlist: string;
  ip_denylist: string;
  dedup_enabled: boolean;
  dedup_strategy: string;
  dedup_field: string;
  dedup_window_seconds: string;
  schema_validation_enabled: boolean;
  json_schema: string;
  schema_action: string;
}

function toState(s: Source): SettingsState {
  const list = (v: string | null) => parseJsonField<string[]>(v, []).join("\n");
  return {
    name: s.name,
    description: s.description ?? "",
    verification_enabled: s.verification_enabled === 1,
    verification_type: s.verification_type ?? "",
    verification_header: s.verification_header ?? "",
    verification_secret: "",
    verification_config: s.verification_config ? prettyJson(s.verification_config).text : "",
    ip_allowlist: list(s.ip_allowlist),
    ip_denylist: list(s.ip_denylist),
    dedup_enabled: s.dedup_enabled === 1,
    dedup_strategy: s.dedup_strategy ?? "",
    dedup_field: s.dedup_field ?? "",
    dedup_window_seconds: String(s.dedup_window_seconds),
    schema_validation_enabled: s.schema_validation_enabled === 1,
    json_schema: s.json_schema ? prettyJson(s.json_schema).text : "",
    schema_action: s.schema_action ?? "reject",
  };
}

const settingsFields = [
  "name",
  "description",
  "verification_enabled",
  "verification_type",
  "verification_header",
  "verification_secret",
  "verification_config",
  "ip_allowlist",
  "ip_denylist",
  "dedup_enabled",
  "dedup_strategy",
  "dedup_field",
  "dedup_window_seconds",
  "schema_validation_enabled",
  "json_schema",
  "schema_action",
];

/** Verification, IP filter, dedup and schema settings: only changed fields are sent. */
function SourceSettings({ source, onSaved }: { source: Source; onSaved: (s: Source) => void }) {
  const initial = useRef(toState(source));
  const [f, setF] = useState<SettingsState>(initial.current);
  const [revealed, setRevealed] = useState<string | null>(null);
  const { busy, fieldErrors, formError, submit, setFieldErrors } = useSubmit();
  const set = <K extends keyof SettingsState>(k: K, v: SettingsState[K]) => setF((old) => ({ ...old, [k]: v }));

  useEffect(() => {
    initial.current = toState(source);
  }, [source]);

  const reveal = async () => {
    try {
      const r = await api.get<{ secret: string | null }>(`/sources/${encodeURIComponent(source.id)}/secret`);
      setRevealed(r.secret ?? "");
    } catch (e) {
      setFieldErrors({ verification_secret: errorMessage(e) });
    }
  };

  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    const init = initial.current;
    const body: Record<string, unknown> = {};
    const errors: Record<string, string> = {};
    const json = (k: "verification_config" | "json_schema") => {
      if (f[k].trim() === "") return null;
      try {
        return JSON.parse(f[k]) as unknown;
      } catch {
        errors[k] = "is not valid JSON";
        return undefined;
      }
    };
    const lines = (v: string) =>
      v
        .split(/[\n,]/)
        .map((x) => x.trim())
        .filter(Boolean);
    if (f.name !== init.name) body.name = f.name.trim();
    if (f.description !== init.description) body.description = f.description.trim() || null;
    if (f.verification_enabled !== init.verification_enabled) body.verification_enabled = f.verification_enabled;
    if (f.verification_type !== init.verification_type) body.verification_type = f.verification_type || null;
    if (f.verification_header !== init.verification_header) body.verification_header = f.verification_header.trim() || null;
    if (f.verification_secret) body.verification_secret = f.verification_secret;
    if (f.verification_config !== init.verification_config) body.verification_config = json("verification_config");
    if (f.ip_allowlist !== init.ip_allowlist) body.ip_allowlist = lines(f.ip_allowlist).length ? lines(f.ip_allowlist) : null;
    if (f.ip_denylist !== init.ip_denylist) body.ip_denylist = lines(f.ip_denylist).length ? lines(f.ip_denylist) : null;
    if (f.dedup_enabled !== init.dedup_enabled) body.dedup_enabled = f.dedup_enabled;
    if (f.dedup_strategy !== init.dedup_strategy) body.dedup_strategy = f.dedup_strategy || null;
    if (f.dedup_field !== init.dedup_field) body.dedup_field = f.dedup_field.trim() || null;
    if (f.dedup_window_seconds !== init.dedup_window_seconds) {
      const n = Number(f.dedup_window_seconds);
      if (!Number.isInteger(n) || n < 1) errors.dedup_window_seconds = "must be a whole number of seconds, at least 1";
      else body.dedup_window_seconds = n;
    }
    if (f.schema_validation_enabled !== init.schema_validation_enabled) body.schema_validation_enabled = f.schema_validation_enabled;
    if (f.json_schema !== init.json_schema) body.json_schema = json("json_schema");
    if (f.schema_action !== init.schema_action) body.schema_action = f.schema_action || null;
    if (Object.keys(errors).length > 0) return setFieldErrors(errors);
    if (Object.keys(body).length === 0) return toast("Nothing changed");
    const res = await submit(() => api.patch<{ source: Source }>(`/sources/${encodeURIComponent(source.id)}`, body), settingsFields);
    if (res) {
      toast("Settings saved");
      onSaved(res.source);
    }
  };

  return (
    <form className="panel form" onSubmit={onSubmit} aria-label="Source settings" noValidate>
      <h2>Settings</h2>
      <ErrorAlert error={formError} />
      <div className="form-grid">
        <Field label="Name" error={fieldErrors.name}>
          {(p) => <input {...p} type="text" value={f.name} onChange={(e) => set("name", e.target.value)} />}
        </Field>
        <Field label="Description" error={fieldErrors.description}>
          {(p) => <input {...p} type="text" value={f.description} onChange={(e) => set("description", e.target.value)} />}
        </Field>
      </div>

      <fieldset>
        <legend>Signature verification</legend>
        <Check label="Verify signatures" checked={f.verification_enabled} onChange={(v) => set("verification_enabled", v)} help="Requests with a bad signature get 401 and are stored as failed." />
        <div className="form-grid">
          <Field label="Scheme" error={fieldErrors.verification_type}>
            {(p) => (
              <select {...p} value={f.verification_type} onChange={(e) => set("verification_type", e.target.value)}>
                <option value="">none</option>
                <Options values={VERIFICATION_TYPES} />
              </select>
            )}
          </Field>
          <Field label="Signature header" error={fieldErrors.verification_header}>
            {(p) => <input {...p} type="text" value={f.verification_header} onChange={(e) => set("verification_header", e.target.value)} placeholder="X-Signature" />}
          </Field>
          <Field label="Secret" error={fieldErrors.verification_secret} help={source.verification_secret ? `Current: ${revealed ?? source.verification_secret}. Leave empty to keep it.` : "No secret set."}>
            {(p) => (
              <div className="copy-field">
                <input {...p} type="password" autoComplete="off" value={f.verification_secret} onChange={(e) => set("verification_secret", e.target.value)} placeholder="new secret" />
                {source.verification_secret && revealed === null ? (
                  <button type="button" className="btn small" onClick={reveal}>
                    Reveal
                  </button>
                ) : null}
              </div>
            )}
          </Field>
        </div>
        <Field label="Verification config (JSON)" error={fieldErrors.verification_config} help="Encoding, prefix, signed payload template, timestamp header, tolerance. Filled by the template.">
          {(p) => <textarea {...p} rows={4} value={f.verification_config} onChange={(e) => set("verification_config", e.target.value)} spellCheck={false} />}
        </Field>
      </fieldset>

      <fieldset>
        <legend>IP filter</legend>
        <div className="form-grid">
          <Field label="Allowlist" error={fieldErrors.ip_allowlist} help="One CIDR or address per line. When set, only these may send.">
            {(p) => <textarea {...p} rows={3} value={f.ip_allowlist} onChange={(e) => set("ip_allowlist", e.target.value)} placeholder="192.0.2.0/24" spellCheck={false} />}
          </Field>
          <Field label="Denylist" error={fieldErrors.ip_denylist} help="One CIDR or address per line. Wins over the allowlist.">
            {(p) => <textarea {...p} rows={3} value={f.ip_denylist} onChange={(e) => set("ip_denylist", e.target.value)} spellCheck={false} />}
          </Field>
        </div>
      </fieldset>

      <fieldset>
        <legend>De-duplication</legend>
        <Check label="Drop duplicates" checked={f.dedup_enabled} onChange={(v) => set("dedup_enabled", v)} />
        <div className="form-grid">
          <Field label="Strategy" error={fieldErrors.dedup_strategy}>
            {(p) => (
              <select {...p} value={f.dedup_strategy} onChange={(e) => set("dedup_strategy", e.target.value)}>
                <option value="">none</option>
                <Options values={DEDUP_STRATEGIES} />
              </select>
            )}
          </Field>
          <Field label="Key" error={fieldErrors.dedup_field} help="A header name (header) or a dot path into the body (field).">
            {(p) => <input {...p} type="text" value={f.dedup_field} onChange={(e) => set("dedup_field", e.target.value)} disabled={f.dedup_strategy === "body_hash"} />}
          </Field>
          <Field label="Window (seconds)" error={fieldErrors.dedup_window_seconds}>
            {(p) => <input {...p} type="number" min={1} value={f.dedup_window_seconds} onChange={(e) => set("dedup_window_seconds", e.target.value)} />}
          </Field>
        </div>
      </fieldset>

      <fieldset>
        <legend>JSON Schema</legend>
        <Check label="Validate bodies against a JSON Schema" checked={f.schema_validation_enabled} onChange={(v) => set("schema_validation_enabled", v)} />
        <Field label="Schema" error={fieldErrors.json_schema}>
          {(p) => <textarea {...p} rows={5} value={f.json_schema} onChange={(e) => set("json_schema", e.target.value)} placeholder='{"type": "object", "required": ["id"]}' spellCheck={false} />}
        </Field>
        <Field label="When a body does not match" error={fieldErrors.schema_action}>
          {(p) => (
            <select {...p} value={f.schema_action} onChange={(e) => set("schema_action", e.target.value)}>
              <option value="reject">reject (422, stored as rejected)</option>
              <option value="warn">warn (deliver, keep the errors)</option>
            </select>
          )}
        </Field>
      </fieldset>

      <FormActions busy={busy} label="Save settings" />
    </form>
  );
}
