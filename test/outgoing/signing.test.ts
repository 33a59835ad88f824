import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { buildRequest } from "../../src/outgoing/sender";
import { standardWebhookHeaders } from "../../src/outgoing/signing";

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
