/** Sending a message from the admin UI (a portal link does not grant it), with a schema refusal shown under the payload. */
import { useState, type FormEvent } from "react";
import { api, ApiError } from "../../api";
import { StatusBadge } from "../../components/badges";
import { Field } from "../../components/forms";
import { ErrorAlert } from "../../components/layout";
import { useSubmit } from "../../hooks";
import { checkJson } from "../../json";
import { JsonField } from "../../jsonField";
import { appPath, messagePage, type AppPlace } from "../../outbound";
import { SchemaRefusal, violations, type Refusal } from "../../schemaRefusal";
import { Link } from "../../router";
import type { Message } from "../../types";
import { useEventTypes } from "./eventTypes";

export function SendMessagePanel({ place, onSent }: { place: AppPlace; onSent: (m: Message) => void }) {
  const types = useEventTypes(place);
  const [eventType, setEventType] = useState("");
  const [payload, setPayload] = useState('{\n  "id": "ord_1001",\n  "total": 4200\n}');
  const [key, setKey] = useState("");
  const [sent, setSent] = useState<Message | null>(null);
  const [rejected, setRejected] = useState<Refusal | null>(null);
  const { busy, fieldErrors, formError, submit, setFieldErrors } = useSubmit();

  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    setSent(null);
    setRejected(null);
    const errors: Record<string, string> = {};
    if (!eventType.trim()) errors.event_type = "Name the message's event type, e.g. order.created";
    const parsed = checkJson(payload);
    if (!parsed.ok || parsed.empty) errors.payload = parsed.ok ? "Write the JSON payload to send" : parsed.error;
    if (Object.keys(errors).length > 0) return setFieldErrors(errors);
    const res = await submit(async () => {
      try {
        return await api.post<{ message: Message }>(appPath(place, "/messages"), { event_type: eventType.trim(), payload: parsed.ok ? parsed.value : null, ...(key.trim() ? { id: key.trim() } : {}) });
      } catch (err) {
        // A schema refusal lists what is wrong with the payload: shown under it, not as one line.
        if (err instanceof ApiError && err.code === "schema_violation") {
          setRejected({ message: err.message, errors: violations(err) });
          return undefined;
        }
        throw err;
      }
    }, ["event_type", "payload", "id"]);
    if (res) {
      setSent(res.message);
      onSent(res.message);
    }
  };

  return (
    <form className="panel form" onSubmit={onSubmit} aria-label="Send a message" noValidate>
      <h2>Send a message</h2>
      <p className="muted" style={{ margin: 0 }}>
        Sent to every active endpoint of {place.app.name} whose event types include it, signed with each endpoint's secret. An event type with a JSON Schema checks the payload first.
      </p>
      <ErrorAlert error={formError} />
      <div className="form-grid">
        <Field label="Event type" error={fieldErrors.event_type}>
          {(p) => <input {...p} type="text" name="event_type" list="send-event-types" value={eventType} onChange={(e) => setEventType(e.target.value)} placeholder="order.created" />}
        </Field>
        <Field label="Idempotency key (optional)" error={fieldErrors.id} help="Sending the same key again returns the first message and sends nothing.">
          {(p) => <input {...p} type="text" name="id" value={key} onChange={(e) => setKey(e.target.value)} placeholder="order-1001-created" />}
        </Field>
      </div>
      <datalist id="send-event-types">
        {types.data?.event_types.map((t) => (
          <option key={t.id} value={t.name} />
        ))}
      </datalist>
      <JsonField label="Payload" name="payload" rows={6} value={payload} onChange={setPayload} error={fieldErrors.payload} />
      <SchemaRefusal refusal={rejected} />
      {sent ? (
        <div className="alert ok" role="status">
          Message{" "}
          <Link to={messagePage(place, sent.id)} className="mono">
            {sent.id}
          </Link>{" "}
          accepted: <StatusBadge status={sent.status} />
        </div>
      ) : null}
      <div className="btn-row">
        <button type="submit" className="btn primary" disabled={busy || place.app.status !== "active"} title={place.app.status !== "active" ? "The application is disabled: enable it to send" : undefined}>
          {busy ? "Sending…" : "Send message"}
        </button>
      </div>
    </form>
  );
}
