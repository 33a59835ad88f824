/** A source's settings: name, signature verification, IP filter, de-duplication, JSON Schema. */
import { useEffect, useRef, useState, type FormEvent } from "react";
import { api, errorMessage } from "../../api";
import { Check, Field, FormActions, Options } from "../../components/forms";
import { ErrorAlert } from "../../components/layout";
import { toast } from "../../components/toasts";
import { parseJsonField, prettyJson } from "../../format";
import { useSubmit } from "../../hooks";
import { DEDUP_STRATEGIES, VERIFICATION_TYPES, type Source } from "../../types";
import { WriteForm } from "../../components/writeForm";
import { useCan } from "../../can";

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
export function SourceSettings({ source, onSaved }: { source: Source; onSaved: (s: Source) => void }) {
  const initial = useRef(toState(source));
  const [f, setF] = useState<SettingsState>(initial.current);
  const [revealed, setRevealed] = useState<string | null>(null);
  const canReveal = useCan("readSecrets");
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
    <WriteForm className="panel form" onSubmit={onSubmit} aria-label="Source settings" noValidate>
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
                {source.verification_secret && revealed === null && canReveal ? (
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
    </WriteForm>
  );
}
