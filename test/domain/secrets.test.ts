import { createDecipheriv, createHash, scryptSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { SCRYPT_PARAMS, secretBoxFromKey } from "../../src/domain/secrets";

/** Sealed by hookrelay before the KDF change (key: SHA-256 of "an operator passphrase"). */
const V1_FIXTURE = "enc:v1:6DGDWHefzYgUMFR8udielksTGx7J5pf2CjKsJQF/93oFvxYW99utd8NJPZls3oj+SY8OcmzAsco/5qeHOQc=";
const V1_PLAIN = "whsec_sealed-by-an-older-hookrelay";

function decrypt(key: Buffer, raw: Buffer) {
  const d = createDecipheriv("aes-256-gcm", key, raw.subarray(0, 12));
  d.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([d.update(raw.subarray(28)), d.final()]).toString();
}

describe("secret box: HOOKRELAY_SECRET_KEY through scrypt, versioned ciphertexts", () => {
  it("seals as enc:v2 under a key scrypt derived, not SHA-256", () => {
    const box = secretBoxFromKey("an operator passphrase");
    const sealed = box.seal("whsec_new");
    expect(sealed).toMatch(/^enc:v2:/);
    expect(box.open(sealed)).toBe("whsec_new");

    const raw = Buffer.from(sealed.slice("enc:v2:".length), "base64");
    expect(decrypt(scryptSync("an operator passphrase", "hookrelay secret box v2", 32, SCRYPT_PARAMS), raw)).toBe("whsec_new");
    expect(() => decrypt(createHash("sha256").update("an operator passphrase").digest(), raw)).toThrow();
  });

  it("still opens enc:v1 values written before, with the old derivation, and plain values from before encryption", () => {
    const box = secretBoxFromKey("an operator passphrase");
    expect(box.open(V1_FIXTURE)).toBe(V1_PLAIN);
    expect(box.open("not-encrypted")).toBe("not-encrypted");
  });

  it("opens what another process sealed with the same key, and refuses another key or a tampered value", () => {
    const sealed = secretBoxFromKey("k1").seal("s3cret");
    expect(secretBoxFromKey("k1").open(sealed)).toBe("s3cret");
    expect(() => secretBoxFromKey("k2").open(sealed)).toThrow();
    expect(() => secretBoxFromKey("k2").open(V1_FIXTURE)).toThrow();
    const raw = Buffer.from(sealed.slice(7), "base64");
    raw[raw.length - 1]! ^= 1;
    expect(() => secretBoxFromKey("k1").open("enc:v2:" + raw.toString("base64"))).toThrow();
    // GCM accepts a prefix of the tag as a shorter tag; a stored value must carry all 16 bytes.
    const empty = Buffer.from(secretBoxFromKey("k1").seal("").slice(7), "base64");
    expect(empty).toHaveLength(12 + 16);
    expect(() => secretBoxFromKey("k1").open("enc:v2:" + empty.subarray(0, 12 + 4).toString("base64"))).toThrow();
  });
});
