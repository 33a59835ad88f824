/** Creating a source, from a provider template or from scratch. */
import { useRef, useState, type FormEvent } from "react";
import { api } from "../../api";
import { Field, FormActions } from "../../components/forms";
import { ErrorAlert, Loading, PageHead } from "../../components/layout";
import { toast } from "../../components/toasts";
import { useLoad, useSubmit } from "../../hooks";
import { Link, navigate } from "../../router";
import type { Source, SourceTemplate } from "../../types";
import { WriteForm } from "../../components/writeForm";

export function NewSourcePage() {
  const templates = useLoad(() => api.get<{ templates: SourceTemplate[] }>("/sources/templates"), []);
  const [template, setTemplate] = useState("");
  const [name, setName] = useState("");
  const [secret, setSecret] = useState("");
  const [description, setDescription] = useState("");
  const { busy, fieldErrors, formError, submit, setFieldErrors } = useSubmit();
  const nameRef = useRef<HTMLInputElement>(null);
  const secretRef = useRef<HTMLInputElement>(null);
  const chosen = templates.data?.templates.find((t) => t.id === template);

  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    const missing: Record<string, string> = {};
    if (!name.trim()) missing.name = "Give the source a name, e.g. “GitHub production”";
    if (template && !secret) missing.verification_secret = `Paste the signing secret you set in ${chosen?.name ?? "the provider"}`;
    if (Object.keys(missing).length > 0) {
      setFieldErrors(missing);
      (missing.name ? nameRef : secretRef).current?.focus();
      return;
    }
    const res = await submit(
      () =>
        api.post<{ source: Source }>("/sources", {
          name: name.trim(),
          ...(template ? { template, verification_secret: secret } : {}),
          ...(description.trim() ? { description: description.trim() } : {}),
        }),
      ["name", "template", "verification_secret", "description"],
    );
    if (res) {
      toast(`Source “${res.source.name}” created`);
      navigate(`/sources/${res.source.id}?created=1`);
    }
  };

  return (
    <>
      <PageHead title="New source" sub={<Link to="/sources">← All sources</Link>} />
      <WriteForm className="panel form" onSubmit={onSubmit} aria-label="New source" noValidate>
        <ErrorAlert error={formError ?? templates.error} />
        <fieldset>
          <legend>Provider</legend>
          <p className="muted" style={{ margin: 0 }}>
            A template fills in how the provider signs its requests; you only paste the secret.
          </p>
          {templates.loading && !templates.data ? (
            <Loading what="Loading templates" />
          ) : (
            <div className="choice-grid" role="radiogroup" aria-label="Template">
              <label className={`choice ${template === "" ? "on" : ""}`}>
                <input type="radio" name="template" value="" checked={template === ""} onChange={() => setTemplate("")} />
                <span>
                  <strong>No verification</strong>
                  <span className="muted">Accept every request. Set up checks later.</span>
                </span>
              </label>
              {templates.data?.templates.map((t) => (
                <label key={t.id} className={`choice ${template === t.id ? "on" : ""}`}>
                  <input type="radio" name="template" value={t.id} checked={template === t.id} onChange={() => setTemplate(t.id)} />
                  <span>
                    <strong>{t.name}</strong>
                    <span className="muted">{t.description}</span>
                  </span>
                </label>
              ))}
            </div>
          )}
          {fieldErrors.template ? <div className="field-error">{fieldErrors.template}</div> : null}
        </fieldset>
        <div className="form-grid">
          <Field label="Name" error={fieldErrors.name}>
            {(p) => <input {...p} ref={nameRef} type="text" name="name" value={name} onChange={(e) => setName(e.target.value)} maxLength={200} />}
          </Field>
          {template ? (
            <Field
              label={`${chosen?.name ?? ""} signing secret`}
              error={fieldErrors.verification_secret}
              help={chosen?.verification_type === "standard-webhooks" ? "The whsec_… secret from the provider." : "The secret you entered in the provider's webhook settings."}
            >
              {(p) => <input {...p} ref={secretRef} type="password" name="verification_secret" autoComplete="off" value={secret} onChange={(e) => setSecret(e.target.value)} />}
            </Field>
          ) : null}
        </div>
        <Field label="Description (optional)" error={fieldErrors.description}>
          {(p) => <input {...p} type="text" name="description" value={description} onChange={(e) => setDescription(e.target.value)} />}
        </Field>
        <FormActions busy={busy} label="Create source" busyLabel="Creating…" cancelTo="/sources" />
      </WriteForm>
    </>
  );
}
