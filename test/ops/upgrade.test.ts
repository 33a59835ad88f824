import { createHmac } from "node:crypto";
import { copyFileSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FIXTURE_SECRET_KEY } from "../../scripts/make-upgrade-fixture";
import { describeOnly } from "../helpers/database";
import { startSink, type Sink } from "../helpers/sink";
import { spawnServe, type ServeProcess } from "./helpers";

/**
 * Upgrades: the compiled binary of this tree, started on a copy of a database
 * made by each earlier release (test/fixtures/db, made by
 * scripts/make-upgrade-fixture.ts), migrates it forward and finds its events,
 * sources, keys and secrets intact.
 */
const fixtureDir = join(import.meta.dirname, "../fixtures/db");
const releases = readdirSync(fixtureDir)
  .filter((f) => f.endsWith(".json"))
  .map((f) => f.slice(0, -".json".length));

interface Expected {
  version: string;
  api_key: string;
  source_id: string;
  verification_secret: string;
  destination_id: string;
  signing_secret: string;
  bearer_token: string;
  channel_id: string;
  channel_secret: string;
  application_uid: string;
  endpoint_id: string;
  endpoint_secret: string;
  event_id: string;
  event_body: string;
}

describeOnly("sqlite", "upgrading a database made by an earlier release", "the fixtures are SQLite files, made by releases that had no PostgreSQL", () => {
  it("has a fixture of at least one release", () => {
    expect(releases.length).toBeGreaterThan(0);
  });

  describe.each(releases)("a database made by %s", (release) => {
    const expected = JSON.parse(readFileSync(join(fixtureDir, `${release}.json`), "utf8")) as Expected;
    let server: ServeProcess;
    let sink: Sink;
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(server.url + "/v1" + path, {
        method,
        headers: { "x-api-key": expected.api_key, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as any };
    };

    beforeAll(async () => {
      const dataDir = mkdtempSync(join(tmpdir(), `hookrelay-upgrade-${release}-`));
      copyFileSync(join(fixtureDir, `${release}.db`), join(dataDir, "hookrelay.db"));
      sink = startSink();
      server = await spawnServe(dataDir, { binary: true, env: { HOOKRELAY_SECRET_KEY: FIXTURE_SECRET_KEY } });
    });
    afterAll(async () => {
      await server?.stop();
      sink?.close();
    });

    it("starts on it and still accepts its API key", async () => {
      const me = await call("GET", "/auth/me");
      expect(me.status).toBe(200);
    });

    it("gives its environments a slug from their name (src/db/migrations/0005_environment_slugs.sql)", async () => {
      const me = await call("GET", "/auth/me");
      expect(me.body.environment).toEqual({ id: me.body.env_id, name: me.body.env_name, slug: me.body.env_name.toLowerCase().replace(/ /g, "-") });
      const list = await call("GET", "/environments");
      expect(list.body.environments.every((e: { slug: string; updated_at: string; created_at: string }) => e.slug !== "" && e.updated_at === e.created_at)).toBe(true);
    });

    it("keeps its key's rights: a key made before keys had a member acts as an admin of its organization (src/db/migrations/0006_teams.sql)", async () => {
      const me = await call("GET", "/auth/me");
      expect(me.body).toMatchObject({ user: null, role: "admin", instance_owner: false });
      expect((await call("POST", "/environments", { name: "upgraded" })).status).toBe(201);
    });

    it("keeps its event, body and all", async () => {
      const event = await call("GET", `/events/${expected.event_id}`);
      expect(event.status).toBe(200);
      expect(event.body).toMatchObject({ id: expected.event_id, source_id: expected.source_id, body: expected.event_body, verification_status: "verified" });
    });

    it("decrypts the source's verification secret, and verifies a new request with it", async () => {
      expect((await call("GET", `/sources/${expected.source_id}/secret`)).body).toEqual({ secret: expected.verification_secret });
      const { source } = (await call("GET", `/sources/${expected.source_id}`)).body;
      const body = JSON.stringify({ after: "upgrade" });
      const signature = "sha256=" + createHmac("sha256", expected.verification_secret).update(body).digest("hex");
      const res = await fetch(source.ingest_url, { method: "POST", headers: { "x-hub-signature-256": signature, "x-github-delivery": `after-upgrade-${release}` }, body });
      expect(res.status).toBe(200);
    });

    it("decrypts the destination's signing secret and auth, and delivers with them", async () => {
      expect((await call("GET", `/destinations/${expected.destination_id}/secret`)).body).toEqual({ secret: expected.signing_secret });
      const patched = await call("PATCH", `/destinations/${expected.destination_id}`, { url: `${sink.url}/upgraded`, status: "active" });
      expect(patched.status).toBe(200);
      expect((await call("POST", `/events/${expected.event_id}/retry`, {})).status).toBe(200);
      const delivered = (await sink.waitFor(1))[0]!;
      expect(delivered.body).toBe(expected.event_body);
      expect(delivered.headers.authorization).toBe(`Bearer ${expected.bearer_token}`);
      const key = Buffer.from(expected.signing_secret.slice("whsec_".length), "base64");
      const signed = `${delivered.headers["webhook-id"]}.${delivered.headers["webhook-timestamp"]}.${delivered.body}`;
      expect(delivered.headers["webhook-signature"]).toContain("v1," + createHmac("sha256", key).update(signed).digest("base64"));
    });

    it("decrypts the notification channel's secret and signs a test notification with it", async () => {
      const before = sink.requests.length;
      expect((await call("PATCH", `/notification-channels/${expected.channel_id}`, { config: { url: `${sink.url}/alerts` } })).status).toBe(200);
      const test = await call("POST", `/notification-channels/${expected.channel_id}/test`, {});
      expect(test.body).toEqual({ success: true, error: null });
      const notification = sink.requests.slice(before).find((r) => r.path === "/alerts")!;
      expect(notification.headers["x-hookrelay-signature"]).toBe("sha256=" + createHmac("sha256", expected.channel_secret).update(notification.body).digest("hex"));
    });

    it("decrypts an application endpoint's signing secret, and signs a message with it", async () => {
      const path = `/applications/${expected.application_uid}/endpoints/${expected.endpoint_id}`;
      expect((await call("GET", `${path}/secret`)).body).toEqual({ secret: expected.endpoint_secret });
      const before = sink.requests.length;
      expect((await call("PATCH", path, { url: `${sink.url}/customer`, status: "active" })).status).toBe(200);
      expect((await call("POST", `/applications/${expected.application_uid}/messages`, { event_type: "fixture.upgraded", payload: { ok: true } })).status).toBe(202);
      const sent = (await sink.waitFor(before + 1)).slice(before).find((r) => r.path === "/customer")!;
      const key = Buffer.from(expected.endpoint_secret.slice("whsec_".length), "base64");
      const signed = `${sent.headers["webhook-id"]}.${sent.headers["webhook-timestamp"]}.${sent.body}`;
      expect(sent.headers["webhook-signature"]).toContain("v1," + createHmac("sha256", key).update(signed).digest("base64"));
    });
  });
});
