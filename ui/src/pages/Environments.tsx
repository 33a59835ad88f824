import { useState, type FormEvent } from "react";
import type { EnvironmentDto } from "../../../src/contracts/environments";
import { api } from "../api";
import { ConfirmDialog } from "../components/dialogs";
import { Field, FormActions } from "../components/forms";
import { ErrorAlert, PageHead } from "../components/layout";
import { DataTable } from "../components/table";
import { Time } from "../components/time";
import { toast } from "../components/toasts";
import { useAction, useLoad, useSubmit } from "../hooks";
import { ListPanel } from "../resources";
import { useSession } from "../session";
import { useCan } from "../can";

/** The organization's environments: list, create, rename, delete (docs/api.md, "Environments"). */
export function EnvironmentsPage() {
  const { me } = useSession();
  const canAdminister = useCan("administer");
  const envs = useLoad(() => api.get<{ environments: EnvironmentDto[] }>("/environments"), []);
  // null: no form; "new": creating; an environment: renaming it.
  const [editing, setEditing] = useState<EnvironmentDto | "new" | null>(null);
  const [deleting, setDeleting] = useState<EnvironmentDto | null>(null);
  const [force, setForce] = useState(false);
  const deletion = useAction();
  const list = envs.data?.environments ?? [];

  const remove = async () => {
    if (!deleting) return;
    await deletion.run(async () => {
      await api.del(`/environments/${encodeURIComponent(deleting.id)}${force ? "?force=true" : ""}`);
      toast(`Environment “${deleting.name}” deleted`);
      setDeleting(null);
      await envs.reload();
    });
  };

  return (
    <>
      <PageHead
        title="Environments"
        sub="Every source, destination, key and the rest lives in one environment. The switcher in the sidebar picks the one you work in."
        actions={
          editing === null && canAdminister ? (
            <button type="button" className="btn primary" onClick={() => setEditing("new")}>
              Create environment
            </button>
          ) : null
        }
      />
      {editing !== null && canAdminister ? (
        <EnvironmentForm
          key={editing === "new" ? "new" : editing.id}
          env={editing === "new" ? null : editing}
          onCancel={() => setEditing(null)}
          onSaved={async () => {
            setEditing(null);
            await envs.reload();
          }}
        />
      ) : null}
      <ListPanel label="Environments" loaded={envs} what="Loading environments" isEmpty={list.length === 0} empty={null}>
        <DataTable
          label="Environments"
          rows={list}
          rowKey={(e) => e.id}
          columns={[
            { label: "Name", render: (e) => (e.id === me.env_id ? <strong>{e.name} (current)</strong> : e.name) },
            { label: "Slug", className: "mono", render: (e) => e.slug },
            { label: "Created", hideNarrow: true, render: (e) => <Time iso={e.created_at} /> },
            // Managing environments is an admin's (docs/teams.md): weaker roles see the list only.
            ...(!canAdminister
              ? []
              : [
            {
              label: "Actions",
              srOnly: true,
              className: "actions",
              render: (e: EnvironmentDto) => (
                <>
                  <button type="button" className="btn small" onClick={() => setEditing(e)} aria-label={`Rename environment ${e.name}`}>
                    Rename
                  </button>{" "}
                  <button
                    type="button"
                    className="btn small danger"
                    onClick={() => {
                      deletion.setError(null);
                      setForce(false);
                      setDeleting(e);
                    }}
                    aria-label={`Delete environment ${e.name}`}
                  >
                    Delete
                  </button>
                </>
              ),
            },
                ]),
          ]}
        />
      </ListPanel>
      <ConfirmDialog
        open={deleting !== null}
        title="Delete this environment?"
        confirmLabel="Delete environment"
        busy={deletion.busy}
        error={deletion.error}
        onConfirm={remove}
        onCancel={() => setDeleting(null)}
      >
        <p>
          <strong>{deleting?.name}</strong> is deleted. One that still holds resources is refused, unless you also delete everything in it.
        </p>
        <label>
          <input type="checkbox" checked={force} onChange={(e) => setForce(e.target.checked)} /> Also delete everything it holds
        </label>
      </ConfirmDialog>
    </>
  );
}

function EnvironmentForm({ env, onSaved, onCancel }: { env: EnvironmentDto | null; onSaved: () => void; onCancel: () => void }) {
  const [name, setName] = useState(env?.name ?? "");
  const [slug, setSlug] = useState(env?.slug ?? "");
  const { busy, fieldErrors, formError, submit } = useSubmit();

  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    const body = { name: name.trim(), ...(slug.trim() ? { slug: slug.trim() } : {}) };
    const saved = await submit(() => (env ? api.patch(`/environments/${encodeURIComponent(env.id)}`, body) : api.post("/environments", body)), ["name", "slug"]);
    if (saved) onSaved();
  };

  return (
    <form className="panel form" onSubmit={onSubmit} aria-label={env ? "Rename environment" : "Create environment"} noValidate>
      <h2>{env ? `Rename ${env.name}` : "New environment"}</h2>
      <ErrorAlert error={formError} />
      <div className="form-grid">
        <Field label="Name" error={fieldErrors.name}>
          {(p) => <input {...p} type="text" name="name" value={name} onChange={(e) => setName(e.target.value)} maxLength={200} />}
        </Field>
        <Field label="Slug" error={fieldErrors.slug} help="Names the environment in X-Hookrelay-Env and the CLI's --env; from the name when empty.">
          {(p) => <input {...p} type="text" name="slug" value={slug} onChange={(e) => setSlug(e.target.value)} maxLength={100} />}
        </Field>
      </div>
      <FormActions busy={busy} label={env ? "Save" : "Create environment"} busyLabel="Saving…" onCancel={onCancel} />
    </form>
  );
}
