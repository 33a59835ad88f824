/** Creating and editing a notification channel: its type and that type's settings. */
import { useRef, useState, type FormEvent } from "react";
import { api } from "../../api";
import { Field, FormActions } from "../../components/forms";
import { KindPicker } from "../../components/kindPicker";
import { ErrorAlert, PageHead } from "../../components/layout";
import { toast } from "../../components/toasts";
import { useSubmit } from "../../hooks";
import { Link, navigate } from "../../router";
import { CHANNEL_TYPES, MASK, type Channel, type ChannelDetail, type ChannelType } from "../../types";
import { KINDS } from "./kinds";
import { WriteForm } from "../../components/writeForm";

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

export function ChannelForm({ channel, onSaved }: { channel: ChannelDetail | null; onSaved: (id: string) => void }) {
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
    <WriteForm className="panel form" onSubmit={onSubmit} aria-label={editing ? "Channel settings" : "New notification channel"} noValidate>
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
    </WriteForm>
  );
}
