/** Creating and editing an alert rule: its type, that type's settings, what it watches and whom it tells. */
import { useRef, useState, type FormEvent, type ReactNode } from "react";
import { api } from "../../api";
import { Check, Field, FormActions, NamedOptions } from "../../components/forms";
import { KindPicker } from "../../components/kindPicker";
import { ErrorAlert, PageHead, PageLoading } from "../../components/layout";
import { toast } from "../../components/toasts";
import { parseJsonField } from "../../format";
import { useSubmit } from "../../hooks";
import { Link, navigate } from "../../router";
import { RULE_TYPES, type AlertRule, type Destination, type RuleType, type Source } from "../../types";
import { channelTypeLabel } from "../notificationChannels/kinds";
import { KINDS, ruleSentence, type ConfigField, type Names } from "./kinds";
import { useLookups, type Lookups } from "./lookups";
import { WriteForm } from "../../components/writeForm";

interface Form {
  name: string;
  description: string;
  rule_type: RuleType | "";
  /** Per type, so switching types back and forth keeps what was typed. */
  config: Record<RuleType, Record<string, string>>;
  source_id: string;
  destination_id: string;
  channel_ids: string[];
  cooldown_minutes: string;
  enabled: boolean;
}

const emptyConfigs = (): Record<RuleType, Record<string, string>> =>
  Object.fromEntries(RULE_TYPES.map((t) => [t, Object.fromEntries(KINDS[t].fields.map((f) => [f.key, f.fallback === undefined ? "" : String(f.fallback)]))])) as Record<RuleType, Record<string, string>>;

const blank = (): Form => ({ name: "", description: "", rule_type: "", config: emptyConfigs(), source_id: "", destination_id: "", channel_ids: [], cooldown_minutes: "15", enabled: true });

function toForm(r: AlertRule): Form {
  const config = emptyConfigs();
  const stored = parseJsonField<Record<string, unknown>>(r.rule_config, {});
  const type = r.rule_type as RuleType;
  if (config[type]) for (const f of KINDS[type].fields) if (stored[f.key] !== undefined && stored[f.key] !== null) config[type][f.key] = String(stored[f.key]);
  return {
    name: r.name,
    description: r.description ?? "",
    rule_type: type,
    config,
    source_id: r.source_id ?? "",
    destination_id: r.destination_id ?? "",
    channel_ids: parseJsonField<string[]>(r.channel_ids, []),
    cooldown_minutes: String(r.cooldown_minutes),
    enabled: r.enabled === 1,
  };
}

const CONFIG_KEYS = [...new Set(RULE_TYPES.flatMap((t) => KINDS[t].fields.map((f) => `rule_config.${f.key}`)))];
const formFields = ["name", "description", "rule_type", "rule_config", ...CONFIG_KEYS, "source_id", "destination_id", "channel_ids", "cooldown_minutes", "enabled"];

export function NewAlertRulePage() {
  const lookups = useLookups();
  if (!lookups.ready) return <PageLoading title="New alert rule" sub={<Link to="/alert-rules">← All alert rules</Link>} error={lookups.error} />;
  return (
    <>
      <PageHead title="New alert rule" sub={<Link to="/alert-rules">← All alert rules</Link>} />
      <RuleForm rule={null} lookups={lookups} onSaved={(r) => navigate(`/alert-rules/${r.id}`)} />
    </>
  );
}

export function RuleForm({ rule, lookups, onSaved }: { rule: AlertRule | null; lookups: Lookups; onSaved: (r: AlertRule) => void }) {
  const [f, setF] = useState<Form>(() => (rule ? toForm(rule) : blank()));
  const { busy, fieldErrors, formError, submit, setFieldErrors } = useSubmit();
  // A message was about the value it judged: editing the field takes it away.
  const forget = (field: string) => setFieldErrors((e) => (field in e ? Object.fromEntries(Object.entries(e).filter(([k]) => k !== field)) : e));
  const set = <K extends keyof Form>(k: K, v: Form[K]) => {
    setF((o) => ({ ...o, [k]: v }));
    forget(k);
  };
  const nameRef = useRef<HTMLInputElement>(null);
  const editing = rule !== null;
  const kind = f.rule_type ? KINDS[f.rule_type] : null;
  const config = f.rule_type ? f.config[f.rule_type] : {};
  const setConfig = (key: string, v: string) => {
    if (!f.rule_type) return;
    const type = f.rule_type;
    setF((o) => ({ ...o, config: { ...o.config, [type]: { ...o.config[type], [key]: v } } }));
    forget(`rule_config.${key}`);
  };

  /** rule_config with numbers, leaving empty optional fields to the server's defaults. */
  const parsedConfig = (errors: Record<string, string> | null) => {
    const out: Record<string, number> = {};
    for (const field of kind?.fields ?? []) {
      const raw = (config[field.key] ?? "").trim();
      if (raw === "") {
        if (field.fallback === undefined && errors) errors[`rule_config.${field.key}`] = field.missing ?? "Required";
        continue;
      }
      const v = Number(raw);
      if (!Number.isFinite(v)) {
        if (errors) errors[`rule_config.${field.key}`] = "Must be a number";
        continue;
      }
      out[field.key] = v;
    }
    return out;
  };

  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    const errors: Record<string, string> = {};
    if (!f.name.trim()) errors.name = "Give the rule a name, e.g. “Orders failing”";
    if (!f.rule_type) errors.rule_type = "Choose what the rule watches";
    const ruleConfig = parsedConfig(errors);
    const cooldown = f.cooldown_minutes.trim() === "" ? undefined : Number(f.cooldown_minutes);
    if (cooldown !== undefined && !Number.isInteger(cooldown)) errors.cooldown_minutes = "Must be a whole number of minutes";
    if (Object.keys(errors).length > 0) {
      setFieldErrors(errors);
      if (errors.name) nameRef.current?.focus();
      return;
    }
    const body: Record<string, unknown> = {
      name: f.name.trim(),
      description: f.description.trim() || null,
      rule_type: f.rule_type,
      rule_config: ruleConfig,
      source_id: f.source_id || null,
      destination_id: f.destination_id || null,
      channel_ids: f.channel_ids,
      ...(cooldown === undefined ? {} : { cooldown_minutes: cooldown }),
    };
    if (!editing) {
      body.enabled = f.enabled;
      for (const k of Object.keys(body)) if (body[k] === null) delete body[k];
    }
    const res = await submit(() => (editing ? api.patch<{ alert_rule: AlertRule }>(`/alert-rules/${rule.id}`, body) : api.post<{ alert_rule: AlertRule }>("/alert-rules", body)), formFields);
    if (!res) return;
    toast(editing ? "Alert rule saved" : `Alert rule “${res.alert_rule.name}” created`);
    onSaved(res.alert_rule);
  };

  const names: Names = {
    source: f.source_id ? lookups.sources?.find((s) => s.id === f.source_id)?.name : null,
    destination: f.destination_id ? lookups.destinations?.find((d) => d.id === f.destination_id)?.name : null,
  };
  const channels = lookups.channels ?? [];

  return (
    <WriteForm className="panel form" onSubmit={onSubmit} aria-label={editing ? "Alert rule settings" : "New alert rule"} noValidate>
      {editing ? <h2>Settings</h2> : null}
      <ErrorAlert error={formError ?? lookups.error} />
      <div className="form-grid">
        <Field label="Name" error={fieldErrors.name}>
          {(p) => <input {...p} ref={nameRef} type="text" name="name" value={f.name} onChange={(e) => set("name", e.target.value)} maxLength={200} placeholder="Orders failing" />}
        </Field>
        <Field label="Description (optional)" error={fieldErrors.description} help="For the people who get the alert: what to check first.">
          {(p) => <input {...p} type="text" name="description" value={f.description} onChange={(e) => set("description", e.target.value)} />}
        </Field>
      </div>

      <fieldset>
        <legend>What to watch</legend>
        <KindPicker label="Rule type" name="rule_type" options={RULE_TYPES} kinds={KINDS} value={f.rule_type} onChange={(t) => set("rule_type", t)} error={fieldErrors.rule_type} />
        {kind ? (
          <>
            {kind.fields.length > 0 ? (
              <div className="form-grid">
                {kind.fields.map((field) => (
                  <Field key={field.key} label={`${field.label}${field.unit ? ` (${field.unit})` : ""}`} error={fieldErrors[`rule_config.${field.key}`]} help={helpWithDefault(field)}>
                    {(p) => (
                      <input
                        {...p}
                        type="number"
                        name={`rule_config.${field.key}`}
                        inputMode={field.integer ? "numeric" : "decimal"}
                        step={field.integer ? 1 : "any"}
                        min={0}
                        value={config[field.key] ?? ""}
                        onChange={(e) => setConfig(field.key, e.target.value)}
                      />
                    )}
                  </Field>
                ))}
              </div>
            ) : null}
            {kind.note ? <p className="muted" style={{ margin: 0 }}>{kind.note}</p> : null}
            {fieldErrors.rule_config ? <div className="field-error">{fieldErrors.rule_config}</div> : null}
            <div className="alert info" style={{ margin: 0 }} data-testid="rule-sentence">
              {ruleSentence(f.rule_type, parsedConfig(null), names)}
            </div>
          </>
        ) : null}
      </fieldset>

      <fieldset>
        <legend>Scope (optional)</legend>
        <p className="muted" style={{ margin: 0 }}>
          {kind?.scope ?? "Narrow the rule to one source or one destination, or leave both empty to watch everything."}
        </p>
        <div className="form-grid">
          <Field label="Source" error={fieldErrors.source_id}>
            {(p) => (
              <select {...p} name="source_id" value={f.source_id} onChange={(e) => set("source_id", e.target.value)}>
                <option value="">Every source</option>
                <NamedOptions items={lookups.sources} />
              </select>
            )}
          </Field>
          <Field label="Destination" error={fieldErrors.destination_id}>
            {(p) => (
              <select {...p} name="destination_id" value={f.destination_id} onChange={(e) => set("destination_id", e.target.value)}>
                <option value="">Every destination</option>
                <NamedOptions items={lookups.destinations} />
              </select>
            )}
          </Field>
        </div>
      </fieldset>

      <fieldset>
        <legend>Notify</legend>
        {channels.length === 0 ? (
          <p className="muted" style={{ margin: 0 }}>
            No notification channels yet. <Link to="/notification-channels/new">Create a channel</Link> (a webhook, Slack, Discord or email), then come back to pick it. Without one the rule still records its history.
          </p>
        ) : (
          <div role="group" aria-label="Channels" style={{ display: "grid", gap: 6 }}>
            {channels.map((c) => (
              <label key={c.id} className="check">
                <input
                  type="checkbox"
                  name="channel_ids"
                  value={c.id}
                  checked={f.channel_ids.includes(c.id)}
                  onChange={(e) => set("channel_ids", e.target.checked ? [...f.channel_ids, c.id] : f.channel_ids.filter((x) => x !== c.id))}
                />
                {c.name} <span className="muted">({channelTypeLabel(c.type)})</span>
              </label>
            ))}
            {f.channel_ids.length === 0 ? <div className="help muted">No channel picked: the rule records its history but tells nobody.</div> : null}
          </div>
        )}
        {fieldErrors.channel_ids ? (
          <div className="field-error" role="alert">
            {fieldErrors.channel_ids}
          </div>
        ) : null}
        <div className="form-grid" style={{ maxWidth: 480 }}>
          <Field
            label="Cooldown (minutes)"
            error={fieldErrors.cooldown_minutes}
            help="After the rule fires it stays quiet this long, even while the problem goes on, so one outage is one alert. 0: notify at every check that finds the problem."
          >
            {(p) => <input {...p} type="number" name="cooldown_minutes" inputMode="numeric" min={0} step={1} value={f.cooldown_minutes} onChange={(e) => set("cooldown_minutes", e.target.value)} />}
          </Field>
        </div>
        {editing ? null : <Check label="Enabled: start checking as soon as the rule is saved" checked={f.enabled} onChange={(v) => set("enabled", v)} />}
      </fieldset>
      <FormActions busy={busy} label={editing ? "Save alert rule" : "Create alert rule"} busyLabel={editing ? "Saving…" : "Creating…"} cancelTo={editing ? undefined : "/alert-rules"} />
    </WriteForm>
  );
}

function helpWithDefault(field: ConfigField): ReactNode {
  return field.fallback === undefined ? field.help : `${field.help} Default: ${field.fallback.toLocaleString()}.`;
}
