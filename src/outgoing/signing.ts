import { createPrivateKey, createPublicKey, generateKeyPairSync, sign as cryptoSign, type KeyObject } from "node:crypto";
import type { SigningAlgorithm } from "../contracts/destinations";

/**
 * Standard Webhooks signing (https://www.standardwebhooks.com), both of its
 * schemes, over `<webhook-id>.<webhook-timestamp>.<body>`:
 * - `hmac-sha256`: HMAC-SHA256 keyed with the base64 part of a `whsec_…`
 *   secret, sent as `v1,<base64>`;
 * - `ed25519`: an Ed25519 signature by the `whsk_…` private key, sent as
 *   `v1a,<base64>`; receivers verify with the `whpk_…` public key alone.
 * The scheme follows the key's prefix, so a rotation's overlap may mix both
 * (an endpoint switched from one algorithm to the other). Several keys give
 * several space-separated entries; a receiver accepts the request when any
 * one matches.
 */

const SECRET_PREFIX = "whsec_";
const PRIVATE_PREFIX = "whsk_";
const PUBLIC_PREFIX = "whpk_";

export function standardWebhookHeaders(secrets: string | readonly string[], msgId: string, at: Date, body: Uint8Array): Record<string, string> {
  const timestamp = String(Math.floor(at.getTime() / 1000));
  const sign = (secret: string) => {
    const key = signingKey(secret);
    if (key.kind === "ed25519") {
      const signed = Buffer.concat([Buffer.from(`${msgId}.${timestamp}.`), body]);
      return `v1a,${cryptoSign(null, signed, key.key).toString("base64")}`;
    }
    return `v1,${new Bun.CryptoHasher("sha256", key.key).update(`${msgId}.${timestamp}.`).update(body).digest("base64")}`;
  };
  const signature = typeof secrets === "string" ? sign(secrets) : secrets.map(sign).join(" ");
  return { "webhook-id": msgId, "webhook-timestamp": timestamp, "webhook-signature": signature };
}

/** The algorithm a stored key signs with, read from its prefix. */
export function algorithmOf(secret: string): SigningAlgorithm {
  return secret.startsWith(PRIVATE_PREFIX) ? "ed25519" : "hmac-sha256";
}

/**
 * A new Ed25519 private key, `whsk_` + base64 of its 32-byte seed (RFC 8032):
 * the seed is the whole key, the public half is derived from it.
 */
export function generateEd25519Key(): string {
  const { privateKey } = generateKeyPairSync("ed25519");
  const seed = privateKey.export({ format: "der", type: "pkcs8" }).subarray(-32);
  return PRIVATE_PREFIX + seed.toString("base64");
}

/** `whpk_` + base64 of the 32-byte public key of a `whsk_` private key. */
export function publicKeyOf(privateKey: string): string {
  const key = signingKey(privateKey);
  if (key.kind !== "ed25519") throw new Error("an HMAC secret has no public key");
  return PUBLIC_PREFIX + createPublicKey(key.key).export({ format: "der", type: "spki" }).subarray(-32).toString("base64");
}

/** PKCS#8 DER of an Ed25519 key is this fixed prefix and the 32-byte seed (RFC 8410). */
const ED25519_PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");

type Key = { kind: "hmac"; key: Uint8Array } | { kind: "ed25519"; key: KeyObject };

/** Decoded keys by secret: every delivery to a destination signs with the same one. */
const keys = new Map<string, Key>();
function signingKey(secret: string): Key {
  let key = keys.get(secret);
  if (!key) {
    if (secret.startsWith(PRIVATE_PREFIX)) {
      const seed = Buffer.from(secret.slice(PRIVATE_PREFIX.length), "base64");
      if (seed.length !== 32) throw new Error("an Ed25519 private key is 32 bytes");
      key = { kind: "ed25519", key: createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]), format: "der", type: "pkcs8" }) };
    } else {
      key = { kind: "hmac", key: Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, "base64") };
    }
    if (keys.size >= 1000) keys.clear();
    keys.set(secret, key);
  }
  return key;
}
