import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { buildVerifier, verificationProblems, type VerifyRequest } from "../../src/rules/verify";
import { decodeSignature, digestEquals, timestampProblem } from "../../src/rules/verify/compare";

const NOW = 1_750_000_000;
const req = (headers: Record<string, string>, body = "payload", extra: Partial<VerifyRequest> = {}): VerifyRequest => ({
  method: "POST",
  url: "https://hooks.example/v1/ingest/src_x",
  headers,
  body: new TextEncoder().encode(body),
  contentType: "application/json",
  nowSeconds: NOW,
  ...extra,
});
const hex = (alg: string, key: string | Buffer, data: string) => createHmac(alg, key).update(data).digest("hex");

describe("hmac scheme", () => {
  it("checks hex digests with an optional default prefix, case-insensitively", () => {
    const v = buildVerifier("hmac-sha256", "k", "X-Sig", {});
    const sig = hex("sha256", "k", "payload");
    expect(v(req({ "x-sig": sig }))).toEqual({ ok: true });
    expect(v(req({ "x-sig": "sha256=" + sig }))).toEqual({ ok: true });
    expect(v(req({ "x-sig": "SHA256=" + sig.toUpperCase() }))).toEqual({ ok: true });
    expect(v(req({ "x-sig": "sha1=" + sig }))).toMatchObject({ ok: false });
    expect(v(req({ "x-sig": sig.slice(0, -2) }))).toMatchObject({ ok: false, error: "signature does not match" });
    expect(v(req({}))).toMatchObject({ ok: false, error: "missing signature header X-Sig" });
  });

  it("parses t=…,v1=… headers and checks the signed timestamp both ways", () => {
    const v = buildVerifier("hmac-sha256", "whsec_k", "Stripe-Signature", { header_format: "kv", signed_payload: "{timestamp}.{body}" });
    const at = (t: number) => `t=${t},v1=${hex("sha256", "whsec_k", `${t}.payload`)}`;
    expect(v(req({ "stripe-signature": at(NOW) }))).toEqual({ ok: true });
    expect(v(req({ "stripe-signature": at(NOW - 300) }))).toEqual({ ok: true });
    expect(v(req({ "stripe-signature": at(NOW - 301) }))).toMatchObject({ ok: false, error: expect.stringContaining("older") });
    expect(v(req({ "stripe-signature": at(NOW + 301) }))).toMatchObject({ ok: false, error: expect.stringContaining("future") });
  });

  it("signs {id}.{timestamp}.{body} from headers with a base64 secret and digest", () => {
    const key = Buffer.from("raw-key-bytes");
    const v = buildVerifier("hmac-sha256", "whsec_" + key.toString("base64"), "X-S", {
      encoding: "base64",
      secret_encoding: "base64",
      id_header: "X-Id",
      timestamp_header: "X-Ts",
      signed_payload: "{id}.{timestamp}.{body}",
      tolerance_seconds: 0,
    });
    const sig = createHmac("sha256", key).update(`m1.${NOW - 99999}.payload`).digest("base64");
    expect(v(req({ "x-s": sig, "x-id": "m1", "x-ts": String(NOW - 99999) }))).toEqual({ ok: true });
    expect(v(req({ "x-s": sig, "x-ts": String(NOW - 99999) }))).toMatchObject({ ok: false, error: "missing header X-Id" });
  });

  it("reports configurations that cannot work", () => {
    expect(verificationProblems("hmac-sha256", "s", null, {})).toEqual([expect.objectContaining({ field: "verification_header" })]);
    expect(verificationProblems("hmac-sha256", "s", "X", { signed_payload: "{timestamp}" })).toEqual([expect.objectContaining({ field: "verification_config" })]);
    expect(verificationProblems("hmac-sha256", "s", "X", { signed_payload: "{id}.{body}" })).toEqual([expect.objectContaining({ message: expect.stringContaining("id_header") })]);
    expect(verificationProblems("hmac-sha256", "s", "X", { tolerance_seconds: -1 })).toEqual([expect.objectContaining({ field: "verification_config.tolerance_seconds" })]);
    expect(verificationProblems("hmac-sha1", "s", "X", { encoding: "hex", prefix: "sha1=" })).toEqual([]);
    expect(verificationProblems("token", "s", null, {})).toEqual([expect.objectContaining({ field: "verification_header" })]);
    expect(verificationProblems("standard-webhooks", "not base64!", null, {})).toEqual([expect.objectContaining({ field: "verification_secret" })]);
    expect(verificationProblems("twilio", "t", null, { url: "ftp://x" })).toEqual([expect.objectContaining({ field: "verification_config.url" })]);
  });
});

describe("standard-webhooks scheme", () => {
  const key = Buffer.from("0123456789abcdef0123456789abcdef");
  const secret = "whsec_" + key.toString("base64");
  const sign = (id: string, ts: number, body = "payload", k = key) => "v1," + createHmac("sha256", k).update(`${id}.${ts}.${body}`).digest("base64");

  it("accepts any matching v1 entry of a space-separated list, and nothing else", () => {
    const v = buildVerifier("standard-webhooks", secret, null, {});
    const good = sign("msg_1", NOW);
    const other = sign("msg_1", NOW, "payload", Buffer.from("other"));
    const h = (s: string) => ({ "webhook-id": "msg_1", "webhook-timestamp": String(NOW), "webhook-signature": s });
    expect(v(req(h(good)))).toEqual({ ok: true });
    expect(v(req(h(`${other} ${good}`)))).toEqual({ ok: true });
    expect(v(req(h(`v2,${good.slice(3)}`)))).toMatchObject({ ok: false });
    expect(v(req(h(other)))).toMatchObject({ ok: false, error: "no v1 signature matches" });
    expect(v(req(h("garbage")))).toMatchObject({ ok: false });
  });
});

describe("twilio scheme", () => {
  it("signs the configured URL plus sorted form parameters", () => {
    const url = "https://mycompany.com/myapp.php?foo=1&bar=2";
    const params = { To: "+18005551212", CallSid: "CA1234567890ABCDE", Digits: "1234" };
    const data = url + "CallSid" + params.CallSid + "Digits" + params.Digits + "To" + params.To;
    const sig = createHmac("sha1", "12345").update(data).digest("base64");
    const v = buildVerifier("twilio", "12345", null, { url: "https://mycompany.com/myapp.php" });
    const body = new URLSearchParams(params).toString();
    const r = req({ "x-twilio-signature": sig }, body, { url: "http://internal:8080/v1/ingest/src_x?foo=1&bar=2", contentType: "application/x-www-form-urlencoded" });
    expect(v(r)).toEqual({ ok: true });
    expect(v({ ...r, url: "http://internal:8080/v1/ingest/src_x?foo=1" })).toMatchObject({ ok: false });
  });
});

describe("compare helpers", () => {
  it("decode only well-formed signatures and compare digests of equal length", () => {
    expect(decodeSignature("abc", "hex")).toBeNull();
    expect(decodeSignature("zz", "hex")).toBeNull();
    expect(decodeSignature("", "base64")).toBeNull();
    expect(decodeSignature("a b", "base64")).toBeNull();
    expect(decodeSignature("AAEC", "base64")).toEqual(Buffer.from([0, 1, 2]));
    expect(digestEquals(Buffer.from([1, 2]), Buffer.from([1, 2]))).toBe(true);
    expect(digestEquals(Buffer.from([1, 2]), Buffer.from([1, 2, 3]))).toBe(false);
    expect(digestEquals(Buffer.from([1, 2]), null)).toBe(false);
  });

  it("treat a zero tolerance as no timestamp check, and a missing timestamp as a failure", () => {
    expect(timestampProblem(0, NOW, 0)).toBeNull();
    expect(timestampProblem(null, NOW, 300)).toMatch(/missing/);
  });
});
