import { useRef, useState, type FormEvent, type ReactNode } from "react";
import { api } from "../api";
import { DetailActions } from "../components/detailActions";
import { ConfirmDialog } from "../components/dialogs";
import { Check, Field, FormActions, NamedOptions } from "../components/forms";
import { KindPicker } from "../components/kindPicker";
import { Empty, ErrorAlert, PageHead, PageLoading } from "../components/layout";
import { Pager } from "../components/table";
import { Time } from "../components/time";
import { toast } from "../components/toasts";
import { fullTime, num, parseJsonField, plural } from "../format";
import { useAction, useInterval, useLoad, useSubmit } from "../hooks";
import { ResourceListPage, useDeleteResource } from "../resources";
import { Link, navigate } from "../router";
import { RULE_TYPES, type AlertHistoryEntry, type AlertRule, type Channel, type ChannelNotified, type Destination, type Pagination, type RuleType, type Source } from "../types";
import { channelTypeLabel } from "./NotificationChannels";

// ---------------------------------------------------------------- the rule types in words

interface ConfigField {
  key: string;
  label: string;
  unit?: string;
  /** The server's default, used when the field is left empty; none: the field is required. */
  fallback?: number;
  help: string;
  integer?: boolean;
  /** Said when a required field is left empty. */
  missing?: string;
}

const windowField = (fallback: number): ConfigField => ({
  key: "window_minutes",
  label: "Window",
  unit: "minutes",
  fallback,
  integer: true,
  help: "How far back each check looks. A longer window reacts more slowly but is fooled less by a short blip.",
});

interface RuleKind {
  label: string;
  /** One line on the type's card. */
  pitch: string;
  fields: ConfigField[];
  /** What a source or destination scope narrows the rule to. */
  scope: string;
  note?: string;
}

const KINDS: Record<RuleType, RuleKind> = {
  failure_rate: {
    label: "Failure rate",
    pitch: "Too many deliveries fail.",
    fields: [
      { key: "threshold_percent", label: "Failure threshold", unit: "%", missing: "Say from what share of failed deliveries the rule fires, e.g. 20", help: "Fire when at least this share of the deliveries that finished in the window failed. 20 means one delivery in five." },
      windowField(5),
      {
        key: "min_attempts",
        label: "Minimum deliveries",
        fallback: 10,
        integer: true,
        help: "Judge only once at least this many deliveries finished in the window, so one failure out of two on a quiet night is not an alert.",
      },
    ],
    scope: "A source: only deliveries of its events. A destination: only deliveries to it. Neither: every delivery.",
  },
  latency: {
    label: "Latency",
    pitch: "Deliveries get slow.",
    fields: [
      { key: "threshold_ms", label: "Slowness threshold", unit: "ms", integer: true, missing: "Say from how many milliseconds a delivery counts as slow, e.g. 2000", help: "Fire when deliveries take at least this long to be answered. Timeouts count with the time they waited." },
      {
        key: "percentile",
        label: "Percentile",
        fallback: 95,
        help: "Which delivery time is compared: 95 is the time 95% of deliveries stayed under, so a few slow ones do not fire the rule; 50 is the typical (median) time, 100 the slowest.",
      },
      windowField(5),
    ],
    scope: "A source: only deliveries of its events. A destination: only deliveries to it. Neither: every delivery.",
  },
  dlq: {
    label: "Dead-letter queue",
    pitch: "Deliveries run out of retries.",
    fields: [
      {
        key: "threshold",
        label: "Deliveries in the DLQ",
        fallback: 1,
        integer: true,
        help: "Fire when at least this many deliveries landed in the dead-letter queue within the window (and are still there). Checked the moment one lands, too.",
      },
      windowField(60),
    ],
    scope: "A source: only deliveries of its events. A destination: only deliveries to it. Neither: every delivery.",
  },
  volume_drop: {
    label: "Volume drop",
    pitch: "Events stop arriving.",
    fields: [
      { key: "min_events", label: "Expected events", integer: true, missing: "Say how many events at least should arrive in the window", help: "Fire when fewer events than this arrived in the window. A new rule waits one whole window before it can fire." },
      windowField(60),
    ],
    scope: "A source: count the events it receives. A destination: count the events routed to it. Neither: every event of this environment.",
  },
  issue_opened: {
    label: "Issue opened",
    pitch: "A delivery issue opens.",
    fields: [],
    scope: "A destination: only its issues. A source: only issues whose failing event came from it. Neither: every issue.",
    note: "Nothing to set: the rule fires the moment an issue opens, or a resolved one reopens, unless the issue is snoozed. Each issue is its own trigger, so the cooldown applies between issues: set it to 0 to hear of every one.",
  },
};

export const ruleTypeLabel = (t: string) => KINDS[t as RuleType]?.label ?? t;

interface Names {
  source?: string | null;
  destination?: string | null;
}

const n = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : undefined);

/** The rule in one sentence ("Fires when at least 20% of deliveries to Orders API fail within 5 minutes…"), from its config. */
export function ruleSentence(type: string, config: Record<string, unknown>, names: Names): string {
  const to = names.destination ? ` to ${names.destination}` : "";
  const from = names.source ? ` of events from ${names.source}` : "";
  const kind = KINDS[type as RuleType];
  const get = (key: string) => n(config[key]) ?? kind?.fields.find((f) => f.key === key)?.fallback;
  const w = get("window_minutes");
  const within = w === undefined ? "" : ` within ${plural(w, "minute")}`;
  const fmt = (v: number | undefined, unit = "") => (v === undefined ? "…" : `${v.toLocaleString()}${unit}`);
  switch (type) {
    case "failure_rate":
      return `Fires when at least ${fmt(get("threshold_percent"), "%")} of the deliveries${from}${to} fail${within}, judged once at least ${fmt(get("min_attempts"))} finished.`;
    case "latency":
      return `Fires when the ${ordinal(get("percentile"))} percentile delivery time${from}${to} reaches ${fmt(get("threshold_ms"), " ms")}${within}.`;
    case "dlq": {
      const t = get("threshold");
      const what = t === undefined ? "… deliveries" : plural(t, "delivery", "deliveries");
      return `Fires when ${what}${from}${to} ${t === 1 ? "lands" : "land"} in the dead-letter queue${within}.`;
    }
    case "volume_drop": {
      const min = get("min_events");
      const what = names.source ? ` from ${names.source}` : names.destination ? ` for ${names.destination}` : "";
      if (min === 1) return `Fires when no event arrives${what}${within}.`;
      return `Fires when fewer than ${min === undefined ? "…" : plural(min, "event")} arrive${what}${within}.`;
    }
    case "issue_opened":
      return `Fires when a delivery issue opens${names.destination ? ` at ${names.destination}` : ""}${names.source ? ` for events from ${names.source}` : ""}.`;
    default:
      return type;
  }
}

function ordinal(v: number | undefined) {
  if (v === undefined) return "…";
  const s = v % 100 >= 11 && v % 100 <= 13 ? "th" : ({ 1: "st", 2: "nd", 3: "rd" } as Record<number, string>)[v % 10] ?? "th";
  return Number.isInteger(v) ? `${v}${s}` : `${v}th`;
}

/** Sources, destinations and channels, to name what a rule points at. */
function useLookups() {
  const sources = useLoad(() => api.get<{ sources: Source[] }>("/sources"), []);
  const dests = useLoad(() => api.get<{ destinations: Destination[] }>("/destinations"), []);
  const channels = useLoad(() => api.get<{ channels: Channel[] }>("/notification-channels"), []);
  return {
    sources: sources.data?.sources,
    destinations: dests.data?.destinations,
    channels: channels.data?.channels,
    error: sources.error ?? dests.error ?? channels.error,
    ready: !!(sources.data && dests.data && channels.data),
    namesOf: (r: Pick<AlertRule, "source_id" | "destination_id">): Names => ({
      source: r.source_id ? (sources.data?.sources.find((s) => s.id === r.source_id)?.name ?? r.source_id) : null,
      destination: r.destination_id ? (dests.data?.destinations.find((d) => d.id === r.destination_id)?.name ?? r.destination_id) : null,
    }),
  };
}

type Lookups = ReturnType<typeof useLookups>;

function EnabledBadge({ rule }: { rule: AlertRule }) {
  return rule.enabled ? <span className="badge ok">enabled</span> : <span className="badge">disabled</span>;
}

// ---------------------------------------------------------------- list

export function AlertRulesPage() {
  const rules = useLoad(() => api.get<{ alert_rules: AlertRule[] }>("/alert-rules"), []);
  const lookups = useLookups();
  useInterval(() => void rules.reload(), 15_000);
  const { busy, error, run } = useAction();

  const replace = (rule: AlertRule) => rules.setData((d) => (d ? { alert_rules: d.alert_rules.map((r) => (r.id === rule.id ? rule : r)) } : d));
  // The switch moves at once; a refusal puts it back.
  const toggle = (rule: AlertRule, enabled: boolean) =>
    run(async () => {
      replace({ ...rule, enabled: enabled ? 1 : 0 });
      try {
        replace((await api.patch<{ alert_rule: AlertRule }>(`/alert-rules/${rule.id}`, { enabled })).alert_rule);
      } catch (e) {
        replace(rule);
        throw e;
      }
      toast(`“${rule.name}” ${enabled ? "enabled" : "disabled"}`);
    });

  return (
    <>
      <ErrorAlert error={error} />
      <ResourceListPage
        title="Alert rules"
        noun="alert rule"
        path="/alert-rules"
        sub="Rules watch failure rates, delivery times, the dead-letter queue, event volume and new issues, and notify your channels when something is wrong."
        emptyText="An alert rule checks something every 30 seconds (or the moment an issue opens) and, when it fires, notifies the channels you pick: a webhook, Slack, Discord or email."
        loaded={rules}
        rows={rules.data?.alert_rules}
        columns={[
          {
            label: "Name",
            render: (r) => (
              <>
                <Link to={`/alert-rules/${r.id}`}>{r.name}</Link>
                <div className="muted" style={{ fontSize: 12 }}>
                  {ruleSentence(r.rule_type, parseJsonField(r.rule_config, {}), lookups.namesOf(r))}
                </div>
              </>
            ),
          },
          { label: "Type", render: (r) => ruleTypeLabel(r.rule_type) },
          {
            label: "Channels",
            hideNarrow: true,
            render: (r) => {
              const ids = parseJsonField<string[]>(r.channel_ids, []);
              if (ids.length === 0) return <span className="muted">none</span>;
              return ids.map((id) => lookups.channels?.find((c) => c.id === id)?.name ?? id).join(", ");
            },
          },
          {
            label: "Enabled",
            render: (r) => (
              <label className="check">
                <input type="checkbox" role="switch" checked={r.enabled === 1} disabled={busy} onChange={(e) => toggle(r, e.target.checked)} aria-label={`Enabled: ${r.name}`} />
                {r.enabled ? "on" : "off"}
              </label>
            ),
          },
          { label: "Last triggered", render: (r) => <Time iso={r.last_triggered_at} /> },
          { label: "Triggers", className: "num", render: (r) => num(r.trigger_count) },
        ]}
      />
    </>
  );
}

// ---------------------------------------------------------------- create and edit

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

function RuleForm({ rule, lookups, onSaved }: { rule: AlertRule | null; lookups: Lookups; onSaved: (r: AlertRule) => void }) {
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
    <form className="panel form" onSubmit={onSubmit} aria-label={editing ? "Alert rule settings" : "New alert rule"} noValidate>
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
    </form>
  );
}

function helpWithDefault(field: ConfigField): ReactNode {
  return field.fallback === undefined ? field.help : `${field.help} Default: ${field.fallback.toLocaleString()}.`;
}

// ---------------------------------------------------------------- detail

export function AlertRuleDetailPage({ id }: { id: string }) {
  const loaded = useLoad(() => api.get<{ alert_rule: AlertRule; history: AlertHistoryEntry[] }>(`/alert-rules/${encodeURIComponent(id)}`), [id]);
  const lookups = useLookups();
  const rule = loaded.data?.alert_rule;
  const deletion = useDeleteResource("/alert-rules", "Alert rule", rule ?? null);
  const { busy, error, run } = useAction();
  const [historyStamp, setHistoryStamp] = useState(0);
  // Rules fire in the background: show new triggers without a reload.
  useInterval(() => {
    void loaded.reload();
    setHistoryStamp((s) => s + 1);
  }, 5000);

  if (!rule || !lookups.ready) return <PageLoading title="Alert rule" sub={<Link to="/alert-rules">← All alert rules</Link>} error={loaded.error ?? lookups.error} onRetry={loaded.reload} />;

  const setEnabled = (enabled: boolean) =>
    run(async () => {
      const res = await api.patch<{ alert_rule: AlertRule }>(`/alert-rules/${rule.id}`, { enabled });
      loaded.setData((d) => (d ? { ...d, alert_rule: res.alert_rule } : d));
      toast(enabled ? "Alert rule enabled" : "Alert rule disabled");
    });

  const channelIds = parseJsonField<string[]>(rule.channel_ids, []);
  const config = parseJsonField<Record<string, unknown>>(rule.rule_config, {});

  return (
    <>
      <PageHead
        title={
          <>
            {rule.name} <EnabledBadge rule={rule} />
          </>
        }
        sub={<Link to="/alert-rules">← All alert rules</Link>}
        actions={<DetailActions moves={[{ label: rule.enabled ? "Disable" : "Enable", to: rule.enabled !== 1 }]} busy={busy} onMove={setEnabled} onDelete={deletion.ask} />}
      />
      <ErrorAlert error={error} />
      {rule.enabled ? null : <div className="alert warn">Disabled: the rule is not checked and never fires until you enable it.</div>}
      <section className="panel" aria-label="Alert rule">
        <p style={{ marginTop: 0 }} data-testid="rule-summary">
          {ruleSentence(rule.rule_type, config, lookups.namesOf(rule))}
        </p>
        {rule.description ? <p className="muted">{rule.description}</p> : null}
        <dl className="kv">
          <dt>Type</dt>
          <dd>{ruleTypeLabel(rule.rule_type)}</dd>
          <dt>Last triggered</dt>
          <dd>{rule.last_triggered_at ? <>{fullTime(rule.last_triggered_at)} (<Time iso={rule.last_triggered_at} />)</> : <span className="muted">never</span>}</dd>
          <dt>Triggers</dt>
          <dd>{num(rule.trigger_count)}</dd>
          <dt>Notifies</dt>
          <dd>
            {channelIds.length === 0 ? (
              <span className="muted">no channel</span>
            ) : (
              channelIds.map((cid, i) => (
                <span key={cid}>
                  {i > 0 ? ", " : ""}
                  <Link to={`/notification-channels/${cid}`}>{lookups.channels?.find((c) => c.id === cid)?.name ?? cid}</Link>
                </span>
              ))
            )}
          </dd>
          <dt>Cooldown</dt>
          <dd>{rule.cooldown_minutes === 0 ? "none: every time it fires" : plural(rule.cooldown_minutes, "minute")}</dd>
        </dl>
      </section>
      <HistoryPanel ruleId={rule.id} stamp={`${historyStamp}:${rule.trigger_count}`} />
      <RuleForm key={rule.updated_at} rule={rule} lookups={lookups} onSaved={(saved) => loaded.setData((d) => (d ? { ...d, alert_rule: saved } : d))} />

      <ConfirmDialog {...deletion.dialog} title="Delete this alert rule?" confirmLabel="Delete alert rule">
        <p>
          <strong>{rule.name}</strong> stops watching and is deleted with its history ({plural(rule.trigger_count, "trigger")}). Its channels stay. This cannot be undone.
        </p>
      </ConfirmDialog>
    </>
  );
}

const HISTORY_LIMIT = 20;

function HistoryPanel({ ruleId, stamp }: { ruleId: string; stamp: string }) {
  const [offset, setOffset] = useState(0);
  const history = useLoad(() => api.get<{ history: AlertHistoryEntry[]; pagination: Pagination }>(`/alert-rules/${ruleId}/history`, { limit: HISTORY_LIMIT, offset }), [ruleId, offset, stamp]);
  const entries = history.data?.history ?? [];
  return (
    <section className="panel" aria-label="History">
      <div className="panel-head">
        <h2>History</h2>
        <span className="muted">each time the rule fired or resolved, newest first</span>
      </div>
      <ErrorAlert error={history.error} onRetry={history.reload} />
      {history.loading && !history.data ? null : entries.length === 0 ? (
        <Empty title="Not fired yet">When the rule fires, each trigger shows here with why, the numbers measured and how each channel took it.</Empty>
      ) : (
        <ol className="timeline alert-history">
          {entries.map((e) => (
            <HistoryItem key={e.id} entry={e} />
          ))}
        </ol>
      )}
      {(history.data?.pagination.total ?? 0) > HISTORY_LIMIT ? <Pager pagination={history.data?.pagination} offset={offset} limit={HISTORY_LIMIT} count={entries.length} onPage={setOffset} /> : null}
    </section>
  );
}

const label = (key: string) => key.replace(/_/g, " ");

function HistoryItem({ entry }: { entry: AlertHistoryEntry }) {
  const data = parseJsonField<Record<string, unknown>>(entry.trigger_data, {});
  const outcomes = parseJsonField<ChannelNotified[]>(entry.channels_notified, []);
  const failed = outcomes.filter((o) => !o.success).length;
  // A firing rule whose condition cleared sent a resolved notification (docs/alerts.md).
  const resolved = entry.status === "resolved";
  return (
    <li className={failed > 0 ? "bad" : "ok"} aria-label={`${resolved ? "Resolved" : "Fired"} ${fullTime(entry.created_at)}`}>
      <div className="tl-head">
        {resolved ? <span className="badge ok">resolved</span> : <span className="badge warn">fired</span>}
        <Time iso={entry.created_at} />
        <span className="muted">{fullTime(entry.created_at)}</span>
      </div>
      <p style={{ margin: "0 0 8px" }}>{entry.trigger_reason}</p>
      {Object.keys(data).length > 0 ? (
        <dl className="kv trigger-data">
          {Object.entries(data).map(([k, v]) => (
            <FragmentKV key={k} k={k} v={v} />
          ))}
        </dl>
      ) : null}
      <div className="tl-note muted" style={{ marginTop: 8 }}>
        {outcomes.length === 0 ? "No channel to notify." : failed > 0 ? `${failed} of ${plural(outcomes.length, "channel")} failed:` : `Notified ${plural(outcomes.length, "channel")}:`}
      </div>
      {outcomes.length > 0 ? (
        <ul className="outcomes">
          {outcomes.map((o) => (
            <li key={o.channel_id}>
              {o.success ? <span className="badge ok">sent</span> : <span className="badge bad">failed</span>} {o.channel_name !== null ? <Link to={`/notification-channels/${o.channel_id}`}>{o.channel_name}</Link> : <span className="muted">a deleted channel</span>}{" "}
              <span className="muted">
                ({o.channel_type ? channelTypeLabel(o.channel_type) : "?"}
                {o.attempts > 1 ? `, ${plural(o.attempts, "try", "tries")}` : ""})
              </span>
              {o.error ? <div className="outcome-error">{o.error}</div> : null}
            </li>
          ))}
        </ul>
      ) : null}
    </li>
  );
}

function FragmentKV({ k, v }: { k: string; v: unknown }) {
  let value: ReactNode = typeof v === "string" || typeof v === "number" || typeof v === "boolean" ? String(v) : JSON.stringify(v);
  if (k === "issue_id" && typeof v === "string") value = <Link to={`/issues/${v}`} className="mono">{v}</Link>;
  if (k === "destination_id" && typeof v === "string") value = <Link to={`/destinations/${v}`} className="mono">{v}</Link>;
  return (
    <>
      <dt>{label(k)}</dt>
      <dd>{value}</dd>
    </>
  );
}
