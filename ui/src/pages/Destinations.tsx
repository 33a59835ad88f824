import { useRef, useState, type FormEvent } from "react";
import { api, errorMessage } from "../api";
import { RecoverPanel } from "../components/recoverPanel";
import { StatusBadge } from "../components/badges";
import { CopyField } from "../components/copy";
import { DetailActions } from "../components/detailActions";
import { ConfirmDialog } from "../components/dialogs";
import { Field, FormActions, Options } from "../components/forms";
import { ErrorAlert, PageHead, PageLoading } from "../components/layout";
import { Time } from "../components/time";
import { toast } from "../components/toasts";
import { parseJsonField } from "../format";
import { readSchedule, RETRY_SCHEDULE_HELP, RETRY_SCHEDULE_PLACEHOLDER, scheduleText } from "../retrySchedule";
import { useLoad, useSubmit } from "../hooks";
import { ResourceListPage, useDeleteResource } from "../resources";
import { Link, navigate } from "../router";
import { AUTH_TYPES, DESTINATION_STATUSES, METHODS, RETRY_STRATEGIES, SIGNING_ALGORITHMS, type Destination } from "../types";
import { PublicKeyField, SIGNING_HELP } from "../components/publicKey";
import { WriteForm } from "../components/writeForm";
import { Can, SecretHidden } from "../can";

export function DestinationsPage() {
  const dests = useLoad(() => api.get<{ destinations: Destination[] }>("/destinations"), []);
  return (
    <ResourceListPage
      title="Destinations"
      noun="destination"
      path="/destinations"
      sub="Where events are delivered: an HTTP endpoint with its own auth, timeout, rate limit and retry policy."
      emptyText="A destination is the URL of your service that should receive the webhooks. Then connect a source to it."
      loaded={dests}
      rows={dests.data?.destinations}
      columns={[
        { label: "Name", render: (d) => <Link to={`/destinations/${d.id}`}>{d.name}</Link> },
        {
          label: "URL",
          render: (d) => (
            <span className="mono" style={{ overflowWrap: "anywhere" }}>
              {d.http_method} {d.url}
            </span>
          ),
        },
        { label: "Status", render: (d) => <StatusBadge status={d.status} /> },
        { label: "Retries", hideNarrow: true, render: (d) => (d.retry_schedule ? `schedule: ${scheduleText(d.retry_schedule)}` : `${d.max_retries} × ${d.retry_strategy}`) },
        { label: "Created", hideNarrow: true, render: (d) => <Time iso={d.created_at} /> },
      ]}
    />
  );
}

interface Form {
  name: string;
  url: string;
  http_method: string;
  headers: string;
  auth_type: string;
  auth_username: string;
  auth_password: string;
  auth_token: string;
  auth_key: string;
  auth_api_key: string;
  auth_to: string;
  timeout_ms: string;
  rate_limit_per_second: string;
  max_retries: string;
  retry_strategy: string;
  retry_interval_seconds: string;
  signing_algorithm: string;
  retry_schedule: string;
  status: string;
}

const blank: Form = {
  name: "",
  url: "",
  http_method: "POST",
  headers: "",
  auth_type: "none",
  auth_username: "",
  auth_password: "",
  auth_token: "",
  auth_key: "X-API-Key",
  auth_api_key: "",
  auth_to: "header",
  timeout_ms: "30000",
  rate_limit_per_second: "",
  max_retries: "8",
  retry_strategy: "exponential",
  retry_interval_seconds: "30",
  signing_algorithm: "hmac-sha256",
  retry_schedule: "",
  status: "active",
};

function toForm(d: Destination): Form {
  const headers = parseJsonField<Record<string, string>>(d.headers, {});
  const auth = parseJsonField<Record<string, string>>(d.auth_config, {});
  return {
    ...blank,
    name: d.name,
    url: d.url,
    http_method: d.http_method,
    headers: Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}`)
      .join("\n"),
    auth_type: d.auth_type,
    auth_username: auth.username ?? "",
    auth_key: auth.key ?? blank.auth_key,
    auth_to: auth.to ?? "header",
    timeout_ms: String(d.timeout_ms),
    rate_limit_per_second: d.rate_limit_per_second === null ? "" : String(d.rate_limit_per_second),
    max_retries: String(d.max_retries),
    retry_strategy: d.retry_strategy,
    retry_interval_seconds: String(d.retry_interval_seconds),
    signing_algorithm: d.signing_algorithm,
    retry_schedule: scheduleText(d.retry_schedule),
    status: d.status,
  };
}

// auth_config's parts have inputs of their own: their messages go there, not to the fieldset.
const authParts = ["username", "password", "token", "key", "api_key", "to"].map((k) => `auth_config.${k}`);
const fields = ["name", "url", "http_method", "headers", "auth_type", "auth_config", ...authParts, "timeout_ms", "rate_limit_per_second", "max_retries", "retry_strategy", "retry_interval_seconds", "retry_schedule", "signing_algorithm", "status"];

export function DestinationEditPage({ id }: { id?: string }) {
  const existing = useLoad(() => (id ? api.get<{ destination: Destination }>(`/destinations/${encodeURIComponent(id)}`) : Promise.resolve(null)), [id]);
  const d = existing.data?.destination;
  if (id && !d) {
    return <PageLoading title="Destination" sub={<Link to="/destinations">← All destinations</Link>} error={existing.error} onRetry={existing.reload} />;
  }
  return <DestinationForm key={d?.updated_at ?? "new"} destination={d ?? null} onSaved={(saved) => existing.setData(() => ({ destination: saved }))} />;
}

function DestinationForm({ destination, onSaved }: { destination: Destination | null; onSaved: (d: Destination) => void }) {
  const [f, setF] = useState<Form>(destination ? toForm(destination) : blank);
  const set = <K extends keyof Form>(k: K, v: Form[K]) => setF((o) => ({ ...o, [k]: v }));
  const { busy, fieldErrors, formError, submit, setFieldErrors } = useSubmit();
  const [secret, setSecret] = useState<string | null>(null);
  const deletion = useDeleteResource("/destinations", "Destination", destination);
  const nameRef = useRef<HTMLInputElement>(null);
  const urlRef = useRef<HTMLInputElement>(null);
  const editing = destination !== null;

  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    const errors: Record<string, string> = {};
    if (!f.name.trim()) errors.name = "Give the destination a name";
    if (!f.url.trim()) errors.url = "Enter the URL events are sent to, e.g. https://api.example.com/webhooks";
    const headers: Record<string, string> = {};
    for (const line of f.headers.split("\n")) {
      if (!line.trim()) continue;
      const i = line.indexOf(":");
      if (i <= 0) {
        errors.headers = `“${line.trim()}” is not “Name: value”`;
        break;
      }
      headers[line.slice(0, i).trim()] = line.slice(i + 1).trim();
    }
    const int = (k: keyof Form, label: string, optional = false) => {
      if (optional && f[k].trim() === "") return null;
      const n = Number(f[k]);
      if (!Number.isInteger(n)) errors[k] = `${label} must be a whole number`;
      return n;
    };
    const body: Record<string, unknown> = {
      name: f.name.trim(),
      url: f.url.trim(),
      http_method: f.http_method,
      headers: Object.keys(headers).length ? headers : null,
      timeout_ms: int("timeout_ms", "Timeout"),
      rate_limit_per_second: int("rate_limit_per_second", "Rate limit", true),
      max_retries: int("max_retries", "Max retries"),
      retry_strategy: f.retry_strategy,
      retry_interval_seconds: int("retry_interval_seconds", "Retry interval"),
      status: f.status,
      signing_algorithm: f.signing_algorithm,
    };
    const schedule = readSchedule(f.retry_schedule);
    if ("error" in schedule) errors.retry_schedule = schedule.error;
    else body.retry_schedule = schedule.steps;
    // Auth secrets are never sent back by the API: only send auth when it is new or being changed.
    const authChanged = !editing || f.auth_type !== destination.auth_type || f.auth_password || f.auth_token || f.auth_api_key;
    if (authChanged) {
      body.auth_type = f.auth_type;
      body.auth_config =
        f.auth_type === "basic"
          ? { username: f.auth_username, password: f.auth_password }
          : f.auth_type === "bearer"
            ? { token: f.auth_token }
            : f.auth_type === "api_key"
              ? { key: f.auth_key, api_key: f.auth_api_key, to: f.auth_to }
              : null;
    }
    if (Object.keys(errors).length > 0) {
      setFieldErrors(errors);
      if (errors.name) nameRef.current?.focus();
      else if (errors.url) urlRef.current?.focus();
      return;
    }
    const res = await submit(
      () => (editing ? api.patch<{ destination: Destination }>(`/destinations/${encodeURIComponent(destination.id)}`, body) : api.post<{ destination: Destination }>("/destinations", body)),
      fields,
    );
    if (!res) return;
    toast(editing ? "Destination saved" : `Destination “${res.destination.name}” created`);
    if (editing) onSaved(res.destination);
    else navigate(`/destinations/${res.destination.id}`);
  };

  const revealSecret = async () => {
    if (!destination) return;
    try {
      setSecret((await api.get<{ secret: string }>(`/destinations/${encodeURIComponent(destination.id)}/secret`)).secret);
    } catch (e) {
      toast(errorMessage(e), "error");
    }
  };

  return (
    <>
      <PageHead
        title={editing ? destination.name : "New destination"}
        sub={<Link to="/destinations">← All destinations</Link>}
        actions={
          editing ? (
            <DetailActions onDelete={deletion.ask}>
              <Link to={`/attempts?destination_id=${destination.id}`} className="btn">
                Deliveries
              </Link>
            </DetailActions>
          ) : null
        }
      />
      {editing ? (
        <section className="panel" aria-label="Signing secret">
          <h2>Signing secret</h2>
          {destination.signing_algorithm === "ed25519" ? (
            <>
              <p className="muted">
                Requests to this destination carry Standard Webhooks headers signed with Ed25519 (<code>v1a</code>): your service verifies webhook-signature with this <strong>public key</strong>, which is not a secret.
              </p>
              <PublicKeyField path={`/destinations/${encodeURIComponent(destination.id)}`} version={destination.updated_at} />
            </>
          ) : (
            <p className="muted">Requests to this destination carry Standard Webhooks headers (webhook-id, webhook-timestamp, webhook-signature) signed with this secret, so your service can check they came from hookrelay.</p>
          )}
          {secret ? (
            <CopyField value={secret} label={destination.signing_algorithm === "ed25519" ? "Private key" : "Signing secret"} />
          ) : (
            <Can permission="readSecrets" otherwise={<SecretHidden />}>
              <button type="button" className="btn" onClick={revealSecret}>
                Reveal secret
              </button>
            </Can>
          )}
        </section>
      ) : null}
      <WriteForm className="panel form" onSubmit={onSubmit} aria-label={editing ? "Destination settings" : "New destination"} noValidate>
        <ErrorAlert error={formError} />
        <div className="form-grid">
          <Field label="Name" error={fieldErrors.name}>
            {(p) => <input {...p} ref={nameRef} type="text" name="name" value={f.name} onChange={(e) => set("name", e.target.value)} />}
          </Field>
          <Field label="Status" error={fieldErrors.status} help="Paused: deliveries wait. Disabled: nothing is routed here.">
            {(p) => (
              <select {...p} value={f.status} onChange={(e) => set("status", e.target.value)}>
                <Options values={DESTINATION_STATUSES} />
              </select>
            )}
          </Field>
        </div>
        <div className="form-grid" style={{ gridTemplateColumns: "minmax(90px, 120px) minmax(0, 1fr)" }}>
          <Field label="Method" error={fieldErrors.http_method}>
            {(p) => (
              <select {...p} value={f.http_method} onChange={(e) => set("http_method", e.target.value)}>
                <Options values={METHODS} />
              </select>
            )}
          </Field>
          <Field label="URL" error={fieldErrors.url}>
            {(p) => <input {...p} ref={urlRef} type="url" name="url" value={f.url} onChange={(e) => set("url", e.target.value)} placeholder="https://api.example.com/webhooks" />}
          </Field>
        </div>
        <Field label="Extra headers" error={fieldErrors.headers} help="One “Name: value” per line, added to every delivery.">
          {(p) => <textarea {...p} rows={3} value={f.headers} onChange={(e) => set("headers", e.target.value)} placeholder="X-Team: payments" spellCheck={false} />}
        </Field>

        <fieldset>
          <legend>Authentication</legend>
          <Field label="Type" error={fieldErrors.auth_type}>
            {(p) => (
              <select {...p} value={f.auth_type} onChange={(e) => set("auth_type", e.target.value)}>
                {AUTH_TYPES.map((t) => (
                  <option key={t} value={t}>
                    {t === "api_key" ? "API key" : t}
                  </option>
                ))}
              </select>
            )}
          </Field>
          {fieldErrors.auth_config ? (
            <div className="field-error" role="alert">
              {fieldErrors.auth_config}
            </div>
          ) : null}
          {f.auth_type === "basic" ? (
            <div className="form-grid">
              <Field label="Username" error={fieldErrors["auth_config.username"]}>{(p) => <input {...p} type="text" value={f.auth_username} onChange={(e) => set("auth_username", e.target.value)} />}</Field>
              <Field label="Password" error={fieldErrors["auth_config.password"]} help={editing && destination.auth_type === "basic" ? "Leave empty to keep the current one." : undefined}>
                {(p) => <input {...p} type="password" autoComplete="off" value={f.auth_password} onChange={(e) => set("auth_password", e.target.value)} />}
              </Field>
            </div>
          ) : null}
          {f.auth_type === "bearer" ? (
            <Field label="Token" error={fieldErrors["auth_config.token"]} help={editing && destination.auth_type === "bearer" ? "Leave empty to keep the current one." : "Sent as Authorization: Bearer <token>."}>
              {(p) => <input {...p} type="password" autoComplete="off" value={f.auth_token} onChange={(e) => set("auth_token", e.target.value)} />}
            </Field>
          ) : null}
          {f.auth_type === "api_key" ? (
            <div className="form-grid">
              <Field label="Header or parameter name" error={fieldErrors["auth_config.key"]}>{(p) => <input {...p} type="text" value={f.auth_key} onChange={(e) => set("auth_key", e.target.value)} />}</Field>
              <Field label="Key" error={fieldErrors["auth_config.api_key"]} help={editing && destination.auth_type === "api_key" ? "Leave empty to keep the current one." : undefined}>
                {(p) => <input {...p} type="password" autoComplete="off" value={f.auth_api_key} onChange={(e) => set("auth_api_key", e.target.value)} />}
              </Field>
              <Field label="Send in" error={fieldErrors["auth_config.to"]}>
                {(p) => (
                  <select {...p} value={f.auth_to} onChange={(e) => set("auth_to", e.target.value)}>
                    <option value="header">a header</option>
                    <option value="query">the query string</option>
                  </select>
                )}
              </Field>
            </div>
          ) : null}
        </fieldset>

        <fieldset>
          <legend>Delivery policy</legend>
          <div className="form-grid">
            <Field label="Timeout (ms)" error={fieldErrors.timeout_ms}>
              {(p) => <input {...p} type="number" min={100} value={f.timeout_ms} onChange={(e) => set("timeout_ms", e.target.value)} />}
            </Field>
            <Field label="Rate limit (per second)" error={fieldErrors.rate_limit_per_second} help="Empty: no limit.">
              {(p) => <input {...p} type="number" min={1} value={f.rate_limit_per_second} onChange={(e) => set("rate_limit_per_second", e.target.value)} />}
            </Field>
            <Field label="Max retries" error={fieldErrors.max_retries}>
              {(p) => <input {...p} type="number" min={0} value={f.max_retries} onChange={(e) => set("max_retries", e.target.value)} />}
            </Field>
            <Field label="Retry strategy" error={fieldErrors.retry_strategy}>
              {(p) => (
                <select {...p} value={f.retry_strategy} onChange={(e) => set("retry_strategy", e.target.value)}>
                  <Options values={RETRY_STRATEGIES} />
                </select>
              )}
            </Field>
            <Field label="Retry interval (s)" error={fieldErrors.retry_interval_seconds} help="Exponential doubles it each time (capped at 6 h).">
              {(p) => <input {...p} type="number" min={1} value={f.retry_interval_seconds} onChange={(e) => set("retry_interval_seconds", e.target.value)} />}
            </Field>
            <Field
              label="Signing algorithm"
              error={fieldErrors.signing_algorithm}
              help={`${SIGNING_HELP[f.signing_algorithm as keyof typeof SIGNING_HELP]}${editing && f.signing_algorithm !== destination.signing_algorithm ? " Saving replaces the key at once." : ""}`}
            >
              {(p) => (
                <select {...p} name="signing_algorithm" value={f.signing_algorithm} onChange={(e) => set("signing_algorithm", e.target.value)}>
                  <Options values={SIGNING_ALGORITHMS} />
                </select>
              )}
            </Field>
          </div>
          <Field label="Retry schedule" error={fieldErrors.retry_schedule} help={RETRY_SCHEDULE_HELP}>
            {(p) => <input {...p} type="text" name="retry_schedule" className="mono" value={f.retry_schedule} onChange={(e) => set("retry_schedule", e.target.value)} placeholder={RETRY_SCHEDULE_PLACEHOLDER} />}
          </Field>
        </fieldset>

        <FormActions busy={busy} label={editing ? "Save destination" : "Create destination"} cancelTo="/destinations" />
      </WriteForm>
      {editing ? <RecoverPanel path={`/destinations/${encodeURIComponent(destination.id)}`} what="event" /> : null}

      <ConfirmDialog {...deletion.dialog} title="Delete this destination?" confirmLabel="Delete destination">
        <p>
          <strong>{destination?.name}</strong> is deleted with every connection to it, so nothing is delivered there any more. Deliveries to it still queued or waiting for a retry are never sent, and its dead-letter
          queue can no longer be redriven. Events and past attempts stay stored. This cannot be undone.
        </p>
      </ConfirmDialog>
    </>
  );
}
