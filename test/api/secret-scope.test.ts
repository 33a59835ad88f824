import { describe, expect, it } from "vitest";
import { createSource } from "../helpers/ingest";
import { call, type TestServer } from "../helpers/server";
import { useServer } from "../helpers/fixture";

let server: TestServer, fullKey: string, readKey: string;
useServer({ readKey: true }, (s) => ({ server, key: fullKey, readKey } = s));

describe("secret-revealing routes need scope *", () => {
  it("answers 403 forbidden to a read key for every GET …/secret route, and the secret to a * key or a session", async () => {
    const source = await createSource(server, fullKey, { name: "signed", template: "github", verification_secret: "gh-secret-value" });
    const dest = await call(server, "POST", "/v1/destinations", { key: fullKey, body: { name: "d", url: "http://127.0.0.1:9/x", signing_secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" } });
    expect(dest.status).toBe(201);
    const app = await call(server, "POST", "/v1/applications", { key: fullKey, body: { name: "a", uid: "secret-scope" } });
    const endpoint = await call(server, "POST", "/v1/applications/secret-scope/endpoints", { key: fullKey, body: { url: "http://127.0.0.1:9/x", status: "disabled" } });
    expect([app.status, endpoint.status]).toEqual([201, 201]);
    const ids: Record<string, string> = {
      "/sources/{id}/secret": source.id,
      "/destinations/{id}/secret": dest.body.destination.id,
      "/applications/{appId}/endpoints/{id}/secret": endpoint.body.endpoint.id,
    };

    // Every secret route the API documents, so one added later is held to the same rule.
    const doc = (await call(server, "GET", "/v1/openapi.json")).body;
    const secretRoutes = Object.keys(doc.paths).filter((p) => /\/secret$/.test(p) && doc.paths[p].get);
    expect(secretRoutes.sort()).toEqual(Object.keys(ids).sort());

    const session = await server.session();
    for (const route of secretRoutes) {
      const path = "/v1" + route.replace("{appId}", "secret-scope").replace("{id}", ids[route]!);
      const denied = await call(server, "GET", path, { key: readKey });
      expect(denied.status, route).toBe(403);
      expect(denied.body.error.code).toBe("forbidden");
      expect(JSON.stringify(denied.body)).not.toMatch(/gh-secret-value|whsec_/);
      expect(doc.paths[route].get.responses["403"], route).toBeDefined();

      expect((await call(server, "GET", path, { key: fullKey })).body.secret, route).toMatch(/gh-secret-value|whsec_/);
      expect((await call(server, "GET", path, { headers: session })).body.secret, route).toMatch(/gh-secret-value|whsec_/);
    }

    // The read key still reads everything else, masked.
    const masked = await call(server, "GET", `/v1/sources/${source.id}`, { key: readKey });
    expect(masked.status).toBe(200);
    expect(masked.body.source.verification_secret).not.toContain("gh-secret-value");
  });
});
