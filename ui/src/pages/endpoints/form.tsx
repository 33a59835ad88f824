/** Adding and editing an endpoint: URL, event types chosen from the environment's, rate limit, expiry. */
import { useRef, useState, type FormEvent } from "react";
import { api } from "../../api";
import { Check, Field, FormActions } from "../../components/forms";
import { Empty, ErrorAlert, PageHead } from "../../components/layout";
import { toast } from "../../components/toasts";
import { fromLocalInput, toLocalInput } from "../../format";
import { useLoad, useSubmit } from "../../hooks";
import { appPath, endpointPage, endpointPath, filterTypesOf, type AppPlace } from "../../outbound";
import { navigate } from "../../router";
import type { Endpoint, EventType } from "../../types";
import { BackToApp } from "../backToApp";
import { ENDPOINT_RETRY_SCHEDULE_HELP, readSchedule, RETRY_SCHEDULE_PLACEHOLDER, scheduleText } from "../../retrySchedule";
import { WriteForm } from "../../components/writeForm";
import { SIGNING_HELP } from "../../components/publicKey";
import { SIGNING_ALGORITHMS } from "../../types";

interface Form {
  url: string;
  description: string;
  /** Every event type (filter_types null) or only those in `types`. */
  every: boolean;
  types: string[];
  rate_limit_per_second: string;
  expires_at: string;
  signing_algorithm: string;
  retry_schedule: string;
  secret: string;
  ordered: boolean;
  on_dlq: "continue" | "block";
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
    signing_algorithm: e?.signing_algorithm ?? "hmac-sha256",
    retry_schedule: scheduleText(e?.retry_schedule ?? null),
    secret: "",
    ordered: e?.ordered ?? false,
    on_dlq: e?.on_dlq ?? "continue",
  };
}

const formFields = ["url", "description", "filter_types", "rate_limit_per_second", "expires_at", "retry_schedule", "signing_algorithm", "secret", "ordered", "on_dlq"];

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

export function EndpointForm({ place, endpoint, onSaved }: { place: AppPlace; endpoint: Endpoint | null; onSaved: (e: Endpoint) => void }) {
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
    const schedule = readSchedule(f.retry_schedule);
    if ("error" in schedule) errors.retry_schedule = schedule.error;
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
      ordered: f.ordered,
      on_dlq: f.on_dlq,
    };
    if (!editing || f.signing_algorithm !== endpoint.signing_algorithm) body.signing_algorithm = f.signing_algorithm;
    // The portal does not edit retry settings: an application's customer sees none.
    if (!place.portal && "steps" in schedule) body.retry_schedule = schedule.steps;
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
    <WriteForm className="panel form" onSubmit={onSubmit} aria-label={editing ? "Endpoint settings" : "New endpoint"} noValidate>
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
      <Field
        label="Signing algorithm"
        error={fieldErrors.signing_algorithm}
        help={`${SIGNING_HELP[f.signing_algorithm as keyof typeof SIGNING_HELP]}${editing && f.signing_algorithm !== endpoint.signing_algorithm ? " Saving makes a new key; the old one keeps signing beside it for 24 hours." : ""}`}
      >
        {(p) => (
          <select {...p} name="signing_algorithm" value={f.signing_algorithm} onChange={(e) => set({ signing_algorithm: e.target.value })}>
            {SIGNING_ALGORITHMS.map((a) => (
              <option key={a} value={a}>
                {a}
              </option>
            ))}
          </select>
        )}
      </Field>
      {place.portal ? null : (
        <Field label="Retry schedule (optional)" error={fieldErrors.retry_schedule} help={ENDPOINT_RETRY_SCHEDULE_HELP}>
          {(p) => <input {...p} type="text" name="retry_schedule" className="mono" value={f.retry_schedule} onChange={(e) => set({ retry_schedule: e.target.value })} placeholder={RETRY_SCHEDULE_PLACEHOLDER} />}
        </Field>
      )}
      <Check
        label="Deliver in order: one message at a time per ordering_key"
        checked={f.ordered}
        onChange={(ordered) => set({ ordered })}
        help="Messages sent with the same ordering_key arrive one at a time, in the order sent; other keys keep flowing."
      />
      {f.ordered ? (
        <Field label="When a key's head reaches the DLQ" error={fieldErrors.on_dlq}>
          {(p) => (
            <select {...p} name="on_dlq" value={f.on_dlq} onChange={(e) => set({ on_dlq: e.target.value as Form["on_dlq"] })}>
              <option value="continue">Move on to the key's next message</option>
              <option value="block">Block the key until it is redriven or skipped</option>
            </select>
          )}
        </Field>
      ) : null}
      {editing || f.signing_algorithm === "ed25519" ? null : (
        <Field label="Signing secret (optional)" error={fieldErrors.secret} help="whsec_ followed by base64. Empty: one is generated; reveal it on the endpoint's page.">
          {(p) => <input {...p} type="password" autoComplete="off" name="secret" className="mono" value={f.secret} onChange={(e) => set({ secret: e.target.value })} placeholder="whsec_…" />}
        </Field>
      )}
      <FormActions busy={busy} label={editing ? "Save endpoint" : "Add endpoint"} busyLabel={editing ? "Saving…" : "Adding…"} cancelTo={editing ? undefined : place.base} />
    </WriteForm>
  );
}
