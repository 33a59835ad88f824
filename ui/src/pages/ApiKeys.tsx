import { useRef, useState, type FormEvent, type RefObject } from "react";
import type { z } from "zod";
import type { apiKey, createdApiKey } from "../../../src/contracts/apiKeys";
import { api } from "../api";
import { CopyField } from "../components/copy";
import { ConfirmDialog } from "../components/dialogs";
import { Field, FormActions } from "../components/forms";
import { Empty, ErrorAlert, PageHead } from "../components/layout";
import { DataTable } from "../components/table";
import { Time } from "../components/time";
import { toast } from "../components/toasts";
import { num } from "../format";
import { useAction, useLoad, useSubmit } from "../hooks";
import { ListPanel } from "../resources";
import { useSession } from "../session";
import { useCan } from "../can";

type ApiKey = z.infer<typeof apiKey>;
type CreatedKey = z.infer<typeof createdApiKey>;

export function ApiKeysPage() {
  const { me } = useSession();
  // A viewer makes no keys; an admin or owner sees and revokes every member's, anyone else their own (docs/teams.md).
  const makesKeys = useCan("write");
  const administers = useCan("administer");
  const mayRevoke = (k: ApiKey) => makesKeys && (administers || k.user_id === me.user?.id);
  const keys = useLoad(() => api.get<{ api_keys: ApiKey[] }>("/auth/api-keys"), []);
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<CreatedKey | null>(null);
  const [revoking, setRevoking] = useState<ApiKey | null>(null);
  const revocation = useAction();
  const nameRef = useRef<HTMLInputElement>(null);

  const startCreate = () => {
    setCreated(null);
    setCreating(true);
    setTimeout(() => nameRef.current?.focus(), 0);
  };

  const revoke = async () => {
    if (!revoking) return;
    await revocation.run(async () => {
      await api.del(`/auth/api-keys/${encodeURIComponent(revoking.id)}`);
      toast(`Key “${revoking.name}” revoked`);
      setRevoking(null);
      await keys.reload();
    });
  };

  const list = keys.data?.api_keys ?? [];

  return (
    <>
      <PageHead
        title="API keys"
        sub="Keys let scripts and the CLI call the API (X-API-Key or Authorization: Bearer). A key is shown once, when it is created."
        actions={
          makesKeys && !creating && list.length > 0 ? (
            <button type="button" className="btn primary" onClick={startCreate}>
              Create key
            </button>
          ) : null
        }
      />

      {created ? <CreatedKeyBox created={created} onDone={() => setCreated(null)} /> : null}

      {creating ? (
        <CreateKeyForm
          nameRef={nameRef}
          onCancel={() => setCreating(false)}
          onCreated={async (k) => {
            setCreating(false);
            setCreated(k);
            await keys.reload();
          }}
        />
      ) : null}

      <ListPanel
        label="API keys"
        loaded={keys}
        what="Loading keys"
        isEmpty={list.length === 0}
        empty={
          <Empty
            title="No API keys yet"
            action={
              makesKeys && !creating ? (
                <button type="button" className="btn primary" onClick={startCreate}>
                  Create your first key
                </button>
              ) : null
            }
          >
            Create a key to use the API from scripts or the CLI: <code>hookrelay --url … --api-key &lt;key&gt; sources list</code>.
          </Empty>
        }
      >
        <DataTable
          label="API keys"
          rows={list}
          rowKey={(k) => k.id}
          columns={[
            { label: "Name", render: (k) => k.name },
            { label: "Key", className: "mono nowrap", render: (k) => `${k.key_prefix}…` },
            { label: "Member", hideNarrow: true, render: (k) => (k.user_id === me.user?.id ? "you" : (k.user_email ?? <span className="muted">—</span>)) },
            { label: "Scopes", render: (k) => (k.scopes === "read" ? "read only" : "full access") },
            { label: "Requests", className: "num", render: (k) => num(k.request_count) },
            { label: "Last used", render: (k) => <Time iso={k.last_used_at} /> },
            { label: "Created", hideNarrow: true, render: (k) => <Time iso={k.created_at} /> },
            { label: "Status", render: (k) => (k.revoked ? <span className="badge bad">revoked</span> : <span className="badge ok">active</span>) },
            // A viewer creates and revokes no key (docs/teams.md): it sees the list only.
            ...(!makesKeys
              ? []
              : [
            {
              label: "Actions",
              srOnly: true,
              className: "actions",
              render: (k: ApiKey) =>
                k.revoked || !mayRevoke(k) ? null : (
                  <button
                    type="button"
                    className="btn small danger"
                    onClick={() => {
                      revocation.setError(null);
                      setRevoking(k);
                    }}
                    aria-label={`Revoke key ${k.name}`}
                  >
                    Revoke
                  </button>
                ),
            },
                ]),
          ]}
        />
      </ListPanel>

      <ConfirmDialog
        open={revoking !== null}
        title="Revoke this key?"
        confirmLabel="Revoke key"
        busy={revocation.busy}
        error={revocation.error}
        onConfirm={revoke}
        onCancel={() => setRevoking(null)}
      >
        <p>
          <strong>{revoking?.name}</strong> (<span className="mono">{revoking?.key_prefix}…</span>) stops working at once. Anything using it gets 401. This cannot be undone.
        </p>
      </ConfirmDialog>
    </>
  );
}

function CreateKeyForm({ onCreated, onCancel, nameRef }: { onCreated: (k: CreatedKey) => void; onCancel: () => void; nameRef: RefObject<HTMLInputElement | null> }) {
  const [name, setName] = useState("");
  const [scopes, setScopes] = useState<"*" | "read">("*");
  const { busy, fieldErrors, formError, submit, setFieldErrors } = useSubmit();

  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    if (!name.trim()) {
      setFieldErrors({ name: "Give the key a name, e.g. the script or machine that uses it" });
      nameRef.current?.focus();
      return;
    }
    const k = await submit(() => api.post<CreatedKey>("/auth/api-keys", { name: name.trim(), scopes }), ["name", "scopes"]);
    if (k) onCreated(k);
  };

  return (
    <form className="panel form" onSubmit={onSubmit} aria-label="Create API key" noValidate>
      <h2>New API key</h2>
      <ErrorAlert error={formError} />
      <div className="form-grid">
        <Field label="Name" error={fieldErrors.name} help="What uses this key, e.g. “deploy script”.">
          {(p) => <input {...p} ref={nameRef} type="text" name="name" value={name} onChange={(e) => setName(e.target.value)} maxLength={200} />}
        </Field>
        <Field label="Scopes" error={fieldErrors.scopes} help="Read only keys may only send GET requests.">
          {(p) => (
            <select {...p} name="scopes" value={scopes} onChange={(e) => setScopes(e.target.value as "*" | "read")}>
              <option value="*">Full access (*)</option>
              <option value="read">Read only (read)</option>
            </select>
          )}
        </Field>
      </div>
      <FormActions busy={busy} label="Create key" busyLabel="Creating…" onCancel={onCancel} />
    </form>
  );
}

function CreatedKeyBox({ created, onDone }: { created: CreatedKey; onDone: () => void }) {
  return (
    <section className="secret-box" aria-label="New API key" role="region">
      <h2>Key “{created.name}” created</h2>
      <p>Copy it now: this is the only time the full key is shown. hookrelay keeps only a hash of it.</p>
      <CopyField value={created.key} label="New API key" />
      <div className="btn-row" style={{ marginTop: 12 }}>
        <button type="button" className="btn" onClick={onDone}>
          I have copied it
        </button>
      </div>
    </section>
  );
}
