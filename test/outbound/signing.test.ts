import { afterAll, describe, expect, it } from "vitest";
import { manualClock } from "../../src/core/clock";
import { waitFor } from "../helpers/delivery";
import { call, type TestServer } from "../helpers/server";
import { useServer } from "../helpers/fixture";
import { createApp, createEndpoint, endpointSecret, outboundSink, sendMessage, verifiesWith } from "./helpers";

/**
 * Every request an endpoint receives is checked the way a receiver would:
 * with the `standardwebhooks` and `svix` libraries. The server's clock is the
 * test's, so a rotation's 24 hours pass in a moment.
 */
const clock = manualClock(new Date());
let server: TestServer, key: string;
const sink = outboundSink();

useServer({ clock }, (s) => ({ server, key } = s));
afterAll(async () => {
  sink.close();
});

async function receive(path: string, count: number) {
  return waitFor(async () => (sink.at(path).length >= count ? sink.at(path) : null), { what: `${count} requests at ${path}` });
}

describe("Standard Webhooks signatures", () => {
  it("are verified by the standardwebhooks and svix libraries on every request, with webhook-id the message id", async () => {
    const app = await createApp(server, key);
    const e = await createEndpoint(server, key, app.id, { url: `${sink.url}/signed` });
    const secret = await endpointSecret(server, key, app.id, e.id);
    const payloads = [{ a: 1 }, { text: "grüße ✓ 日本", nested: { list: [1, 2, { x: null }] } }, [1, "two"], "a string", 42, null];
    const sent = [];
    for (const payload of payloads) sent.push(await sendMessage(server, key, app.id, { event_type: "sig.check", payload }));
    const requests = await receive("/signed", payloads.length);
    for (const req of requests) {
      expect(verifiesWith(secret, req)).toEqual({ standardwebhooks: true, svix: true });
      expect(req.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
      expect(req.headers["webhook-timestamp"]).toBe(String(Math.floor(clock.now().getTime() / 1000)));
    }
    expect(requests.map((r) => r.headers["webhook-id"]).sort()).toEqual(sent.map((m) => m.id).sort());
    // The body is exactly the payload's JSON, which is what was signed.
    expect(requests.map((r) => r.body).sort()).toEqual(sent.map((m) => m.payload).sort());
    // Another secret does not verify.
    const stranger = `whsec_${Buffer.alloc(32, 9).toString("base64")}`;
    expect(verifiesWith(stranger, requests[0]!)).toEqual({ standardwebhooks: false, svix: false });
  });
});

describe("secret rotation", () => {
  it("signs with the new and the old secret for 24 hours, then with the new one only", async () => {
    const app = await createApp(server, key);
    const e = await createEndpoint(server, key, app.id, { url: `${sink.url}/rotating` });
    const oldSecret = await endpointSecret(server, key, app.id, e.id);
    const rotated = await call(server, "POST", `/v1/applications/${app.id}/endpoints/${e.id}/secret/rotate`, { key });
    const newSecret = rotated.body.secret as string;
    const rotatedAt = clock.now().getTime();

    await sendMessage(server, key, app.id, { event_type: "rot.a", payload: { n: 1 } });
    let [req] = await receive("/rotating", 1);
    expect(req!.headers["webhook-signature"]!.split(" ")).toHaveLength(2);
    expect(verifiesWith(newSecret, req!)).toEqual({ standardwebhooks: true, svix: true });
    expect(verifiesWith(oldSecret, req!)).toEqual({ standardwebhooks: true, svix: true });

    // A minute before the 24 hours end: both still sign.
    clock.set(new Date(rotatedAt + 24 * 3600_000 - 60_000));
    await sendMessage(server, key, app.id, { event_type: "rot.b", payload: { n: 2 } });
    req = (await receive("/rotating", 2))[1];
    expect(verifiesWith(newSecret, req!, clock.now())).toEqual({ standardwebhooks: true, svix: true });
    expect(verifiesWith(oldSecret, req!, clock.now())).toEqual({ standardwebhooks: true, svix: true });

    // Once they have passed: the new secret alone.
    clock.set(new Date(rotatedAt + 24 * 3600_000));
    await sendMessage(server, key, app.id, { event_type: "rot.c", payload: { n: 3 } });
    req = (await receive("/rotating", 3))[2];
    expect(req!.headers["webhook-signature"]!.split(" ")).toHaveLength(1);
    expect(verifiesWith(newSecret, req!, clock.now())).toEqual({ standardwebhooks: true, svix: true });
    expect(verifiesWith(oldSecret, req!, clock.now())).toEqual({ standardwebhooks: false, svix: false });
  });

  it("keeps only the secret it replaces when rotated twice within the 24 hours", async () => {
    const app = await createApp(server, key);
    const e = await createEndpoint(server, key, app.id, { url: `${sink.url}/twice` });
    const first = await endpointSecret(server, key, app.id, e.id);
    const second = (await call(server, "POST", `/v1/applications/${app.id}/endpoints/${e.id}/secret/rotate`, { key })).body.secret as string;
    const third = (await call(server, "POST", `/v1/applications/${app.id}/endpoints/${e.id}/secret/rotate`, { key })).body.secret as string;
    await sendMessage(server, key, app.id, { event_type: "rot.d", payload: {} });
    const [req] = await receive("/twice", 1);
    expect(verifiesWith(third, req!, clock.now()).svix).toBe(true);
    expect(verifiesWith(second, req!, clock.now()).svix).toBe(true);
    expect(verifiesWith(first, req!, clock.now()).svix).toBe(false);
  });
});
