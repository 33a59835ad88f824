/** Creating and editing an application. */
import { useRef, useState, type FormEvent } from "react";
import { api } from "../../api";
import { Field, FormActions, Options } from "../../components/forms";
import { Empty, ErrorAlert, PageHead } from "../../components/layout";
import { toast } from "../../components/toasts";
import { prettyJson } from "../../format";
import { useSubmit } from "../../hooks";
import { checkJson } from "../../json";
import { JsonField } from "../../jsonField";
import { Link, navigate } from "../../router";
import { APPLICATION_STATUSES, type Application } from "../../types";
import { appUrl } from "./withApplication";
import { WriteForm } from "../../components/writeForm";

interface Form {
  name: string;
  uid: string;
  description: string;
  metadata: string;
  rate_limit: string;
  status: string;
  /** "no" or "yes": whether endpoints its portal links set may reach private addresses. */
  allow_private_endpoints: string;
}

const formFields = ["name", "uid", "description", "metadata", "rate_limit", "status", "allow_private_endpoints"];

function toForm(a: Application | null): Form {
  return {
    name: a?.name ?? "",
    uid: a?.uid ?? "",
    description: a?.description ?? "",
    metadata: prettyJson(a?.metadata).text,
    rate_limit: a?.rate_limit ? String(a.rate_limit) : "",
    status: a?.status ?? "active",
    allow_private_endpoints: a?.allow_private_endpoints === 1 ? "yes" : "no",
  };
}

export function NewApplicationPage() {
  return (
    <>
      <PageHead title="New application" sub={<Link to="/applications">← All applications</Link>} />
      <ApplicationForm application={null} onSaved={(a) => navigate(appUrl(a.id))} />
    </>
  );
}

export function ApplicationForm({ application, onSaved }: { application: Application | null; onSaved: (a: Application) => void }) {
  const initial = useRef(toForm(application));
  const [f, setF] = useState<Form>(initial.current);
  const set = (k: keyof Form, v: string) => setF((o) => ({ ...o, [k]: v }));
  const { busy, fieldErrors, formError, submit, setFieldErrors } = useSubmit();
  const nameRef = useRef<HTMLInputElement>(null);
  const editing = application !== null;

  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    const errors: Record<string, string> = {};
    if (!f.name.trim()) errors.name = "Give the application a name, e.g. your customer's";
    const metadata = checkJson(f.metadata, { object: true });
    if (!metadata.ok) errors.metadata = metadata.error;
    const rate = f.rate_limit.trim() === "" ? null : Number(f.rate_limit);
    if (rate !== null && !Number.isInteger(rate)) errors.rate_limit = "Must be a whole number of messages per second";
    if (Object.keys(errors).length > 0) {
      setFieldErrors(errors);
      if (errors.name) nameRef.current?.focus();
      return;
    }
    const value: Record<keyof Form, unknown> = {
      name: f.name.trim(),
      uid: f.uid.trim() || undefined,
      description: f.description.trim() || null,
      metadata: metadata.ok && !metadata.empty ? metadata.value : null,
      rate_limit: rate,
      status: f.status,
      allow_private_endpoints: f.allow_private_endpoints === "yes",
    };
    const body: Record<string, unknown> = {};
    for (const k of Object.keys(value) as (keyof Form)[]) {
      if (value[k] === undefined) continue;
      if (editing ? f[k] === initial.current[k] : value[k] === null || value[k] === false || k === "status") continue;
      body[k] = value[k];
    }
    if (editing && Object.keys(body).length === 0) return toast("Nothing changed");
    const res = await submit(
      () => (editing ? api.patch<{ application: Application }>(`/applications/${encodeURIComponent(application.id)}`, body) : api.post<{ application: Application }>("/applications", body)),
      formFields,
    );
    if (!res) return;
    toast(editing ? "Application saved" : `Application “${res.application.name}” created`);
    onSaved(res.application);
  };

  return (
    <WriteForm className="panel form" onSubmit={onSubmit} aria-label={editing ? "Application settings" : "New application"} noValidate>
      {editing ? <h2>Settings</h2> : null}
      <ErrorAlert error={formError} />
      <div className="form-grid">
        <Field label="Name" error={fieldErrors.name}>
          {(p) => <input {...p} ref={nameRef} type="text" name="name" value={f.name} onChange={(e) => set("name", e.target.value)} placeholder="Acme Corp" />}
        </Field>
        <Field label={editing ? "UID" : "UID (optional)"} error={fieldErrors.uid} help="Your own id for this customer: API paths accept it instead of the application's id. Letters, digits, “.”, “-” and “_”; unique in the environment.">
          {(p) => <input {...p} type="text" name="uid" className="mono" value={f.uid} onChange={(e) => set("uid", e.target.value)} placeholder="acme" />}
        </Field>
      </div>
      <Field label="Description (optional)" error={fieldErrors.description}>
        {(p) => <input {...p} type="text" name="description" value={f.description} onChange={(e) => set("description", e.target.value)} />}
      </Field>
      <div className="form-grid">
        <Field label="Rate limit (messages per second)" error={fieldErrors.rate_limit} help="Across all of its endpoints. Empty: no limit.">
          {(p) => <input {...p} type="number" min={1} name="rate_limit" value={f.rate_limit} onChange={(e) => set("rate_limit", e.target.value)} />}
        </Field>
        {editing ? (
          <Field label="Status" error={fieldErrors.status} help="Disabled: sending messages is refused (409) and its portal links stop working; endpoints and history stay.">
            {(p) => (
              <select {...p} name="status" value={f.status} onChange={(e) => set("status", e.target.value)}>
                <Options values={APPLICATION_STATUSES} />
              </select>
            )}
          </Field>
        ) : null}
      </div>
      <Field
        label="Portal endpoints on private addresses"
        error={fieldErrors.allow_private_endpoints}
        help="No (safer): endpoints added or changed through a portal link may only point at public addresses, checked again at every send. Yes: they may reach what this server's own destinations may, your private network included. Choose yes only for a customer you trust with it."
      >
        {(p) => (
          <select {...p} name="allow_private_endpoints" value={f.allow_private_endpoints} onChange={(e) => set("allow_private_endpoints", e.target.value)}>
            <option value="no">No: public addresses only</option>
            <option value="yes">Yes: as the server allows</option>
          </select>
        )}
      </Field>
      <JsonField label="Metadata (optional)" name="metadata" object rows={4} value={f.metadata} onChange={(v) => set("metadata", v)} error={fieldErrors.metadata} placeholder='{"plan": "pro"}' help="A JSON object of your own; hookrelay only stores it." />
      <FormActions busy={busy} label={editing ? "Save application" : "Create application"} busyLabel={editing ? "Saving…" : "Creating…"} cancelTo={editing ? undefined : "/applications"} />
    </WriteForm>
  );
}
