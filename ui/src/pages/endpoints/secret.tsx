/** An endpoint's signing secret (or ed25519 key pair): its public key, reveal the secret, rotate it with the 24-hour overlap. */
import { useState } from "react";
import { api } from "../../api";
import { CopyField } from "../../components/copy";
import { ConfirmDialog } from "../../components/dialogs";
import { ErrorAlert } from "../../components/layout";
import { toast } from "../../components/toasts";
import { useAction } from "../../hooks";
import { endpointPath, type AppPlace } from "../../outbound";
import type { Endpoint } from "../../types";
import { SecretHidden, useCan } from "../../can";
import { PublicKeyField } from "../../components/publicKey";

/** Reveal the signing secret, or rotate it after a confirmation that says what the 24-hour overlap means. */
export function SecretPanel({ place, endpoint }: { place: AppPlace; endpoint: Endpoint }) {
  const [secret, setSecret] = useState<string | null>(null);
  const [rotated, setRotated] = useState(false);
  const [confirm, setConfirm] = useState(false);
  // A viewer sees the secret masked and may not rotate it (docs/teams.md).
  const canReveal = useCan("readSecrets");
  const canRotate = useCan("write");
  const { busy, error, run } = useAction();

  const reveal = () =>
    run(async () => {
      setSecret((await api.get<{ secret: string }>(endpointPath(place, endpoint.id, "/secret"))).secret);
    });
  const rotate = () =>
    run(async () => {
      const res = await api.post<{ secret: string }>(endpointPath(place, endpoint.id, "/secret/rotate"), {});
      setSecret(res.secret);
      setRotated(true);
      setConfirm(false);
      toast("Signing secret rotated");
    });

  const ed25519 = endpoint.signing_algorithm === "ed25519";
  return (
    <section className={rotated ? "secret-box" : "panel"} aria-label="Signing secret">
      <h2>{rotated ? "New signing secret" : "Signing secret"}</h2>
      {ed25519 ? (
        <>
          <p className="muted">
            Signed with Ed25519 (Standard Webhooks <code>v1a</code>). The receiver verifies the webhook-signature header with this <strong>public key</strong>: it is not a secret, share it freely.
          </p>
          <PublicKeyField path={endpointPath(place, endpoint.id)} version={`${endpoint.updated_at}${rotated ? "+rotated" : ""}`} />
        </>
      ) : null}
      <p className={rotated ? undefined : "muted"}>
        {rotated
          ? ed25519
            ? "For the next 24 hours every request carries two signatures, one with the new key and one with the old one: give the receiver the new public key any time before then."
            : "For the next 24 hours every request carries two signatures, one with this secret and one with the old one: switch the receiver to this secret any time before then."
          : ed25519
            ? "The private key (whsk_…) signs; it never leaves hookrelay unless revealed here."
            : "Every request is signed with this secret (Standard Webhooks: the standardwebhooks and svix libraries verify it). The receiver checks the webhook-signature header with it and refuses requests that fail."}
      </p>
      <ErrorAlert error={confirm ? null : error} />
      {secret ? <CopyField value={secret} label={ed25519 ? "Private key" : "Signing secret"} /> : null}
      {canReveal ? (
        <div className="btn-row" style={{ marginTop: secret ? 12 : 0 }}>
          {secret ? null : (
            <button type="button" className="btn" disabled={busy} onClick={reveal}>
              Reveal secret
            </button>
          )}
          {canRotate ? (
            <button type="button" className="btn danger" onClick={() => setConfirm(true)}>
              Rotate secret…
            </button>
          ) : null}
        </div>
      ) : (
        <SecretHidden />
      )}
      <ConfirmDialog open={confirm} title="Rotate the signing secret?" confirmLabel="Rotate secret" busy={busy} error={error} onConfirm={rotate} onCancel={() => setConfirm(false)}>
        <p>A new secret replaces the current one. The current one is not dropped at once:</p>
        <p>
          <strong>For 24 hours every request is signed with both</strong>, the new and the old secret (two <code>v1,…</code> entries in <code>webhook-signature</code>), so a receiver still checking with the old secret keeps accepting
          requests while it is switched over. After 24 hours only the new secret signs, and a receiver still on the old one refuses every request.
        </p>
        <p>
          If the old secret leaked, switch the receiver to the new one right away: until then it accepts anything signed with the leaked secret. Rotating again within the 24 hours drops the oldest secret.
        </p>
      </ConfirmDialog>
    </section>
  );
}
