import { describe, expect, it } from "vitest";
import { createSource, ingest } from "../helpers/ingest";
import { call, type TestServer } from "../helpers/server";
import { useServer } from "../helpers/fixture";
import { eq } from "drizzle-orm";
import { sources } from "../../src/db/schema";

let server: TestServer, key: string;
useServer({}, (s) => ({ server, key } = s));

const SPEC_FIELDS = [
  "id", "org_id", "env_id", "slug", "name", "description", "template", "verification_enabled", "verification_type",
  "verification_secret", "verification_header", "verification_config", "dedup_enabled", "dedup_strategy", "dedup_field",
  "dedup_window_seconds", "ip_allowlist", "ip_denylist", "status", "event_count", "last_event_at", "created_at", "updated_at",
  "is_ephemeral", "expires_at", "request_limit", "type", "source_config", "schema_validation_enabled", "json_schema", "schema_action",
];

describe("POST /v1/sources", () => {
  it("creates a source with every spec field, defaults and an ingest_url", async () => {
    const res = await call(server, "POST", "/v1/sources", { key, body: { name: "Orders API" } });
    expect(res.status).toBe(201);
    const s = res.body.source;
    for (const f of SPEC_FIELDS) expect(s, f).toHaveProperty(f);
    expect(s.id).toMatch(/^src_[0-9a-f]{32}$/);
    expect(s.ingest_url).toBe(`${server.deps.settings.baseUrl}/v1/ingest/${s.id}`);
    expect(s.ingest_url).toMatch(/^http:\/\/localhost:\d+\/v1\/ingest\/src_[0-9a-f]{32}$/);
    expect(s).toMatchObject({
      name: "Orders API",
      slug: "orders-api",
      description: null,
      template: null,
      verification_enabled: 0,
      verification_type: null,
      verification_secret: null,
      dedup_enabled: 0,
      dedup_window_seconds: 3600,
      ip_allowlist: null,
      ip_denylist: null,
      status: "active",
      event_count: 0,
      last_event_at: null,
      is_ephemeral: 0,
      expires_at: null,
      request_limit: null,
      type: "webhook",
      schema_validation_enabled: 0,
      json_schema: null,
    });
    const me = await call(server, "GET", "/v1/auth/me", { key });
    expect(s.org_id).toBe(me.body.org_id);
    expect(s.env_id).toBe(me.body.env_id);
    expect(Date.parse(s.created_at)).not.toBeNaN();
  });

  it("fills verification and dedup settings from a template so only the secret is needed", async () => {
    const secret = "gh-secret-0123456789abcdef";
    const s = await createSource(server, key, { name: "GitHub", template: "github", verification_secret: secret });
    expect(s).toMatchObject({
      template: "github",
      verification_enabled: 1,
      verification_type: "hmac-sha256",
      verification_header: "X-Hub-Signature-256",
      dedup_strategy: "header",
      dedup_field: "X-GitHub-Delivery",
      dedup_enabled: 1,
    });
    expect(JSON.parse(s.verification_config)).toMatchObject({ encoding: "hex", prefix: "sha256=" });
    // Masked in every response; the stored value is encrypted, never the plaintext.
    expect(s.verification_secret).toBe("********cdef");
    const [stored] = await server.deps.db.select({ secret: sources.verificationSecret }).from(sources).where(eq(sources.id, s.id));
    expect(stored!.secret).toMatch(/^enc:v2:/);
    expect(stored!.secret).not.toContain(secret);
    const full = await call(server, "GET", `/v1/sources/${s.id}/secret`, { key });
    expect(full).toMatchObject({ status: 200, body: { secret } });
  });

  it("accepts every create field, storing JSON fields as strings and flags as 0/1", async () => {
    const schema = { type: "object", required: ["id"] };
    const s = await createSource(server, key, {
      name: "Full",
      slug: "full-source",
      description: "all the things",
      type: "webhook",
      verification_enabled: true,
      verification_type: "hmac-sha1",
      verification_secret: "s3cret",
      verification_header: "X-Sig",
      verification_config: JSON.stringify({ encoding: "base64" }),
      dedup_enabled: true,
      dedup_strategy: "field",
      dedup_field: "data.id",
      dedup_window_seconds: 60,
      ip_allowlist: ["10.0.0.0/8", "2001:db8::/32", "192.168.1.7"],
      ip_denylist: ["10.0.0.66"],
      status: "paused",
      is_ephemeral: true,
      expires_at: "2099-01-01T00:00:00Z",
      request_limit: 10,
      source_config: { note: "x" },
      schema_validation_enabled: true,
      json_schema: schema,
      schema_action: "warn",
    });
    expect(s).toMatchObject({
      slug: "full-source",
      description: "all the things",
      verification_enabled: 1,
      verification_type: "hmac-sha1",
      verification_secret: "********",
      verification_header: "X-Sig",
      verification_config: '{"encoding":"base64"}',
      dedup_enabled: 1,
      dedup_strategy: "field",
      dedup_field: "data.id",
      dedup_window_seconds: 60,
      ip_allowlist: '["10.0.0.0/8","2001:db8::/32","192.168.1.7"]',
      ip_denylist: '["10.0.0.66"]',
      status: "paused",
      is_ephemeral: 1,
      expires_at: "2099-01-01T00:00:00.000Z",
      request_limit: 10,
      source_config: '{"note":"x"}',
      schema_validation_enabled: 1,
      json_schema: JSON.stringify(schema),
      schema_action: "warn",
    });
  });

  it("gives an ephemeral source without limits a 24 h expiry", async () => {
    const s = await createSource(server, key, { name: "tmp", is_ephemeral: true });
    const ttl = Date.parse(s.expires_at) - Date.parse(s.created_at);
    expect(ttl).toBe(24 * 3600 * 1000);
  });

  it("makes derived slugs unique and refuses a taken explicit slug with 409", async () => {
    const a = await createSource(server, key, { name: "Same Name" });
    const b = await createSource(server, key, { name: "Same Name" });
    expect(a.slug).toBe("same-name");
    expect(b.slug).toBe("same-name-2");
    const dup = await call(server, "POST", "/v1/sources", { key, body: { name: "x", slug: "same-name" } });
    expect(dup.status).toBe(409);
    expect(dup.body.error.code).toBe("conflict");
  });

  it("answers 400 with the bad fields for invalid input", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{}, "body.name"],
      [{ name: 5 }, "body.name"],
      [{ name: "x", ip_allowlist: ["10.0.0.0/33"] }, "body.ip_allowlist.0"],
      [{ name: "x", ip_allowlist: ["1.2.3.4", "not-an-ip"] }, "body.ip_allowlist.1"],
      [{ name: "x", ip_denylist: ["10.1"] }, "body.ip_denylist.0"],
      [{ name: "x", ip_denylist: ["2001:db8::/129"] }, "body.ip_denylist.0"],
      [{ name: "x", ip_denylist: "[oops" }, "body.ip_denylist"],
      [{ name: "x", json_schema: { type: "bogus" } }, "body.json_schema"],
      [{ name: "x", json_schema: { properties: 5 } }, "body.json_schema"],
      [{ name: "x", json_schema: "{not json" }, "body.json_schema"],
      [{ name: "x", json_schema: [1, 2] }, "body.json_schema"],
      [{ name: "x", schema_validation_enabled: true }, "body.json_schema"],
      [{ name: "x", template: "nope" }, "body.template"],
      [{ name: "x", verification_enabled: true, verification_type: "hmac-sha256", verification_header: "X-S" }, "body.verification_secret"],
      [{ name: "x", verification_enabled: true, verification_secret: "s" }, "body.verification_type"],
      [{ name: "x", verification_type: "hmac-sha256", verification_secret: "s" }, "body.verification_header"],
      [{ name: "x", verification_type: "md5", verification_secret: "s" }, "body.verification_type"],
      [{ name: "x", verification_type: "hmac-sha256", verification_secret: "s", verification_header: "X-S", verification_config: { encoding: "rot13" } }, "body.verification_config.encoding"],
      [{ name: "x", verification_type: "hmac-sha256", verification_secret: "s", verification_header: "X-S", verification_config: { signed_payload: "{timestamp}.{body}" } }, "body.verification_config"],
      [{ name: "x", verification_type: "hmac-sha256", verification_secret: "s", verification_header: "X-S", verification_config: "[]" }, "body.verification_config"],
      [{ name: "x", verification_type: "standard-webhooks", verification_secret: "whsec_***not base64***" }, "body.verification_secret"],
      [{ name: "x", verification_header: "bad header" }, "body.verification_header"],
      [{ name: "x", dedup_enabled: true, dedup_strategy: "header" }, "body.dedup_field"],
      [{ name: "x", dedup_strategy: "bogus" }, "body.dedup_strategy"],
      [{ name: "x", dedup_window_seconds: 0 }, "body.dedup_window_seconds"],
      [{ name: "x", dedup_window_seconds: "60" }, "body.dedup_window_seconds"],
      [{ name: "x", status: "sleeping" }, "body.status"],
      [{ name: "x", expires_at: "tomorrow" }, "body.expires_at"],
      [{ name: "x", request_limit: 0 }, "body.request_limit"],
      [{ name: "x", schema_action: "drop" }, "body.schema_action"],
      [{ name: "x", verification_enabled: "yes" }, "body.verification_enabled"],
      [{ name: "x", slug: "Not A Slug!" }, "body.slug"],
    ];
    for (const [body, field] of cases) {
      const res = await call(server, "POST", "/v1/sources", { key, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe("validation_error");
      expect(res.body.error.details.map((d: { field: string }) => d.field), JSON.stringify(body)).toContain(field);
    }
  });

  it("refuses unknown fields naming them (docs/api.md) and answers 404 for another org or env", async () => {
    const typo = await call(server, "POST", "/v1/sources", { key, body: { name: "extra", whatever: 1 } });
    expect(typo.status).toBe(400);
    expect(typo.body.error.details).toEqual([{ field: "body.whatever", message: "unknown field" }]);
    for (const body of [{ name: "x", org_id: "f".repeat(32) }, { name: "x", env_id: "e".repeat(32) }]) {
      const res = await call(server, "POST", "/v1/sources", { key, body });
      expect(res.status).toBe(404);
    }
  });

  it("needs authentication and a writing key", async () => {
    expect((await call(server, "POST", "/v1/sources", { body: { name: "x" } })).status).toBe(401);
    const read = await server.apiKey("read");
    expect((await call(server, "POST", "/v1/sources", { key: read, body: { name: "x" } })).status).toBe(403);
    expect((await call(server, "GET", "/v1/sources", { key: read })).status).toBe(200);
  });
});

describe("GET /v1/sources and /v1/sources/{id}", () => {
  it("lists newest first, filtered by status, and gets one with or without the prefix", async () => {
    const a = await createSource(server, key, { name: "list-a" });
    const b = await createSource(server, key, { name: "list-b", status: "disabled" });
    const all = await call(server, "GET", "/v1/sources", { key });
    expect(all.status).toBe(200);
    const ids = all.body.sources.map((s: { id: string }) => s.id);
    expect(ids.indexOf(b.id)).toBeLessThan(ids.indexOf(a.id));

    const disabled = await call(server, "GET", "/v1/sources?status=disabled", { key });
    expect(disabled.body.sources.every((s: { status: string }) => s.status === "disabled")).toBe(true);
    expect(disabled.body.sources.map((s: { id: string }) => s.id)).toContain(b.id);
    expect((await call(server, "GET", "/v1/sources?status=nope", { key })).status).toBe(400);
    expect((await call(server, "GET", `/v1/sources?org_id=${"f".repeat(32)}`, { key })).body.sources).toEqual([]);

    for (const id of [a.id, a.id.slice(4)]) {
      const one = await call(server, "GET", `/v1/sources/${id}`, { key });
      expect(one.status).toBe(200);
      expect(one.body.source).toEqual(a);
    }
  });

  it("answers 404 not_found for absent or malformed ids", async () => {
    for (const id of ["src_" + "0".repeat(32), "0".repeat(32), "nope", "evt_" + "a".repeat(32)]) {
      const res = await call(server, "GET", `/v1/sources/${id}`, { key });
      expect(res.status, id).toBe(404);
      expect(res.body.error.code).toBe("not_found");
    }
  });
});

describe("GET /v1/sources/templates", () => {
  it("lists the templates as data with their verification settings", async () => {
    const res = await call(server, "GET", "/v1/sources/templates", { key });
    expect(res.status).toBe(200);
    const ids = res.body.templates.map((t: { id: string }) => t.id);
    expect(ids).toEqual(expect.arrayContaining(["github", "stripe", "shopify", "slack", "svix", "standard-webhooks", "twilio", "gitlab", "generic-hmac-sha256", "generic-hmac-sha1"]));
    for (const t of res.body.templates) {
      expect(t).toEqual(expect.objectContaining({ id: expect.any(String), name: expect.any(String), description: expect.any(String), verification_type: expect.any(String) }));
      expect(t).toHaveProperty("verification_header");
      expect(() => JSON.parse(t.verification_config)).not.toThrow();
    }
    expect(res.body.templates.find((t: { id: string }) => t.id === "stripe")).toMatchObject({ verification_type: "hmac-sha256", verification_header: "Stripe-Signature" });
  });
});

describe("PATCH /v1/sources/{id}", () => {
  it("updates only the given fields and validates them", async () => {
    const s = await createSource(server, key, { name: "patch-me", description: "d" });
    const res = await call(server, "PATCH", `/v1/sources/${s.id}`, { key, body: { name: "patched", ip_allowlist: ["203.0.113.0/24"], dedup_enabled: true, dedup_window_seconds: 120 } });
    expect(res.status).toBe(200);
    expect(res.body.source).toMatchObject({ name: "patched", description: "d", ip_allowlist: '["203.0.113.0/24"]', dedup_enabled: 1, dedup_strategy: "body_hash", dedup_window_seconds: 120 });
    expect(res.body.source.updated_at >= s.updated_at).toBe(true);

    const cleared = await call(server, "PATCH", `/v1/sources/${s.id}`, { key, body: { description: null, ip_allowlist: null } });
    expect(cleared.body.source).toMatchObject({ description: null, ip_allowlist: null });

    const bad = await call(server, "PATCH", `/v1/sources/${s.id}`, { key, body: { ip_denylist: ["999.1.1.1"] } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0].field).toBe("body.ip_denylist.0");
    const badSchema = await call(server, "PATCH", `/v1/sources/${s.id}`, { key, body: { schema_validation_enabled: true, json_schema: { type: 12 } } });
    expect(badSchema.status).toBe(400);
    expect((await call(server, "GET", `/v1/sources/${s.id}`, { key })).body.source.schema_validation_enabled).toBe(0);
  });

  it("sets each status and 404s for an absent source", async () => {
    const s = await createSource(server, key, { name: "status" });
    for (const status of ["paused", "disabled", "active"]) {
      const res = await call(server, "PATCH", `/v1/sources/${s.id}`, { key, body: { status } });
      expect(res.body.source.status).toBe(status);
    }
    expect((await call(server, "PATCH", `/v1/sources/src_${"0".repeat(32)}`, { key, body: { name: "x" } })).status).toBe(404);
  });

  it("keeps the secret when the masked value is sent back, and replaces it otherwise", async () => {
    const s = await createSource(server, key, { name: "masked", template: "generic-hmac-sha256", verification_secret: "first-secret-value-1234" });
    const echoed = await call(server, "PATCH", `/v1/sources/${s.id}`, { key, body: { name: "masked2", verification_secret: s.verification_secret } });
    expect(echoed.status).toBe(200);
    expect((await call(server, "GET", `/v1/sources/${s.id}/secret`, { key })).body.secret).toBe("first-secret-value-1234");

    await call(server, "PATCH", `/v1/sources/${s.id}`, { key, body: { verification_secret: "second-secret-value-5678" } });
    expect((await call(server, "GET", `/v1/sources/${s.id}/secret`, { key })).body.secret).toBe("second-secret-value-5678");
  });

  it("applies a template on update and resets the config when the scheme changes", async () => {
    const s = await createSource(server, key, { name: "switch", template: "stripe", verification_secret: "whsec_abc" });
    const sw = await call(server, "PATCH", `/v1/sources/${s.id}`, { key, body: { verification_type: "standard-webhooks", verification_secret: "whsec_" + Buffer.from("k").toString("base64") } });
    expect(sw.status).toBe(200);
    expect(sw.body.source).toMatchObject({ verification_type: "standard-webhooks", verification_config: null });
    const tpl = await call(server, "PATCH", `/v1/sources/${s.id}`, { key, body: { template: "shopify", verification_secret: "shpss" } });
    expect(tpl.body.source).toMatchObject({ template: "shopify", verification_type: "hmac-sha256", verification_header: "X-Shopify-Hmac-Sha256", dedup_field: "X-Shopify-Webhook-Id" });
  });
});

describe("DELETE /v1/sources/{id}", () => {
  it("deletes the source with its events; then 404", async () => {
    const s = await createSource(server, key, { name: "doomed" });
    const sent = await ingest(server, s.id, { body: "{}" });
    expect(sent.status).toBe(200);
    const del = await call(server, "DELETE", `/v1/sources/${s.id}`, { key });
    expect(del).toMatchObject({ status: 200, body: { success: true } });
    expect((await call(server, "GET", `/v1/sources/${s.id}`, { key })).status).toBe(404);
    expect((await call(server, "DELETE", `/v1/sources/${s.id}`, { key })).status).toBe(404);
    expect((await call(server, "GET", `/v1/events/${sent.body.event_id}`, { key })).status).toBe(404);
    expect((await ingest(server, s.id, { body: "{}" })).status).toBe(404);
  });
});

describe("OpenAPI", () => {
  it("documents the source, event and ingest routes", async () => {
    const { body } = await call(server, "GET", "/v1/openapi.json");
    expect(Object.keys(body.paths)).toEqual(
      expect.arrayContaining(["/sources", "/sources/{id}", "/sources/templates", "/sources/{id}/secret", "/events", "/events/{id}", "/events/stream", "/ingest/{id}"]),
    );
    expect(Object.keys(body.paths["/ingest/{id}"])).toEqual(expect.arrayContaining(["get", "post", "put", "patch", "delete"]));
  });
});
