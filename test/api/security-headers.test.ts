import { describe, expect, it } from "vitest";
import { createSource } from "../helpers/ingest";
import type { TestServer } from "../helpers/server";
import { useServer } from "../helpers/fixture";

let server: TestServer, key: string;
useServer({}, (s) => ({ server, key } = s));

describe("security headers on UI and API responses", () => {
  it("forbid framing and sniffing and carry the Content-Security-Policy, on successes and errors alike", async () => {
    const source = await createSource(server, key, { name: "headers" });
    const asset = /(?:src|href)="(\/[^"]+\.js)"/.exec(await (await server.request("/")).text())![1]!;
    const responses: [string, Response][] = [
      ["UI page", await server.request("/events")],
      ["UI asset", await server.request(asset)],
      ["API 200", await server.request("/v1/sources", { headers: { "x-api-key": key } })],
      ["API 401", await server.request("/v1/sources")],
      ["API 404", await server.request("/v1/nothing-here", { headers: { "x-api-key": key } })],
      ["ingest", await server.request(`/v1/ingest/${source.id}`, { method: "POST", body: "{}" })],
      ["health", await server.request("/healthz")],
    ];
    for (const [what, res] of responses) {
      expect(res.headers.get("x-frame-options"), what).toBe("DENY");
      expect(res.headers.get("x-content-type-options"), what).toBe("nosniff");
      expect(res.headers.get("referrer-policy"), what).toBe("same-origin");
      const csp = res.headers.get("content-security-policy") ?? "";
      for (const directive of ["default-src 'self'", "script-src 'self'", "style-src 'self'", "object-src 'none'", "frame-ancestors 'none'", "base-uri 'none'"]) {
        expect(csp, `${what}: ${directive}`).toContain(directive);
      }
      expect(csp, what).not.toContain("unsafe-inline");
      expect(res.headers.get("strict-transport-security"), what).toBeNull();
    }
  });

  it("let the consumer portal's page be framed (a SaaS embeds it), with the rest of the policy", async () => {
    for (const path of ["/portal", "/portal/endpoints"]) {
      const res = await server.request(path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get("x-frame-options"), path).toBeNull();
      const csp = res.headers.get("content-security-policy") ?? "";
      expect(csp, path).toContain("frame-ancestors *");
      expect(csp, path).toContain("script-src 'self'");
      expect(res.headers.get("x-content-type-options"), path).toBe("nosniff");
    }
    // Not a prefix match on anything else.
    expect((await server.request("/portals")).headers.get("x-frame-options")).toBe("DENY");
  });
});
