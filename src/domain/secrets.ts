import { createCipheriv, createDecipheriv, createHash, randomBytes, scryptSync } from "node:crypto";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** Encrypts stored secrets (verification, signing, channel) with AES-256-GCM. */
export interface SecretBox {
  seal(plain: string): string;
  open(sealed: string): string;
}

/**
 * `enc:v2:` base64(salt 16 | iv 12 | tag 16 | ciphertext): the AES key is
 * scrypt(key material, salt), so a guessable HOOKRELAY_SECRET_KEY costs an
 * attacker a memory-hard derivation per guess, salted per installation run.
 * `enc:v1:` base64(iv | tag | ciphertext) with the key SHA-256(key material):
 * written before v2, still read, never written.
 */
const V2 = "enc:v2:";
const V1 = "enc:v1:";
const SALT_BYTES = 16;
/** 32 MiB and about 50 ms per derivation; each salt is derived once per process. */
export const SCRYPT_PARAMS = { N: 1 << 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
/** Distinct salts met in one process: one per server run that wrote secrets. */
const MAX_CACHED_KEYS = 256;

export function secretBoxFromKey(keyMaterial: string): SecretBox {
  const legacyKey = createHash("sha256").update(keyMaterial).digest();
  const keys = new Map<string, Buffer>();
  const keyFor = (salt: Buffer) => {
    const id = salt.toString("hex");
    let key = keys.get(id);
    if (!key) {
      key = scryptSync(keyMaterial, salt, 32, SCRYPT_PARAMS);
      if (keys.size >= MAX_CACHED_KEYS) keys.delete(keys.keys().next().value!);
      keys.set(id, key);
    }
    return key;
  };
  // One salt for everything this process seals, so its derivation is paid once.
  const sealSalt = randomBytes(SALT_BYTES);
  return {
    seal(plain) {
      return V2 + Buffer.concat([sealSalt, gcmSeal(keyFor(sealSalt), plain)]).toString("base64");
    },
    open(sealed) {
      if (sealed.startsWith(V2)) {
        const raw = Buffer.from(sealed.slice(V2.length), "base64");
        return gcmOpen(keyFor(raw.subarray(0, SALT_BYTES)), raw.subarray(SALT_BYTES));
      }
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
