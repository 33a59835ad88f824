import { createPublicKey, verify } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { buildRequest } from "../../src/outgoing/sender";
import { algorithmOf, generateEd25519Key, publicKeyOf, standardWebhookHeaders } from "../../src/outgoing/signing";

describe("signing", () => {
  const secret = `whsec_${Buffer.from("a".repeat(32)).toString("base64")}`;

  it("produces headers the standardwebhooks library verifies, also for bytes that are not UTF-8", () => {
    const body = JSON.stringify({ hello: "wörld" });
    const headers = standardWebhookHeaders(secret, "evt_1", new Date(), new TextEncoder().encode(body));
    expect(new Webhook(secret).verify(body, headers)).toEqual({ hello: "wörld" });
    expect(headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
  });

  it("signs the exact body sent, and GET requests sign an empty body", () => {
    const target = { url: "http://x.test/", httpMethod: "GET", headers: {}, auth: { type: "none" as const }, timeoutMs: 1000, signingSecret: secret };
    const req = buildRequest({ target, event: { id: "evt_2", sourceId: "src_1", headers: { "content-type": "application/json", host: "a", "content-length": "2", "transfer-encoding": "chunked" }, body: new TextEncoder().encode("{}") }, attemptNumber: 3, now: new Date() });
    expect(req.body).toBeNull();
    expect(req.headers.host).toBeUndefined();
    expect(req.headers["content-length"]).toBeUndefined();
    expect(req.headers["transfer-encoding"]).toBeUndefined();
    expect(req.headers["x-hookrelay-attempt"]).toBe("3");
    expect(() => new Webhook(secret).verify("", req.headers)).not.toThrow();
  });
});

/** RFC 8032, 7.1, test 1: the seed and the public key it makes. */
const RFC_SEED = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";
const RFC_PUBLIC = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";
const whpkKey = (whpk: string) => createPublicKey({ key: Buffer.concat([Buffer.from("302a300506032b6570032100", "hex"), Buffer.from(whpk.slice(5), "base64")]), format: "der", type: "spki" });

describe("Ed25519 signing (v1a)", () => {
  const whsk = `whsk_${Buffer.from(RFC_SEED, "hex").toString("base64")}`;

  it("derives the RFC 8032 public key from the seed, and signs id.timestamp.body verifiably with it", () => {
    expect(publicKeyOf(whsk)).toBe(`whpk_${Buffer.from(RFC_PUBLIC, "hex").toString("base64")}`);
    const at = new Date("2026-01-02T03:04:05Z");
    const headers = standardWebhookHeaders(whsk, "msg_1", at, new TextEncoder().encode('{"a":1}'));
    expect(headers["webhook-timestamp"]).toBe(String(at.getTime() / 1000));
    const [, sig] = headers["webhook-signature"]!.split(",");
    expect(verify(null, Buffer.from(`msg_1.${headers["webhook-timestamp"]}.{"a":1}`), whpkKey(publicKeyOf(whsk)), Buffer.from(sig!, "base64"))).toBe(true);
    // Ed25519 is deterministic: the same request, the same signature.
    expect(standardWebhookHeaders(whsk, "msg_1", at, new TextEncoder().encode('{"a":1}'))).toEqual(headers);
  });

  it("mixes schemes by each key's prefix (a switch's overlap), and makes new keys of 32 bytes", () => {
    const secret = `whsec_${Buffer.from("b".repeat(32)).toString("base64")}`;
    const fresh = generateEd25519Key();
    expect(fresh).toMatch(/^whsk_[A-Za-z0-9+/]{43}=$/);
    expect(algorithmOf(fresh)).toBe("ed25519");
    expect(algorithmOf(secret)).toBe("hmac-sha256");
    const body = "{}";
    const headers = standardWebhookHeaders([fresh, secret], "msg_2", new Date(), new TextEncoder().encode(body));
    const [v1a, v1] = headers["webhook-signature"]!.split(" ");
    expect(v1a).toMatch(/^v1a,[A-Za-z0-9+/]{86}==$/);
    expect(v1).toMatch(/^v1,/);
    expect(() => new Webhook(secret).verify(body, headers)).not.toThrow();
    expect(() => publicKeyOf(secret)).toThrow();
    expect(() => standardWebhookHeaders(`whsk_${Buffer.alloc(16).toString("base64")}`, "m", new Date(), new Uint8Array())).toThrow(/32 bytes/);
  });
});
