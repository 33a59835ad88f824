import { createHmac } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { createConnection, createDestination, waitFor } from "../helpers/delivery";
import { createSource, ingest } from "../helpers/ingest";
import { call, type TestServer } from "../helpers/server";
import type { Sink } from "../helpers/sink";
import { useServer } from "../helpers/fixture";

/**
 * A provider's signature signs the body it sent. A transform changes that
 * body, so the provider's signature headers must not travel with the new
 * one; the relay's own webhook-signature signs what is sent.
 */
let server: TestServer, key: string, sink: Sink;
useServer({ sink: true }, (s) => ({ server, key, sink } = s));

const secret = "gh secret";
const sign = (body: string) => "sha256=" + createHmac("sha256", secret).update(body).digest("hex");

async function relay(path: string, opts: { source: Record<string, unknown>; transform?: string; headers: (body: string) => Record<string, string> }) {
  const source = await createSource(server, key, { name: `src ${path}`, ...opts.source });
  const destinationId = await createDestination(server, key, { url: `${sink.url}${path}` });
  await createConnection(server, key, { source_id: source.id, destination_id: destinationId, ...(opts.transform ? { transform_expression: opts.transform } : {}) });
  const body = JSON.stringify({ action: "opened", number: 7 });
  const res = await ingest(server, source.id, { body, headers: { "x-custom": "kept", ...opts.headers(body) } });
  expect(res.status).toBe(200);
  const [req] = await waitFor(async () => {
    const got = sink.requests.filter((r) => r.path === path);
    return got.length ? got : null;
  });
  const signingSecret = (await call(server, "GET", `/v1/destinations/${destinationId}/secret`, { key })).body.secret as string;
  return { req: req!, signingSecret };
}

describe("provider signature headers on a transformed delivery", () => {
  it("are dropped when a transform changed the body; the relay's signature covers the new body", async () => {
    const { req, signingSecret } = await relay("/transformed", {
      source: { template: "github", verification_secret: secret },
      transform: '{"pr": number}',
      headers: (body) => ({ "x-hub-signature-256": sign(body), "x-hub-signature": "sha1=abc", "stripe-signature": "t=1,v1=abc", "x-github-event": "pull_request" }),
    });
    expect(req.body).toBe('{"pr":7}');
    for (const name of ["x-hub-signature-256", "x-hub-signature", "stripe-signature"]) expect(req.headers).not.toHaveProperty(name);
    expect(req.headers["x-github-event"]).toBe("pull_request");
    expect(req.headers["x-custom"]).toBe("kept");
    expect(new Webhook(signingSecret).verify(req.body, req.headers)).toEqual({ pr: 7 });
  });

  it("drop the source's own configured verification header too", async () => {
    const { req } = await relay("/custom-header", {
      source: { verification_type: "hmac-sha256", verification_header: "X-Acme-Sig", verification_secret: secret, verification_config: { encoding: "hex", prefix: "sha256=" } },
      transform: "number",
      headers: (body) => ({ "x-acme-sig": sign(body) }),
    });
    expect(req.body).toBe("7");
    expect(req.headers).not.toHaveProperty("x-acme-sig");
  });

  it("are forwarded as received when the body is delivered unchanged", async () => {
    const { req } = await relay("/untouched", {
      source: { template: "github", verification_secret: secret },
      headers: (body) => ({ "x-hub-signature-256": sign(body) }),
    });
    expect(req.headers["x-hub-signature-256"]).toBe(sign(req.body));
  });
});
