import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes, scryptSync } from "node:crypto";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** Encrypts stored secrets (verification, signing, channel) with AES-256-GCM. */
export interface SecretBox {
  seal(plain: string): string;
  open(sealed: string): string;
  /**
   * A 32-byte key for one purpose (e.g. signing portal links), derived from
   * the same key material by HKDF: it changes when the secret key does, and
   * knowing it reveals neither that key nor the others derived from it.
   */
  deriveKey(purpose: string): Uint8Array;
}

/**
 * `enc:v2:` base64(iv 12 | tag 16 | ciphertext), under the AES key
 * scrypt(key material): a guessable HOOKRELAY_SECRET_KEY costs an attacker a
 * memory-hard derivation per guess. The salt is fixed, so the derivation is
 * paid once per process however many values were sealed by however many
 * processes; a per-installation salt would be one more file to back up
 * beside the database, and the cost per guess is what protects a weak key.
 * `enc:v1:` (same layout, key SHA-256(key material)) was written before v2:
 * still read, never written.
 */
const V2 = "enc:v2:";
const V1 = "enc:v1:";
const SCRYPT_SALT = "hookrelay secret box v2";
/** 32 MiB and about 50 ms, once per process. */
export const SCRYPT_PARAMS = { N: 1 << 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };

export function secretBoxFromKey(keyMaterial: string): SecretBox {
  const legacyKey = createHash("sha256").update(keyMaterial).digest();
  // Derived on first use: a process that never touches a secret does not pay for it.
  let key: Buffer | undefined;
  const v2Key = () => (key ??= scryptSync(keyMaterial, SCRYPT_SALT, 32, SCRYPT_PARAMS));
  const purposes = new Map<string, Uint8Array>();
  return {
    seal(plain) {
      return V2 + gcmSeal(v2Key(), plain).toString("base64");
    },
    deriveKey(purpose) {
      let derived = purposes.get(purpose);
      if (!derived) {
        derived = new Uint8Array(hkdfSync("sha256", v2Key(), "", `hookrelay ${purpose}`, 32));
        purposes.set(purpose, derived);
      }
      return derived;
    },
    open(sealed) {
      if (sealed.startsWith(V2)) return gcmOpen(v2Key(), Buffer.from(sealed.slice(V2.length), "base64"));
      if (sealed.startsWith(V1)) return gcmOpen(legacyKey, Buffer.from(sealed.slice(V1.length), "base64"));
      // Stored before secrets were encrypted at all.
      return sealed;
    },
  };
}

/** iv 12 | tag 16 | ciphertext */
function gcmSeal(key: Buffer, plain: string): Buffer {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]);
}

function gcmOpen(key: Buffer, raw: Buffer): string {
  // A full 16-byte tag only: a truncated one would weaken the integrity check.
  const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, 12), { authTagLength: 16 });
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
}

/** HOOKRELAY_SECRET_KEY when given, else a key file created in the data dir on first start. */
export function loadSecretBox(dataDir: string, configured?: string): SecretBox {
  if (configured) return secretBoxFromKey(configured);
  const file = join(dataDir, "secret.key");
  if (!existsSync(file)) {
    writeFileSync(file, randomBytes(32).toString("hex") + "\n", { mode: 0o600, flag: "wx" });
    chmodSync(file, 0o600);
  }
  return secretBoxFromKey(readFileSync(file, "utf8").trim());
}
