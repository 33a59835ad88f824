/** An ed25519 endpoint's or destination's public key (whpk_…): not a secret, every role may read and copy it. */
import { api } from "../api";
import { useLoad } from "../hooks";
import { CopyField } from "./copy";
import { ErrorAlert } from "./layout";

/** `path` is the resource's API path; its `/public-key` answers {public_key, algorithm}. */
export function PublicKeyField({ path, version }: { path: string; version: string }) {
  const key = useLoad(() => api.get<{ public_key: string }>(`${path}/public-key`), [path, version]);
  if (key.error) return <ErrorAlert error={key.error} onRetry={key.reload} />;
  if (!key.data) return <p className="muted">Loading the public key…</p>;
  return <CopyField value={key.data.public_key} label="Public key" />;
}

/** What each algorithm puts in webhook-signature, for the select's help and the signing panels. */
export const SIGNING_HELP = {
  "hmac-sha256": "HMAC-SHA256 with a shared secret (v1): the receiver holds the secret.",
  ed25519: "Ed25519 (v1a): the receiver verifies with the public key alone and holds no secret.",
} as const;
