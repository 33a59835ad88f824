/**
 * Applications in the admin UI (docs/outbound.md): the list with search and
 * cursor paging, creating and editing one, and its page with tabs for its
 * endpoints, its messages (sending one included) and its settings, and the
 * consumer portal link.
 */
import { useEffect, useRef, useState, type FormEvent, type ReactNode } from "react";
import { api } from "../api";
import { StatusBadge } from "../components/badges";
import { CopyField } from "../components/copy";
import { DetailActions } from "../components/detailActions";
import { ConfirmDialog, Modal } from "../components/dialogs";
import { Field, FormActions, Options } from "../components/forms";
import { Empty, ErrorAlert, PageHead, PageLoading } from "../components/layout";
import { DataTable } from "../components/table";
import { Tabs } from "../components/tabs";
import { Time } from "../components/time";
import { toast } from "../components/toasts";
import { fullTime, num, plural, prettyJson, timeAgo } from "../format";
import { useAction, useLoad, useSubmit } from "../hooks";
import { checkJson } from "../json";
import { JsonField } from "../jsonField";
import type { AppPlace } from "../outbound";
import { ListPanel, useQueryFilters } from "../resources";
import { Link, navigate } from "../router";
import { APPLICATION_STATUSES, type Application, type ApplicationListItem, type Message, type PortalLink } from "../types";
import { EndpointPage } from "./endpoints/endpoint";
import { NewEndpointPage } from "./endpoints/form";
import { EndpointsPanel } from "./endpoints/list";
import { MessagePage } from "./messages/message";
import { SendMessagePanel } from "./messages/send";
import { MessagesPanel } from "./messages/list";

const PAGE = 25;
const appUrl = (id: string) => `/applications/${id}`;

// ---------------------------------------------------------------- list

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
  const create = (label: string) => (
    <Link to="/applications/new" className="btn primary">
      {label}
    </Link>
  );
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
        <div className="pager">
          <span>
            Page {cursors.length + 1}
            {rows.length > 0 ? ` · ${plural(rows.length, "application")}` : ""}
          </span>
          <span className="btn-row">
            <button type="button" className="btn small" disabled={cursors.length === 0} onClick={() => setCursors((cs) => cs.slice(0, -1))}>
              Previous
            </button>
            <button
              type="button"
              className="btn small"
              disabled={!apps.data?.cursor}
              onClick={() => {
                const next = apps.data?.cursor;
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

// ---------------------------------------------------------------- create and edit

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

function ApplicationForm({ application, onSaved }: { application: Application | null; onSaved: (a: Application) => void }) {
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
    <form className="panel form" onSubmit={onSubmit} aria-label={editing ? "Application settings" : "New application"} noValidate>
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
    </form>
  );
}

// ---------------------------------------------------------------- one application and the pages below it

/** Loads the application a page is about, then renders the page at its place. */
function WithApplication({ id, title, children }: { id: string; title: string; children: (place: AppPlace, setApp: (a: Application) => void) => ReactNode }) {
  const loaded = useLoad(() => api.get<{ application: Application }>(`/applications/${encodeURIComponent(id)}`), [id]);
  const app = loaded.data?.application;
  if (!app) return <PageLoading title={title} sub={<Link to="/applications">← All applications</Link>} error={loaded.error} onRetry={loaded.reload} />;
  return <>{children({ app, base: appUrl(id), portal: false }, (a) => loaded.setData(() => ({ application: a })))}</>;
}

export type AppTab = "endpoints" | "messages" | "settings";

export function ApplicationPage({ id, tab }: { id: string; tab: AppTab }) {
  return <WithApplication id={id} title="Application">{(place, setApp) => <ApplicationDetail place={place} tab={tab} onSaved={setApp} />}</WithApplication>;
}

function ApplicationDetail({ place, tab, onSaved }: { place: AppPlace; tab: AppTab; onSaved: (a: Application) => void }) {
  const { app } = place;
  const [confirmDelete, setConfirmDelete] = useState(false);
  const [sent, setSent] = useState<Message | null>(null);
  const { busy, error, run } = useAction();
  const remove = () =>
    run(async () => {
      await api.del(`/applications/${encodeURIComponent(app.id)}`);
      toast(`Application “${app.name}” deleted`);
      navigate("/applications");
    });

  return (
    <>
      <PageHead
        title={
          <>
            {app.name} <StatusBadge status={app.status} />
          </>
        }
        sub={
          <>
            <Link to="/applications">← All applications</Link> · uid <span className="mono">{app.uid}</span>
          </>
        }
        actions={
          <DetailActions onDelete={() => setConfirmDelete(true)}>
            <PortalLinkButton app={app} />
            <RevokePortalLinksButton app={app} />
          </DetailActions>
        }
      />
      {app.description ? <p className="muted">{app.description}</p> : null}
      {app.status !== "active" ? <div className="alert warn">Disabled: sending messages to {app.name} is refused (409) until its status is active again. Its endpoints and history stay.</div> : null}
      <Tabs
        label="Application"
        tabs={[
          { id: "endpoints", label: "Endpoints" },
          { id: "messages", label: "Messages" },
          { id: "settings", label: "Settings" },
        ]}
        value={tab}
        onChange={(t) => navigate(t === "endpoints" ? place.base : `${place.base}/${t}`)}
      />
      {tab === "endpoints" ? <EndpointsPanel place={place} /> : null}
      {tab === "messages" ? (
        <>
          <SendMessagePanel place={place} onSent={setSent} />
          <MessagesPanel place={place} sent={sent} />
        </>
      ) : null}
      {tab === "settings" ? (
        <>
          <ApplicationForm key={app.updated_at} application={app} onSaved={onSaved} />
          <section className="panel" aria-label="Identifiers">
            <dl className="kv">
              <dt>Id</dt>
              <dd className="mono">{app.id}</dd>
              <dt>UID</dt>
              <dd className="mono">{app.uid}</dd>
              <dt>Created</dt>
              <dd>{fullTime(app.created_at)}</dd>
            </dl>
          </section>
        </>
      ) : null}

      <ConfirmDialog open={confirmDelete} title="Delete this application?" confirmLabel="Delete application" busy={busy} error={error} onConfirm={remove} onCancel={() => setConfirmDelete(false)}>
        <p>
          <strong>{app.name}</strong> is deleted with its endpoints, every message sent to it and their delivery history; messages still waiting to be sent are never sent, and its portal links stop working. Sending to{" "}
          <code>{app.uid}</code> answers 404 afterwards. This cannot be undone.
        </p>
      </ConfirmDialog>
    </>
  );
}

/** Creates a consumer portal link and shows it, with a copy button and when it expires. */
function PortalLinkButton({ app }: { app: Application }) {
  const [link, setLink] = useState<PortalLink | null>(null);
  const [open, setOpen] = useState(false);
  const { busy, error, run } = useAction();
  const create = () =>
    run(async () => {
      setLink(await api.post<PortalLink>(`/applications/${encodeURIComponent(app.id)}/portal`, {}));
      setOpen(true);
    });
  return (
    <>
      <button type="button" className="btn" disabled={busy} onClick={create}>
        {busy ? "Creating link…" : "Portal link"}
      </button>
      {error && !open ? (
        <span className="field-error" role="alert">
          {error}
        </span>
      ) : null}
      <Modal open={open} onClose={() => setOpen(false)} title="Consumer portal link" wide>
        {link ? (
          <div style={{ display: "grid", gap: 12 }}>
            <p style={{ margin: 0 }}>
              Whoever opens this link can manage <strong>{app.name}</strong>'s endpoints (add, edit, disable, reveal and rotate their secrets) and see its messages with every delivery attempt, without logging in. It grants nothing else.
              Send it only to the customer it is for.
            </p>
            <CopyField value={link.url} label="Portal link" />
            <p className="muted" style={{ margin: 0 }} data-testid="portal-expiry">
              Expires {fullTime(link.expires_at)} ({timeAgo(link.expires_at)}). Create a new link whenever one is needed; “Revoke links” ends every link issued so far.
            </p>
            <div className="btn-row" style={{ justifyContent: "flex-end", marginTop: 0 }}>
              <button type="button" className="btn" onClick={() => setOpen(false)}>
                Close
              </button>
              <a className="btn primary" href={link.url} target="_blank" rel="noopener noreferrer">
                Open the portal
              </a>
            </div>
          </div>
        ) : null}
      </Modal>
    </>
  );
}

/** Revokes every portal link issued for the application so far, after asking. */
function RevokePortalLinksButton({ app }: { app: Application }) {
  const [open, setOpen] = useState(false);
  const { busy, error, run } = useAction();
  const revoke = () =>
    run(async () => {
      await api.post(`/applications/${encodeURIComponent(app.id)}/portal/revoke`, {});
      setOpen(false);
      toast("Every portal link issued so far is revoked");
    });
  return (
    <>
      <button type="button" className="btn" title="Revoke every portal link issued so far" onClick={() => setOpen(true)}>
        Revoke links
      </button>
      <ConfirmDialog open={open} title="Revoke every portal link?" confirmLabel="Revoke links" busy={busy} error={error} onConfirm={revoke} onCancel={() => setOpen(false)}>
        <p>
          Every portal link issued for <strong>{app.name}</strong> so far stops working at once, wherever it is open. Links you create afterwards work.
        </p>
      </ConfirmDialog>
    </>
  );
}

export function ApplicationEndpointPage({ id, endpointId }: { id: string; endpointId?: string }) {
  return <WithApplication id={id} title="Endpoint">{(place) => (endpointId ? <EndpointPage key={endpointId} place={place} id={endpointId} /> : <NewEndpointPage place={place} />)}</WithApplication>;
}

export function ApplicationMessagePage({ id, messageId }: { id: string; messageId: string }) {
  return <WithApplication id={id} title="Message">{(place) => <MessagePage key={messageId} place={place} id={messageId} />}</WithApplication>;
}
