import { describe, expect, it } from "vitest";
import { createSource, getEvent, ingest } from "../helpers/ingest";
import type { TestServer } from "../helpers/server";
import { useServer } from "../helpers/fixture";

/** The test client connects from 127.0.0.1, which this server trusts as a proxy. */
let server: TestServer, key: string;
useServer({ env: { HOOKRELAY_TRUST_PROXY: "127.0.0.1/32, 10.0.0.0/8" } }, (s) => ({ server, key } = s));

describe("ingest behind trusted proxies (HOOKRELAY_TRUST_PROXY)", () => {
  it("uses the right-most untrusted X-Forwarded-For entry as the source IP", async () => {
    const s = await createSource(server, key, { name: "proxied", ip_allowlist: ["203.0.113.0/24", "2001:db8::/32"] });
    const ok = await ingest(server, s.id, { body: "{}", headers: { "x-forwarded-for": "198.51.100.1, 203.0.113.7, 10.1.1.1" } });
    expect(ok.status).toBe(200);
    expect((await getEvent(server, key, ok.body.event_id)).source_ip).toBe("203.0.113.7");

    // A client cannot smuggle an allowed address in front of its own.
    const spoofed = await ingest(server, s.id, { body: "{}", headers: { "x-forwarded-for": "203.0.113.7, 198.51.100.1" } });
    expect(spoofed.status).toBe(403);
    expect(spoofed.body.error.code).toBe("ip_denied");

    const v6 = await ingest(server, s.id, { body: "{}", headers: { "x-forwarded-for": "2001:db8::5" } });
    expect(v6.status).toBe(200);
    expect((await getEvent(server, key, v6.body.event_id)).source_ip).toBe("2001:db8::5");
  });

  it("falls back to the last trusted hop when an entry is malformed, and to the peer without the header", async () => {
    const s = await createSource(server, key, { name: "proxied-2" });
    const garbage = await ingest(server, s.id, { body: "{}", headers: { "x-forwarded-for": "not-an-ip, 10.2.2.2" } });
    expect((await getEvent(server, key, garbage.body.event_id)).source_ip).toBe("10.2.2.2");
    const none = await ingest(server, s.id, { body: "{}" });
    expect((await getEvent(server, key, none.body.event_id)).source_ip).toBe("127.0.0.1");
  });

  it("applies the denylist to the forwarded client", async () => {
    const s = await createSource(server, key, { name: "proxied-deny", ip_denylist: ["198.51.100.0/24"] });
    expect((await ingest(server, s.id, { body: "{}", headers: { "x-forwarded-for": "198.51.100.9" } })).status).toBe(403);
    expect((await ingest(server, s.id, { body: "{}", headers: { "x-forwarded-for": "192.0.2.1" } })).status).toBe(200);
  });
});
