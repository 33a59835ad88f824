import { useRef, useState, type FormEvent } from "react";
import { api, ApiError } from "../api";
import { DetailActions } from "../components/detailActions";
import { ConfirmDialog } from "../components/dialogs";
import { Field, FormActions } from "../components/forms";
import { KindPicker } from "../components/kindPicker";
import { ErrorAlert, PageHead, PageLoading } from "../components/layout";
import { Time } from "../components/time";
import { toast } from "../components/toasts";
import { fullTime, parseJsonField, plural } from "../format";
import { useAction, useLoad, useSubmit } from "../hooks";
import { ResourceListPage } from "../resources";
import { Link, navigate, useLocation } from "../router";
import { CHANNEL_TYPES, MASK, type AlertRule, type Channel, type ChannelDetail, type ChannelType } from "../types";

// ---------------------------------------------------------------- the channel types in words

interface ConfigField {
  key: string;
  label: string;
  help: string;
  placeholder?: string;
  optional?: boolean;
  /** Masked in answers: a password input, and the mask sent back keeps the stored value. */
  secret?: boolean;
  /** Said when a required field is left empty. */
  missing?: string;
}

interface ChannelKind {
  label: string;
  pitch: string;
  fields: ConfigField[];
}

const KINDS: Record<ChannelType, ChannelKind> = {
  webhook: {
    label: "Webhook",
    pitch: "A JSON POST to an endpoint of yours.",
    fields: [
      {
        key: "url",
        label: "URL",
        placeholder: "https://ops.example.com/hookrelay-alerts",
        missing: "Say where to POST the alerts",
        help: "Each alert is POSTed here as JSON: the rule, the reason in words, the numbers measured and a link back here.",
      },
      {
        key: "secret",
        label: "Signing secret (optional)",
        optional: true,
        secret: true,
        help: "With a secret, each notification carries X-Hookrelay-Signature: sha256=<HMAC-SHA256 of the body>, so your receiver can tell it came from hookrelay.",
      },
    ],
  },
  slack: {
    label: "Slack",
    pitch: "A message in a Slack channel.",
    fields: [
      {
        key: "webhook_url",
        label: "Incoming webhook URL",
        placeholder: "https://hooks.slack.com/services/T…/B…/…",
        missing: "Paste the Slack incoming webhook URL",
        secret: true,
        help: "In Slack: Apps → Incoming Webhooks → Add to Slack, pick the channel, copy the webhook URL. Mattermost's incoming webhooks work too.",
      },
    ],
  },
  discord: {
    label: "Discord",
    pitch: "A message in a Discord channel.",
    fields: [
      {
        key: "webhook_url",
        label: "Webhook URL",
        placeholder: "https://discord.com/api/webhooks/…/…",
        missing: "Paste the Discord webhook URL",
        secret: true,
        help: "In Discord: Server settings → Integrations → Webhooks → New webhook, choose the channel, Copy webhook URL.",
      },
    ],
  },
  email: {
    label: "Email",
    pitch: "An email through your SMTP server.",
    fields: [
      { key: "to", label: "To", placeholder: "ops@example.com, oncall@example.com", missing: "Say who gets the email", help: "One address, or several separated by commas." },
      { key: "from", label: "From (optional)", optional: true, placeholder: "hookrelay <alerts@example.com>", help: "Default: hookrelay <hookrelay@the host of this server's base URL>." },
      {
        key: "smtp_url",
        label: "SMTP server (optional)",
        optional: true,
        secret: true,
        placeholder: "smtp://user:password@mail.example.com:587",
        help: "smtp://… on port 587 upgrades to TLS when the server offers it; smtps://… on port 465 is TLS from the start. Empty: the server's HOOKRELAY_SMTP_URL.",
      },
    ],
  },
};

export const channelTypeLabel = (t: string) => KINDS[t as ChannelType]?.label ?? t;

/** Where a channel sends, as its config shows it (secrets masked by the server). */
function target(c: Pick<Channel, "type" | "config">): string {
  const cfg = c.config as Record<string, unknown>;
  const v = c.type === "email" ? cfg.to : c.type === "webhook" ? cfg.url : cfg.webhook_url;
  return Array.isArray(v) ? v.join(", ") : typeof v === "string" ? v : "";
}

// ---------------------------------------------------------------- list

export function NotificationChannelsPage() {
  const channels = useLoad(() => api.get<{ channels: Channel[] }>("/notification-channels"), []);
  return (
    <ResourceListPage
      title="Notification channels"
      noun="channel"
      path="/notification-channels"
      sub="Where alert rules send their alerts: a webhook of yours, a Slack or Discord channel, or email."
      emptyText="Create a channel, send it a test, then pick it in an alert rule."
      loaded={channels}
      rows={channels.data?.channels}
      columns={[
        { label: "Name", render: (c) => <Link to={`/notification-channels/${c.id}`}>{c.name}</Link> },
        { label: "Type", render: (c) => channelTypeLabel(c.type) },
        {
          label: "Sends to",
          render: (c) => (
            <span className="mono" style={{ overflowWrap: "anywhere" }}>
              {target(c)}
            </span>
          ),
        },
        { label: "Created", hideNarrow: true, render: (c) => <Time iso={c.created_at} /> },
      ]}
    />
  );
}

// ---------------------------------------------------------------- create and edit

type Values = Record<string, string>;

function valuesOf(config: Record<string, unknown>, type: ChannelType): Values {
  return Object.fromEntries(
    KINDS[type].fields.map((f) => {
      const v = config[f.key];
      return [f.key, Array.isArray(v) ? v.join(", ") : typeof v === "string" ? v : ""];
    }),
  );
}

const blankValues = (): Record<ChannelType, Values> => Object.fromEntries(CHANNEL_TYPES.map((t) => [t, Object.fromEntries(KINDS[t].fields.map((f) => [f.key, ""]))])) as Record<ChannelType, Values>;

const formFields = ["name", "channel_type", "config", ...new Set(CHANNEL_TYPES.flatMap((t) => KINDS[t].fields.map((f) => `config.${f.key}`)))];

export function NewChannelPage() {
  return (
    <>
      <PageHead title="New notification channel" sub={<Link to="/notification-channels">← All channels</Link>} />
      <ChannelForm channel={null} onSaved={(id) => navigate(`/notification-channels/${id}?created=1`)} />
    </>
  );
}

function ChannelForm({ channel, onSaved }: { channel: ChannelDetail | null; onSaved: (id: string) => void }) {
  const editing = channel !== null;
  const [name, setName] = useState(channel?.name ?? "");
  const [type, setType] = useState<ChannelType | "">((channel?.type as ChannelType | undefined) ?? "");
  const initial = useRef(channel ? valuesOf(channel.config, channel.type as ChannelType) : {});
  const [values, setValues] = useState<Record<ChannelType, Values>>(() => (channel ? { ...blankValues(), [channel.type]: initial.current } : blankValues()));
  const { busy, fieldErrors, formError, submit, setFieldErrors } = useSubmit();
  const nameRef = useRef<HTMLInputElement>(null);
  const kind = type ? KINDS[type] : null;
  const current = type ? values[type] : {};
  const setValue = (key: string, v: string) => type && setValues((o) => ({ ...o, [type]: { ...o[type], [key]: v } }));

  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    const errors: Record<string, string> = {};
    if (!name.trim()) errors.name = "Give the channel a name, e.g. “Ops Slack”";
    if (!type) errors.channel_type = "Choose where alerts go";
    for (const f of kind?.fields ?? []) if (!f.optional && !(current[f.key] ?? "").trim()) errors[`config.${f.key}`] = f.missing ?? "Required";
    if (Object.keys(errors).length > 0) {
      setFieldErrors(errors);
      if (errors.name) nameRef.current?.focus();
      return;
    }
    if (!editing) {
      const config = Object.fromEntries((kind?.fields ?? []).flatMap((f) => ((current[f.key] ?? "").trim() ? [[f.key, current[f.key]!.trim()]] : [])));
      const res = await submit(() => api.post<Channel>("/notification-channels", { name: name.trim(), channel_type: type, config }), formFields);
      if (res) {
        toast(`Channel “${res.name}” created`);
        onSaved(res.id);
      }
      return;
    }
    // Only what changed: fields left out keep their stored value, null removes an optional one.
    const config: Record<string, string | null> = {};
    for (const f of kind?.fields ?? []) {
      const v = (current[f.key] ?? "").trim();
      if (v === (initial.current[f.key] ?? "")) continue;
      config[f.key] = v === "" ? null : v;
    }
    const body: Record<string, unknown> = {};
    if (name.trim() !== channel.name) body.name = name.trim();
    if (Object.keys(config).length > 0) body.config = config;
    if (Object.keys(body).length === 0) return toast("Nothing changed");
    const res = await submit(() => api.patch<{ id: string }>(`/notification-channels/${channel.id}`, body), formFields);
    if (res) {
      toast("Channel saved");
      onSaved(res.id);
    }
  };

  return (
    <form className="panel form" onSubmit={onSubmit} aria-label={editing ? "Channel settings" : "New notification channel"} noValidate>
      {editing ? <h2>Settings</h2> : null}
      <ErrorAlert error={formError} />
      <Field label="Name" error={fieldErrors.name}>
        {(p) => <input {...p} ref={nameRef} type="text" name="name" value={name} onChange={(e) => setName(e.target.value)} maxLength={200} placeholder="Ops Slack" />}
      </Field>
      {editing ? null : (
        <fieldset>
          <legend>Type</legend>
          <KindPicker label="Channel type" name="channel_type" options={CHANNEL_TYPES} kinds={KINDS} value={type} onChange={setType} error={fieldErrors.channel_type} />
        </fieldset>
      )}
      {kind?.fields.map((f) => (
        <Field
          key={`${type}.${f.key}`}
          label={f.label}
          error={fieldErrors[`config.${f.key}`]}
          help={editing && f.secret && initial.current[f.key]?.includes(MASK) ? `${f.help} The stored value is shown masked: leave it to keep it${f.optional ? ", empty it to remove it" : ""}.` : f.help}
        >
          {(p) => (
            <input
              {...p}
              type={f.secret && f.key === "secret" ? "password" : "text"}
              name={`config.${f.key}`}
              autoComplete="off"
              spellCheck={false}
              className={f.key === "to" || f.key === "from" ? undefined : "mono"}
              value={current[f.key] ?? ""}
              onChange={(e) => setValue(f.key, e.target.value)}
              placeholder={f.placeholder}
            />
          )}
        </Field>
      ))}
      {fieldErrors.config ? <div className="field-error">{fieldErrors.config}</div> : null}
      <FormActions busy={busy} label={editing ? "Save channel" : "Create channel"} busyLabel={editing ? "Saving…" : "Creating…"} cancelTo={editing ? undefined : "/notification-channels"} />
    </form>
  );
}

// ---------------------------------------------------------------- detail

type Conflict = { alert_rule_id: string; name: string }[];

/** The 409's details: the rules that still list the channel. */
function conflictOf(e: unknown): Conflict | null {
  if (!(e instanceof ApiError) || e.code !== "conflict" || !Array.isArray(e.details)) return null;
  return e.details.filter((d): d is Conflict[number] => typeof d === "object" && d !== null && typeof (d as Conflict[number]).alert_rule_id === "string");
}

export function ChannelDetailPage({ id }: { id: string }) {
  const { search } = useLocation();
  const loaded = useLoad(() => api.get<ChannelDetail>(`/notification-channels/${encodeURIComponent(id)}`), [id]);
  const rules = useLoad(() => api.get<{ alert_rules: AlertRule[] }>("/alert-rules"), []);
  const c = loaded.data;
  const [test, setTest] = useState<{ success: boolean; error: string | null; at: string } | null>(null);
  const testing = useAction();
  const [confirmDelete, setConfirmDelete] = useState(false);
  const [conflict, setConflict] = useState<Conflict | null>(null);
  const deleting = useAction();

  if (!c) return <PageLoading title="Notification channel" sub={<Link to="/notification-channels">← All channels</Link>} error={loaded.error} onRetry={loaded.reload} />;

  const usedBy = (rules.data?.alert_rules ?? []).filter((r) => parseJsonField<string[]>(r.channel_ids, []).includes(c.id));

  const sendTest = () =>
    testing.run(async () => {
      setTest(null);
      const r = await api.post<{ success: boolean; error: string | null }>(`/notification-channels/${encodeURIComponent(c.id)}/test`);
      setTest({ ...r, at: new Date().toISOString() });
    });

  const remove = () =>
    deleting.run(async () => {
      setConflict(null);
      try {
        await api.del(`/notification-channels/${encodeURIComponent(c.id)}`);
      } catch (e) {
        const rulesUsing = conflictOf(e);
        if (!rulesUsing) throw e;
        setConflict([...rulesUsing].sort((a, b) => a.name.localeCompare(b.name)));
        void rules.reload();
        return;
      }
      toast(`Channel “${c.name}” deleted`);
      navigate("/notification-channels");
    });

  return (
    <>
      <PageHead
        title={
          <>
            {c.name} <span className="badge info">{channelTypeLabel(c.type)}</span>
          </>
        }
        sub={<Link to="/notification-channels">← All channels</Link>}
        actions={
          <DetailActions
            onDelete={() => {
              setConflict(null);
              deleting.setError(null);
              setConfirmDelete(true);
            }}
          >
            <button type="button" className="btn primary" disabled={testing.busy} onClick={sendTest}>
              {testing.busy ? "Sending…" : "Send test"}
            </button>
          </DetailActions>
        }
      />
      {search.get("created") && !test ? (
        <div className="alert ok" role="status">
          Channel created. Send a test to check that alerts reach you, then pick the channel in an <Link to="/alert-rules">alert rule</Link>.
        </div>
      ) : null}
      <ErrorAlert error={testing.error} />
      {test ? (
        test.success ? (
          <div className="alert ok" role="status" data-testid="test-result">
            ✓ Test notification sent at {fullTime(test.at)}. Check that it arrived.
          </div>
        ) : (
          <div className="alert error" role="alert" data-testid="test-result">
            ✗ The test notification failed: {test.error}
          </div>
        )
      ) : null}

      <section className="panel" aria-label="Channel">
        <dl className="kv">
          <dt>Type</dt>
          <dd>{channelTypeLabel(c.type)}</dd>
          <dt>Sends to</dt>
          <dd className="mono" style={{ overflowWrap: "anywhere" }}>
            {target(c)}
          </dd>
          <dt>Used by</dt>
          <dd>
            {usedBy.length === 0 ? (
              <span className="muted">no alert rule yet</span>
            ) : (
              usedBy.map((r, i) => (
                <span key={r.id}>
                  {i > 0 ? ", " : ""}
                  <Link to={`/alert-rules/${r.id}`}>{r.name}</Link>
                </span>
              ))
            )}
          </dd>
          <dt>Created</dt>
          <dd>{fullTime(c.created_at)}</dd>
          <dt>Id</dt>
          <dd className="mono">{c.id}</dd>
        </dl>
      </section>

      <ChannelForm key={c.updated_at} channel={c} onSaved={() => void loaded.reload()} />

      <ConfirmDialog
        open={confirmDelete}
        title="Delete this channel?"
        confirmLabel="Delete channel"
        busy={deleting.busy}
        error={deleting.error}
        onConfirm={remove}
        onCancel={() => setConfirmDelete(false)}
      >
        {conflict ? (
          <div className="alert error" role="alert" data-testid="channel-in-use">
            <ChannelInUse name={c.name} rules={conflict} onFollow={() => setConfirmDelete(false)} />
          </div>
        ) : (
          <p>
            <strong>{c.name}</strong> is deleted; nothing is sent to it any more. {usedBy.length > 0 ? `It is still picked in ${plural(usedBy.length, "alert rule")}: remove it there first.` : ""} This cannot be undone.
          </p>
        )}
      </ConfirmDialog>
    </>
  );
}

/** The 409 in words: which rules still notify the channel, each a link to fix it. */
function ChannelInUse({ name, rules, onFollow }: { name: string; rules: Conflict; onFollow: () => void }) {
  const links = rules.map((r, i) => (
    <span key={r.alert_rule_id}>
      {i === 0 ? "" : i === rules.length - 1 ? " and " : ", "}“
      <Link to={`/alert-rules/${r.alert_rule_id}`} onClick={onFollow}>
        {r.name}
      </Link>
      ”
    </span>
  ));
  return (
    <>
      “{name}” cannot be deleted: the alert {rules.length === 1 ? "rule" : "rules"} {links} still {rules.length === 1 ? "notifies" : "notify"} it. Remove the channel from {rules.length === 1 ? "that rule" : "those rules"} (or delete{" "}
      {rules.length === 1 ? "it" : "them"}) first.
    </>
  );
}
