import { createHash, scryptSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { SCRYPT_PARAMS, secretBoxFromKey } from "../../src/domain/secrets";

/** Sealed by hookrelay before the KDF change (key: SHA-256 of "an operator passphrase"). */
const V1_FIXTURE = "enc:v1:6DGDWHefzYgUMFR8udielksTGx7J5pf2CjKsJQF/93oFvxYW99utd8NJPZls3oj+SY8OcmzAsco/5qeHOQc=";
const V1_PLAIN = "whsec_sealed-by-an-older-hookrelay";

describe("secret box: HOOKRELAY_SECRET_KEY through scrypt, versioned ciphertexts", () => {
  it("seals as enc:v2 with an AES key derived by scrypt over a salt carried in the value", async () => {
    const box = secretBoxFromKey("an operator passphrase");
    const sealed = box.seal("whsec_new");
    expect(sealed).toMatch(/^enc:v2:/);
    expect(box.open(sealed)).toBe("whsec_new");

    // The layout is salt | iv | tag | ciphertext, and the key is scrypt's, not SHA-256's.
    const raw = Buffer.from(sealed.slice("enc:v2:".length), "base64");
    const key = scryptSync("an operator passphrase", raw.subarray(0, 16), 32, SCRYPT_PARAMS);
    const { createDecipheriv } = await import("node:crypto");
    const d = createDecipheriv("aes-256-gcm", key, raw.subarray(16, 28));
    d.setAuthTag(raw.subarray(28, 44));
    expect(Buffer.concat([d.update(raw.subarray(44)), d.final()]).toString()).toBe("whsec_new");
    const legacy = createDecipheriv("aes-256-gcm", createHash("sha256").update("an operator passphrase").digest(), raw.subarray(16, 28));
    legacy.setAuthTag(raw.subarray(28, 44));
    expect(() => Buffer.concat([legacy.update(raw.subarray(44)), legacy.final()])).toThrow();
  });

  it("still opens enc:v1 values written before, with the old derivation, and plain values from before encryption", () => {
    const box = secretBoxFromKey("an operator passphrase");
    expect(box.open(V1_FIXTURE)).toBe(V1_PLAIN);
    expect(box.open("not-encrypted")).toBe("not-encrypted");
  });

  it("opens what another process sealed (another salt) and refuses the wrong key or a tampered value", () => {
    const sealed = secretBoxFromKey("k1").seal("s3cret");
    expect(secretBoxFromKey("k1").open(sealed)).toBe("s3cret");
    expect(() => secretBoxFromKey("k2").open(sealed)).toThrow();
    expect(() => secretBoxFromKey("k2").open(V1_FIXTURE)).toThrow();
    const raw = Buffer.from(sealed.slice(7), "base64");
    raw[raw.length - 1]! ^= 1;
    expect(() => secretBoxFromKey("k1").open("enc:v2:" + raw.toString("base64"))).toThrow();
    // GCM accepts a prefix of the tag as a shorter tag; a stored value must carry all 16 bytes.
    const empty = Buffer.from(secretBoxFromKey("k1").seal("").slice(7), "base64");
    expect(empty).toHaveLength(16 + 12 + 16);
    expect(() => secretBoxFromKey("k1").open("enc:v2:" + empty.subarray(0, 16 + 12 + 4).toString("base64"))).toThrow();
  });
});
