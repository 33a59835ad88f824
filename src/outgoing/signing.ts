/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): the
 * signature is HMAC-SHA256 over `<webhook-id>.<webhook-timestamp>.<body>`
 * keyed with the base64 part of the `whsec_…` secret, sent as `v1,<base64>`.
 * Several secrets (a rotation's overlap) give several space-separated
 * entries; a receiver accepts the request when any one matches.
 * Receivers verify with the `standardwebhooks` or `svix` libraries.
 */
export function standardWebhookHeaders(secrets: string | readonly string[], msgId: string, at: Date, body: Uint8Array): Record<string, string> {
  const timestamp = String(Math.floor(at.getTime() / 1000));
  const sign = (secret: string) => `v1,${new Bun.CryptoHasher("sha256", signingKey(secret)).update(`${msgId}.${timestamp}.`).update(body).digest("base64")}`;
  const signature = typeof secrets === "string" ? sign(secrets) : secrets.map(sign).join(" ");
  return { "webhook-id": msgId, "webhook-timestamp": timestamp, "webhook-signature": signature };
}

/** Decoded keys by secret: every delivery to a destination signs with the same one. */
const keys = new Map<string, Uint8Array>();
function signingKey(secret: string): Uint8Array {
  let key = keys.get(secret);
  if (!key) {
    key = Buffer.from(secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret, "base64");
    if (keys.size >= 1000) keys.clear();
    keys.set(secret, key);
  }
  return key;
}
