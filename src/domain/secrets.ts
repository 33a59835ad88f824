import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** Encrypts stored secrets (verification, signing, channel) with AES-256-GCM. */
export interface SecretBox {
  seal(plain: string): string;
  open(sealed: string): string;
}

const PREFIX = "enc:v1:";

export function secretBoxFromKey(keyMaterial: string): SecretBox {
  const key = createHash("sha256").update(keyMaterial).digest();
  return {
    seal(plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
      return PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64");
    },
    open(sealed) {
      if (!sealed.startsWith(PREFIX)) return sealed;
      const raw = Buffer.from(sealed.slice(PREFIX.length), "base64");
      const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
    },
  };
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
