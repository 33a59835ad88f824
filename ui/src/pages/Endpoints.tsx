/**
 * An application's endpoints, in the admin UI and in the consumer portal:
 * the list, adding and editing one (URL, event types chosen from the
 * environment's, rate limit, expiry), disabling it, its signing secret
 * (reveal, rotate with the 24-hour overlap), deleting it and its recent
 * delivery attempts.
 */
import { useRef, useState, type FormEvent } from "react";
import { api } from "../api";
import { AttemptWhen, listedAttemptTimes } from "../attemptTime";
import { StatusBadge } from "../components/badges";
import { CopyField } from "../components/copy";
import { DetailActions } from "../components/detailActions";
import { ConfirmDialog } from "../components/dialogs";
import { Field, FormActions } from "../components/forms";
import { Empty, ErrorAlert, PageHead, PageLoading } from "../components/layout";
import { DataTable } from "../components/table";
import { Time } from "../components/time";
import { toast } from "../components/toasts";
import { fromLocalInput, fullTime, ms, num, shortId, toLocalInput } from "../format";
import { useAction, useInterval, useLoad, useSubmit } from "../hooks";
import { appPath, endpointPage, endpointPath, filterTypesOf, isExpired, messageIdOf, messagePage, type AppPlace } from "../outbound";
import { ListPanel } from "../resources";
import { Link, navigate, useLocation } from "../router";
import type { DeliveryAttempt, Endpoint, EventType } from "../types";

/** The crumb back to the application (admin) or the portal's start page. */
export function BackToApp({ place }: { place: AppPlace }) {
  return <Link to={place.base}>← {place.portal ? "Endpoints and messages" : place.app.name}</Link>;
}

/** Status, with "expired" beside it once expires_at has passed. */
export function EndpointStatus({ endpoint: e }: { endpoint: Endpoint }) {
  return (
    <>
      <StatusBadge status={e.status} />
      {isExpired(e) ? (
        <>
          {" "}
          <span className="badge bad" title={`Expired ${fullTime(e.expires_at)}: it receives nothing`}>
            expired
          </span>
        </>
      ) : null}
    </>
  );
}

function TypesCell({ endpoint }: { endpoint: Endpoint }) {
  const types = filterTypesOf(endpoint);
  if (!types) return <span className="muted">every type</span>;
  return <span className="mono">{types.length <= 2 ? types.join(", ") : `${types.slice(0, 2).join(", ")} +${types.length - 2}`}</span>;
}

// ---------------------------------------------------------------- list

export function EndpointsPanel({ place }: { place: AppPlace }) {
  const endpoints = useLoad(() => api.get<{ endpoints: Endpoint[] }>(appPath(place, "/endpoints")), [place.app.id]);
  const rows = endpoints.data?.endpoints ?? [];
  const add = (text: string) => (
    <Link to={`${place.base}/endpoints/new`} className="btn primary">
      {text}
    </Link>
  );
  return (
    <>
      <div className="panel-head">
        <h2>Endpoints</h2>
        {rows.length > 0 ? add("Add endpoint") : null}
      </div>
      <ListPanel
        label="Endpoints"
        loaded={endpoints}
        what="Loading endpoints"
        isEmpty={rows.length === 0}
        empty={
          <Empty title="No endpoints yet" action={add("Add your first endpoint")}>
            {place.portal
              ? "An endpoint is a URL of yours that receives these webhooks, each request signed so you can check it came from us."
              : `An endpoint is a URL of ${place.app.name}'s that receives its messages, each request signed with the endpoint's secret (Standard Webhooks).`}
          </Empty>
        }
      >
        <DataTable
          label="Endpoints"
          rows={rows}
          rowKey={(e) => e.id}
          onRowClick={(e) => navigate(endpointPage(place, e.id))}
          columns={[
            {
              label: "URL",
              render: (e) => (
                <>
                  <Link to={endpointPage(place, e.id)} className="mono" style={{ overflowWrap: "anywhere" }}>
                    {e.url}
                  </Link>
                  {e.description ? (
                    <div className="muted" style={{ fontSize: 12 }}>
                      {e.description}
                    </div>
                  ) : null}
                </>
              ),
            },
            { label: "Event types", render: (e) => <TypesCell endpoint={e} /> },
            { label: "Status", render: (e) => <EndpointStatus endpoint={e} /> },
            { label: "Rate limit", hideNarrow: true, render: (e) => (e.rate_limit_per_second ? `${num(e.rate_limit_per_second)}/s` : <span className="muted">none</span>) },
            { label: "Created", hideNarrow: true, render: (e) => <Time iso={e.created_at} /> },
          ]}
        />
      </ListPanel>
    </>
  );
}

// ---------------------------------------------------------------- add and edit

interface Form {
  url: string;
  description: string;
  /** Every event type (filter_types null) or only those in `types`. */
  every: boolean;
  types: string[];
  rate_limit_per_second: string;
  expires_at: string;
  secret: string;
}

function toForm(e: Endpoint | null): Form {
  const types = e ? filterTypesOf(e) : null;
  return {
    url: e?.url ?? "",
    description: e?.description ?? "",
    every: types === null,
    types: types ?? [],
    rate_limit_per_second: e?.rate_limit_per_second ? String(e.rate_limit_per_second) : "",
    expires_at: e?.expires_at ? toLocalInput(new Date(e.expires_at)) : "",
    secret: "",
  };
}

const formFields = ["url", "description", "filter_types", "rate_limit_per_second", "expires_at", "secret"];

export function NewEndpointPage({ place }: { place: AppPlace }) {
  return (
    <>
      <PageHead title="Add endpoint" sub={<BackToApp place={place} />} />
      <EndpointForm place={place} endpoint={null} onSaved={(e) => navigate(endpointPage(place, e.id) + "?created=1")} />
    </>
  );
}

/** The event types an endpoint may subscribe to: the environment's catalogue, plus any it already names that the catalogue lacks. */
function TypeChoice({ place, form, set, error }: { place: AppPlace; form: Form; set: (patch: Partial<Form>) => void; error?: string }) {
  const catalogue = useLoad(() => api.get<{ event_types: EventType[] }>(appPath(place, "/event-types")), [place.app.id]);
  const known = catalogue.data?.event_types ?? [];
  const unknown = form.types.filter((t) => !known.some((k) => k.name === t));
  const toggle = (name: string, on: boolean) => set({ types: on ? [...form.types, name] : form.types.filter((t) => t !== name) });
  const choices = [...known.map((k) => ({ name: k.name, description: k.description, deprecated: k.status === "deprecated" })), ...unknown.map((name) => ({ name, description: "not in the event type catalogue", deprecated: false }))];
  return (
    <fieldset>
      <legend>Event types</legend>
      <ErrorAlert error={catalogue.error} onRetry={catalogue.reload} />
      <label className="check">
        <input type="radio" name="every-type" checked={form.every} onChange={() => set({ every: true })} />
        Every event type
      </label>
      <label className="check">
        <input type="radio" name="every-type" checked={!form.every} onChange={() => set({ every: false })} disabled={choices.length === 0} />
        Only the types chosen below
      </label>
      {choices.length === 0 && !catalogue.loading ? (
        <p className="muted" style={{ margin: "6px 0 0" }}>
          {place.portal ? "No event types are listed yet: the endpoint receives every message." : "The environment has no event types yet (Event types in the menu): the endpoint receives every message."}
        </p>
      ) : (
        <div className="choice-grid" role="group" aria-label="Event types to receive" style={{ marginTop: 8 }}>
          {choices.map((c) => {
            const on = !form.every && form.types.includes(c.name);
            return (
              <label key={c.name} className={`choice ${on ? "on" : ""}`}>
                <input type="checkbox" checked={on} disabled={form.every} onChange={(e) => toggle(c.name, e.target.checked)} />
                <span>
                  <strong className="mono">{c.name}</strong>
                  {c.deprecated ? <span className="badge warn">deprecated</span> : null}
                  {c.description ? <span className="muted">{c.description}</span> : null}
                </span>
              </label>
            );
          })}
        </div>
      )}
      {error ? (
        <div className="field-error" role="alert">
          {error}
        </div>
      ) : null}
    </fieldset>
  );
}

function EndpointForm({ place, endpoint, onSaved }: { place: AppPlace; endpoint: Endpoint | null; onSaved: (e: Endpoint) => void }) {
  const [f, setF] = useState<Form>(() => toForm(endpoint));
  const set = (patch: Partial<Form>) => setF((o) => ({ ...o, ...patch }));
  const { busy, fieldErrors, formError, submit, setFieldErrors } = useSubmit();
  const urlRef = useRef<HTMLInputElement>(null);
  const editing = endpoint !== null;

  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    const errors: Record<string, string> = {};
    if (!f.url.trim()) errors.url = "Enter the URL that receives the webhooks, e.g. https://example.com/webhooks";
    if (!f.every && f.types.length === 0) errors.filter_types = "Choose at least one event type, or every event type";
    const rate = f.rate_limit_per_second.trim() === "" ? null : Number(f.rate_limit_per_second);
    if (rate !== null && !Number.isInteger(rate)) errors.rate_limit_per_second = "Must be a whole number of requests per second";
    if (Object.keys(errors).length > 0) {
      setFieldErrors(errors);
      if (errors.url) urlRef.current?.focus();
      return;
    }
    const body: Record<string, unknown> = {
      url: f.url.trim(),
      description: f.description.trim() || null,
      filter_types: f.every ? null : f.types,
      rate_limit_per_second: rate,
      expires_at: fromLocalInput(f.expires_at) ?? null,
    };
    if (!editing && f.secret.trim()) body.secret = f.secret.trim();
    const res = await submit(
      () => (editing ? api.patch<{ endpoint: Endpoint }>(endpointPath(place, endpoint.id), body) : api.post<{ endpoint: Endpoint }>(appPath(place, "/endpoints"), body)),
      formFields,
    );
    if (!res) return;
    toast(editing ? "Endpoint saved" : "Endpoint added");
    onSaved(res.endpoint);
  };

  return (
    <form className="panel form" onSubmit={onSubmit} aria-label={editing ? "Endpoint settings" : "New endpoint"} noValidate>
      {editing ? <h2>Settings</h2> : null}
      <ErrorAlert error={formError} />
      <Field label="URL" error={fieldErrors.url} help="Each message is POSTed here as JSON with webhook-id, webhook-timestamp and webhook-signature headers.">
        {(p) => <input {...p} ref={urlRef} type="url" name="url" value={f.url} onChange={(e) => set({ url: e.target.value })} placeholder="https://example.com/webhooks" />}
      </Field>
      <Field label="Description (optional)" error={fieldErrors.description}>
        {(p) => <input {...p} type="text" name="description" value={f.description} onChange={(e) => set({ description: e.target.value })} placeholder="Production order sync" />}
      </Field>
      <TypeChoice place={place} form={f} set={set} error={fieldErrors.filter_types} />
      <div className="form-grid">
        <Field label="Rate limit (requests per second)" error={fieldErrors.rate_limit_per_second} help="Empty: as fast as messages come.">
          {(p) => <input {...p} type="number" min={1} name="rate_limit_per_second" value={f.rate_limit_per_second} onChange={(e) => set({ rate_limit_per_second: e.target.value })} />}
        </Field>
        <Field label="Expires (optional)" error={fieldErrors.expires_at} help="After this time the endpoint receives nothing. Empty: never.">
          {(p) => <input {...p} type="datetime-local" name="expires_at" value={f.expires_at} onChange={(e) => set({ expires_at: e.target.value })} />}
        </Field>
      </div>
      {editing ? null : (
        <Field label="Signing secret (optional)" error={fieldErrors.secret} help="whsec_ followed by base64. Empty: one is generated; reveal it on the endpoint's page.">
          {(p) => <input {...p} type="password" autoComplete="off" name="secret" className="mono" value={f.secret} onChange={(e) => set({ secret: e.target.value })} placeholder="whsec_…" />}
        </Field>
      )}
      <FormActions busy={busy} label={editing ? "Save endpoint" : "Add endpoint"} busyLabel={editing ? "Saving…" : "Adding…"} cancelTo={editing ? undefined : place.base} />
    </form>
  );
}

// ---------------------------------------------------------------- one endpoint

export function EndpointPage({ place, id }: { place: AppPlace; id: string }) {
  const loaded = useLoad(() => api.get<{ endpoint: Endpoint }>(endpointPath(place, id)), [place.app.id, id]);
  const e = loaded.data?.endpoint;
  const [confirmDelete, setConfirmDelete] = useState(false);
  const created = useLocation().search.has("created");
  const { busy, error, run } = useAction();

  if (!e) return <PageLoading title="Endpoint" sub={<BackToApp place={place} />} error={loaded.error} onRetry={loaded.reload} />;

  const setStatus = (status: "active" | "disabled") =>
    run(async () => {
      const res = await api.patch<{ endpoint: Endpoint }>(endpointPath(place, e.id), { status });
      loaded.setData(() => res);
      toast(status === "disabled" ? "Endpoint disabled" : "Endpoint enabled");
    });
  const remove = () =>
    run(async () => {
      await api.del(endpointPath(place, e.id));
      toast("Endpoint deleted");
      navigate(place.base);
    });

  return (
    <>
      <PageHead
        title={
          <>
            <span className="mono" style={{ fontSize: 18, overflowWrap: "anywhere" }}>
              {e.url}
            </span>{" "}
            <EndpointStatus endpoint={e} />
          </>
        }
        sub={<BackToApp place={place} />}
        actions={<DetailActions moves={[e.status === "active" ? { label: "Disable", to: "disabled" as const } : { label: "Enable", to: "active" as const }]} busy={busy} onMove={setStatus} onDelete={() => setConfirmDelete(true)} />}
      />
      <ErrorAlert error={confirmDelete ? null : error} />
      {created ? (
        <div className="alert ok" role="status">
          Endpoint added. Reveal its signing secret below and give it to the code behind the URL, so it can check each request.
        </div>
      ) : null}
      {e.status === "disabled" ? (
        <div className="alert warn" role="status">
          Disabled: nothing is sent to this endpoint until it is enabled again. An endpoint whose deliveries keep failing without a single success is disabled automatically.
        </div>
      ) : null}
      {e.portal_held === 1 && !place.portal ? (
        <p className="muted" data-testid="portal-held">
          Its URL was set through a portal link: deliveries may only go to public addresses, unless the application allows private endpoints (Settings). Changing the URL here makes it yours again.
        </p>
      ) : null}
      {e.description ? <p className="muted">{e.description}</p> : null}
      <SecretPanel place={place} endpoint={e} />
      <EndpointForm key={e.updated_at} place={place} endpoint={e} onSaved={(saved) => loaded.setData(() => ({ endpoint: saved }))} />
      <EndpointAttempts place={place} endpoint={e} />

      <ConfirmDialog open={confirmDelete} title="Delete this endpoint?" confirmLabel="Delete endpoint" busy={busy} error={error} onConfirm={remove} onCancel={() => setConfirmDelete(false)}>
        <p>
          <strong className="mono" style={{ overflowWrap: "anywhere" }}>
            {e.url}
          </strong>{" "}
          stops receiving webhooks at once: messages still waiting to be sent to it are never sent, and it cannot be resent to. Its past attempts stay in each message's history. This cannot be undone.
        </p>
      </ConfirmDialog>
    </>
  );
}

/** Reveal the signing secret, or rotate it after a confirmation that says what the 24-hour overlap means. */
function SecretPanel({ place, endpoint }: { place: AppPlace; endpoint: Endpoint }) {
  const [secret, setSecret] = useState<string | null>(null);
  const [rotated, setRotated] = useState(false);
  const [confirm, setConfirm] = useState(false);
  const { busy, error, run } = useAction();

  const reveal = () =>
    run(async () => {
      setSecret((await api.get<{ secret: string }>(endpointPath(place, endpoint.id, "/secret"))).secret);
    });
  const rotate = () =>
    run(async () => {
      const res = await api.post<{ secret: string }>(endpointPath(place, endpoint.id, "/secret/rotate"), {});
      setSecret(res.secret);
      setRotated(true);
      setConfirm(false);
      toast("Signing secret rotated");
    });

  return (
    <section className={rotated ? "secret-box" : "panel"} aria-label="Signing secret">
      <h2>{rotated ? "New signing secret" : "Signing secret"}</h2>
      <p className={rotated ? undefined : "muted"}>
        {rotated
          ? "For the next 24 hours every request carries two signatures, one with this secret and one with the old one: switch the receiver to this secret any time before then."
          : "Every request is signed with this secret (Standard Webhooks: the standardwebhooks and svix libraries verify it). The receiver checks the webhook-signature header with it and refuses requests that fail."}
      </p>
      <ErrorAlert error={confirm ? null : error} />
      {secret ? <CopyField value={secret} label="Signing secret" /> : null}
      <div className="btn-row" style={{ marginTop: secret ? 12 : 0 }}>
        {secret ? null : (
          <button type="button" className="btn" disabled={busy} onClick={reveal}>
            Reveal secret
          </button>
        )}
        <button type="button" className="btn danger" onClick={() => setConfirm(true)}>
          Rotate secret…
        </button>
      </div>
      <ConfirmDialog open={confirm} title="Rotate the signing secret?" confirmLabel="Rotate secret" busy={busy} error={error} onConfirm={rotate} onCancel={() => setConfirm(false)}>
        <p>A new secret replaces the current one. The current one is not dropped at once:</p>
        <p>
          <strong>For 24 hours every request is signed with both</strong>, the new and the old secret (two <code>v1,…</code> entries in <code>webhook-signature</code>), so a receiver still checking with the old secret keeps accepting
          requests while it is switched over. After 24 hours only the new secret signs, and a receiver still on the old one refuses every request.
        </p>
        <p>
          If the old secret leaked, switch the receiver to the new one right away: until then it accepts anything signed with the leaked secret. Rotating again within the 24 hours drops the oldest secret.
        </p>
      </ConfirmDialog>
    </section>
  );
}

const ATTEMPTS_PAGE = 20;

/** The endpoint's latest attempts, newest first, in cursor pages; each links to its message. */
function EndpointAttempts({ place, endpoint }: { place: AppPlace; endpoint: Endpoint }) {
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors.at(-1);
  const attempts = useLoad(
    () => api.get<{ attempts: DeliveryAttempt[]; cursor: string | null }>(endpointPath(place, endpoint.id, "/attempts"), { cursor, limit: ATTEMPTS_PAGE }),
    [endpoint.id, cursor],
  );
  const rows = attempts.data?.attempts ?? [];
  const inFlight = cursors.length === 0 && rows.some((a) => a.status === "queued" || a.status === "delivering");
  useInterval(() => void attempts.reload(), inFlight ? 2000 : null);
  return (
    <>
      <div className="panel-head" style={{ marginTop: 8 }}>
        <h2>Recent deliveries</h2>
      </div>
      <ListPanel
        label="Recent deliveries"
        loaded={attempts}
        what="Loading deliveries"
        isEmpty={rows.length === 0 && cursors.length === 0}
        empty={<Empty title="Nothing sent here yet">Messages whose event type the endpoint receives are delivered here; each attempt shows up with its response.</Empty>}
      >
        <DataTable
          label="Recent deliveries"
          rows={rows}
          rowKey={(a) => a.id}
          onRowClick={(a) => navigate(messagePage(place, messageIdOf(a)))}
          columns={[
            {
              label: "Message",
              render: (a) => (
                <Link to={messagePage(place, messageIdOf(a))} className="mono">
                  {shortId(messageIdOf(a))}
                </Link>
              ),
            },
            { label: "When", render: (a) => <AttemptWhen times={listedAttemptTimes(a)} /> },
            { label: "Status", render: (a) => (a.is_dlq ? <span className="badge bad">failed, retries used up</span> : <StatusBadge status={a.status} />) },
            { label: "Response", render: (a) => (a.response_status ? <span className="mono">{a.response_status}</span> : <span className="muted">{a.error ?? "–"}</span>) },
            { label: "Duration", className: "num", hideNarrow: true, render: (a) => ms(a.duration_ms) },
            { label: "#", hideNarrow: true, render: (a) => a.attempt_number ?? "–" },
          ]}
        />
        <div className="pager">
          <span>Page {cursors.length + 1}</span>
          <span className="btn-row">
            <button type="button" className="btn small" disabled={cursors.length === 0} onClick={() => setCursors((cs) => cs.slice(0, -1))}>
              Newer
            </button>
            <button
              type="button"
              className="btn small"
              disabled={!attempts.data?.cursor}
              onClick={() => {
                const next = attempts.data?.cursor;
                if (next) setCursors((cs) => [...cs, next]);
              }}
            >
              Older
            </button>
          </span>
        </div>
      </ListPanel>
    </>
  );
}
