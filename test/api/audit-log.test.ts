import { beforeAll, describe, expect, it } from "vitest";
import { and, eq, sql } from "drizzle-orm";
import { auditLog, memberships, sources, users } from "../../src/db/schema";
import { transaction } from "../../src/db/transaction";
import { hex32 } from "../../src/contracts/ids";
import { createSource as createSourceUseCase } from "../../src/domain/sources";
import { upsertIssue } from "../../src/domain/issues";
import type { Scope } from "../../src/domain/deps";
import { onPostgres } from "../helpers/database";
import { insertEvent, scopeOf, type TestScope } from "../helpers/rows";
import { ADMIN, call, type TestServer } from "../helpers/server";
import { useServer } from "../helpers/fixture";
import type { Sink } from "../helpers/sink";

let server: TestServer, key: string, sink: Sink;
let scope: TestScope;
let session: Record<string, string>;
let adminId: string;

useServer({ sink: true }, (s) => ({ server, key, sink } = s));
beforeAll(async () => {
  scope = await scopeOf(server, key);
  session = await server.session();
  adminId = (await call(server, "GET", "/v1/auth/me", { headers: session })).body.user.id;
});

type Entry = {
  id: string;
  org_id: string;
  env_id: string | null;
  actor_type: string;
  actor_id: string | null;
  actor_name: string | null;
  action: string;
  resource_type: string;
  resource_id: string | null;
  changes: string | null;
  ip: string | null;
  created_at: string;
};

/** The newest entries of the organization, as an admin reads them. */
async function latest(limit = 1, query = ""): Promise<Entry[]> {
  const res = await call(server, "GET", `/v1/audit-log?limit=${limit}${query}`, { headers: session });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.entries;
}

const changesOf = (e: Entry) => (e.changes === null ? null : (JSON.parse(e.changes) as Record<string, { before: unknown; after: unknown }>));

/** A member of the organization with `role`, signed in: their session headers. */
async function memberSession(role: string): Promise<{ headers: Record<string, string>; userId: string }> {
  const userId = hex32();
  const email = `${role}-${userId.slice(0, 6)}@test.local`;
  const password = "a long enough password";
  const now = new Date().toISOString();
  await server.deps.db.insert(users).values({ id: userId, email, passwordHash: await Bun.password.hash(password), orgId: scope.orgId, envId: scope.envId, createdAt: now });
  await server.deps.db.insert(memberships).values({ id: hex32(), orgId: scope.orgId, userId, role, status: "active", envId: scope.envId, createdAt: now, updatedAt: now });
  const res = await server.request("/v1/auth/login", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email, password }) });
  expect(res.status).toBe(200);
  return { headers: { cookie: res.headers.getSetCookie().map((c) => c.split(";")[0]).join("; "), origin: server.url }, userId };
}

/** Writes the trail must show, in order (later ones use what earlier ones made). */
interface Write {
  what: string;
  run: () => Promise<{ status: number; body: any }>;
  status: number;
  action: string;
  resource_type: string;
  /** The id the entry names; from the response or what earlier writes made. */
  id: (body: any) => string | null;
  /** Fields the entry's changes must show, `{field: [before, after]}`. */
  changes?: () => Record<string, [unknown, unknown]>;
}

const made: Record<string, string> = {};
const s = (method: string, path: string, body?: unknown) => () => call(server, method, path, { headers: session, body });
const SECRETS = ["supersecret-verification-0123456789", "Bearer header-secret-token", "basic-auth-password-xyz", "whsec_" + Buffer.from("rotated secret value, 32 bytes!!").toString("base64")];

function writes(): Write[] {
  return [
    { what: "create a source", run: s("POST", "/v1/sources", { name: "Audited", verification_type: "hmac-sha256", verification_secret: SECRETS[0], verification_header: "x-sig" }), status: 201, action: "create", resource_type: "source", id: (b) => (made.source = b.source.id), changes: () => ({ name: [null, "Audited"] }) },
    { what: "update a source", run: () => s("PATCH", `/v1/sources/${made.source}`, { name: "Audited again" })(), status: 200, action: "update", resource_type: "source", id: () => made.source!, changes: () => ({ name: ["Audited", "Audited again"] }) },
    {
      what: "create a destination",
      run: () => s("POST", "/v1/destinations", { name: "Sink", url: `${sink.url}/audit`, headers: { Authorization: SECRETS[1] }, auth_type: "basic", auth_config: { username: "u", password: SECRETS[2] } })(),
      status: 201,
      action: "create",
      resource_type: "destination",
      id: (b) => (made.destination = b.destination.id),
      changes: () => ({ name: [null, "Sink"], auth_type: [null, "basic"] }),
    },
    { what: "update a destination", run: () => s("PATCH", `/v1/destinations/${made.destination}`, { timeout_ms: 5000, auth_config: { password: SECRETS[2] + "2" } })(), status: 200, action: "update", resource_type: "destination", id: () => made.destination!, changes: () => ({ timeout_ms: [30000, 5000], auth_secret: ["[masked]", "[masked]"] }) },
    { what: "create a connection", run: () => s("POST", "/v1/connections", { name: "Audited route", source_id: made.source, destination_id: made.destination })(), status: 201, action: "create", resource_type: "connection", id: (b) => (made.connection = b.connection.id), changes: () => ({ name: [null, "Audited route"] }) },
    { what: "disable a connection", run: () => s("PATCH", `/v1/connections/${made.connection}`, { enabled: false })(), status: 200, action: "update", resource_type: "connection", id: () => made.connection!, changes: () => ({ enabled: [1, 0], status: ["active", "disabled"] }) },
    { what: "create a topic", run: s("POST", "/v1/topics", { name: "Audited topic" }), status: 201, action: "create", resource_type: "topic", id: (b) => (made.topic = b.topic.id), changes: () => ({ name: [null, "Audited topic"] }) },
    { what: "pause a topic", run: () => s("PATCH", `/v1/topics/${made.topic}`, { status: "paused" })(), status: 200, action: "update", resource_type: "topic", id: () => made.topic!, changes: () => ({ status: ["active", "paused"] }) },
    { what: "create an event type", run: s("POST", "/v1/event-types", { name: "audit.test" }), status: 201, action: "create", resource_type: "event_type", id: (b) => (made.eventType = b.event_type.id), changes: () => ({ name: [null, "audit.test"] }) },
    { what: "update an event type", run: () => s("PATCH", `/v1/event-types/${made.eventType}`, { description: "described" })(), status: 200, action: "update", resource_type: "event_type", id: () => made.eventType!, changes: () => ({ description: [null, "described"] }) },
    { what: "create a collection", run: () => s("POST", "/v1/collections", { name: "Audited collection", source_id: made.source, key_path: "id" })(), status: 201, action: "create", resource_type: "collection", id: (b) => (made.collection = b.collection.id), changes: () => ({ key_path: [null, "id"] }) },
    { what: "update a collection", run: () => s("PATCH", `/v1/collections/${made.collection}`, { name: "Renamed collection" })(), status: 200, action: "update", resource_type: "collection", id: () => made.collection!, changes: () => ({ name: ["Audited collection", "Renamed collection"] }) },
    { what: "create a notification channel", run: () => s("POST", "/v1/notification-channels", { name: "Audited hook", channel_type: "webhook", config: { url: `${sink.url}/alerts` } })(), status: 201, action: "create", resource_type: "notification_channel", id: (b) => (made.channel = b.id), changes: () => ({ name: [null, "Audited hook"] }) },
    { what: "rename a notification channel", run: () => s("PATCH", `/v1/notification-channels/${made.channel}`, { name: "Renamed hook" })(), status: 200, action: "update", resource_type: "notification_channel", id: () => made.channel!, changes: () => ({ name: ["Audited hook", "Renamed hook"] }) },
    { what: "test a notification channel", run: () => s("POST", `/v1/notification-channels/${made.channel}/test`)(), status: 200, action: "test", resource_type: "notification_channel", id: () => made.channel!, changes: () => ({ success: [null, true] }) },
    { what: "create an alert rule", run: () => s("POST", "/v1/alert-rules", { name: "Audited rule", rule_type: "dlq", channel_ids: [made.channel] })(), status: 201, action: "create", resource_type: "alert_rule", id: (b) => (made.rule = b.alert_rule.id), changes: () => ({ name: [null, "Audited rule"] }) },
    { what: "disable an alert rule", run: () => s("PATCH", `/v1/alert-rules/${made.rule}`, { enabled: false })(), status: 200, action: "update", resource_type: "alert_rule", id: () => made.rule!, changes: () => ({ enabled: [1, 0] }) },
    { what: "delete an alert rule", run: () => s("DELETE", `/v1/alert-rules/${made.rule}`)(), status: 200, action: "delete", resource_type: "alert_rule", id: () => made.rule!, changes: () => ({ name: ["Audited rule", null] }) },
    { what: "create an application", run: s("POST", "/v1/applications", { name: "Audited app", uid: "audited-app" }), status: 201, action: "create", resource_type: "application", id: (b) => (made.app = b.application.id), changes: () => ({ uid: [null, "audited-app"] }) },
    { what: "update an application", run: () => s("PATCH", `/v1/applications/${made.app}`, { rate_limit: 10 })(), status: 200, action: "update", resource_type: "application", id: () => made.app!, changes: () => ({ rate_limit: [null, 10] }) },
    { what: "create an endpoint", run: () => s("POST", `/v1/applications/${made.app}/endpoints`, { url: `${sink.url}/endpoint` })(), status: 201, action: "create", resource_type: "endpoint", id: (b) => (made.endpoint = b.endpoint.id), changes: () => ({ url: [null, `${sink.url}/endpoint`] }) },
    { what: "update an endpoint", run: () => s("PATCH", `/v1/applications/${made.app}/endpoints/${made.endpoint}`, { description: "described" })(), status: 200, action: "update", resource_type: "endpoint", id: () => made.endpoint!, changes: () => ({ description: [null, "described"] }) },
    { what: "rotate an endpoint's secret", run: () => s("POST", `/v1/applications/${made.app}/endpoints/${made.endpoint}/secret/rotate`, { secret: SECRETS[3] })(), status: 200, action: "rotate_secret", resource_type: "endpoint", id: () => made.endpoint! },
    { what: "send a message", run: () => s("POST", `/v1/applications/${made.app}/messages`, { event_type: "audit.test", payload: { card: "4111 1111 1111 1111" } })(), status: 202, action: "create", resource_type: "message", id: (b) => (made.message = b.message.id), changes: () => ({ event_type: [null, "audit.test"] }) },
    { what: "resend a message", run: () => s("POST", `/v1/applications/${made.app}/messages/${made.message}/resend`, { endpoint_id: made.endpoint })(), status: 202, action: "resend", resource_type: "message", id: () => made.message!, changes: () => ({ endpoint_id: [null, made.endpoint] }) },
    { what: "hand out a portal link", run: () => s("POST", `/v1/applications/${made.app}/portal`)(), status: 200, action: "create", resource_type: "portal_link", id: () => made.app! },
    { what: "revoke the portal links", run: () => s("POST", `/v1/applications/${made.app}/portal/revoke`)(), status: 200, action: "revoke", resource_type: "portal_link", id: () => made.app! },
    {
      what: "retry an event",
      run: async () => {
        made.event = await insertEvent(server, scope, made.source!, { body: '{"id":"e1"}' });
        return s("POST", `/v1/events/${made.event}/retry`)();
      },
      // The connection is disabled by now: nothing is queued, and the request is still on the record.
      status: 200,
      action: "retry",
      resource_type: "event",
      id: () => made.event!,
      changes: () => ({ retried: [null, 0] }),
    },
    { what: "retry events in bulk", run: () => s("POST", "/v1/events/retry", { source_id: made.source })(), status: 202, action: "retry", resource_type: "event", id: () => null, changes: () => ({ total: [null, 1] }) },
    {
      what: "replay to a destination",
      run: () => s("POST", "/v1/replay", { destination_id: made.destination, from: new Date(Date.now() - 3600_000).toISOString(), to: new Date(Date.now() + 60_000).toISOString() })(),
      status: 202,
      action: "replay",
      resource_type: "destination",
      id: () => made.destination!,
    },
    { what: "redrive the DLQ", run: () => s("POST", "/v1/delivery-attempts/redrive", { destination_id: made.destination })(), status: 202, action: "redrive", resource_type: "delivery_attempt", id: () => null, changes: () => ({ destination_id: [null, made.destination] }) },
    { what: "create an API key", run: s("POST", "/v1/auth/api-keys", { name: "audited key", scopes: "read" }), status: 201, action: "create", resource_type: "api_key", id: (b) => (made.apiKey = b.id), changes: () => ({ name: [null, "audited key"], scopes: [null, "read"] }) },
    { what: "revoke an API key", run: () => s("DELETE", `/v1/auth/api-keys/${made.apiKey}`)(), status: 200, action: "revoke", resource_type: "api_key", id: () => made.apiKey!, changes: () => ({ revoked: [0, 1] }) },
    { what: "create an environment", run: s("POST", "/v1/environments", { name: "Audited env" }), status: 201, action: "create", resource_type: "environment", id: (b) => (made.env = b.environment.id), changes: () => ({ slug: [null, "audited-env"] }) },
    { what: "rename an environment", run: () => s("PATCH", `/v1/environments/${made.env}`, { name: "Audited env 2" })(), status: 200, action: "update", resource_type: "environment", id: () => made.env!, changes: () => ({ name: ["Audited env", "Audited env 2"] }) },
    { what: "delete an environment", run: () => s("DELETE", `/v1/environments/${made.env}`)(), status: 204, action: "delete", resource_type: "environment", id: () => made.env!, changes: () => ({ name: ["Audited env 2", null] }) },
    { what: "delete an endpoint", run: () => s("DELETE", `/v1/applications/${made.app}/endpoints/${made.endpoint}`)(), status: 200, action: "delete", resource_type: "endpoint", id: () => made.endpoint! },
    { what: "delete an application", run: () => s("DELETE", `/v1/applications/${made.app}`)(), status: 200, action: "delete", resource_type: "application", id: () => made.app!, changes: () => ({ uid: ["audited-app", null] }) },
    { what: "delete a notification channel", run: () => s("DELETE", `/v1/notification-channels/${made.channel}`)(), status: 200, action: "delete", resource_type: "notification_channel", id: () => made.channel! },
    { what: "delete a collection", run: () => s("DELETE", `/v1/collections/${made.collection}`)(), status: 200, action: "delete", resource_type: "collection", id: () => made.collection! },
    { what: "delete an event type", run: () => s("DELETE", `/v1/event-types/${made.eventType}`)(), status: 200, action: "delete", resource_type: "event_type", id: () => made.eventType! },
    { what: "delete a topic", run: () => s("DELETE", `/v1/topics/${made.topic}`)(), status: 200, action: "delete", resource_type: "topic", id: () => made.topic! },
    { what: "delete a connection", run: () => s("DELETE", `/v1/connections/${made.connection}`)(), status: 200, action: "delete", resource_type: "connection", id: () => made.connection! },
    {
      what: "resolve an issue",
      run: async () => {
        const at = new Date().toISOString();
        const occurrence = { id: hex32(), orgId: scope.orgId, envId: scope.envId, destinationId: made.destination!, fingerprint: "audit", title: "HTTP 500", count: 1, now: at, attemptId: "da_audit", eventId: made.event!, error: null, statusCode: 500 };
        made.issue = (await upsertIssue(server.deps.db, occurrence, { reopen: false }))!;
        return s("PATCH", `/v1/issues/${made.issue}`, { status: "resolved" })();
      },
      status: 200,
      action: "update",
      resource_type: "issue",
      id: () => made.issue!,
      changes: () => ({ status: ["open", "resolved"] }),
    },
    { what: "delete a destination", run: () => s("DELETE", `/v1/destinations/${made.destination}`)(), status: 200, action: "delete", resource_type: "destination", id: () => made.destination!, changes: () => ({ name: ["Sink", null] }) },
    { what: "delete a source", run: () => s("DELETE", `/v1/sources/${made.source}`)(), status: 200, action: "delete", resource_type: "source", id: () => made.source!, changes: () => ({ name: ["Audited again", null] }) },
  ];
}

describe("the audit entry of every write", () => {
  it("names the signed-in user, the action, the resource, the address and the fields before and after, for each kind of resource", async () => {
    for (const w of writes()) {
      const res = await w.run();
      expect(res.status, `${w.what}: ${JSON.stringify(res.body)}`).toBe(w.status);
      const [entry] = await latest();
      const label = `${w.what}: ${JSON.stringify(entry)}`;
      expect(entry, label).toMatchObject({
        org_id: scope.orgId,
        actor_type: "user",
        actor_id: adminId,
        actor_name: ADMIN.email,
        action: w.action,
        resource_type: w.resource_type,
        resource_id: w.id(res.body),
        ip: "127.0.0.1",
      });
      const changes = changesOf(entry!);
      for (const [field, [before, after]] of Object.entries(w.changes?.() ?? {})) {
        expect(changes?.[field], `${label}: ${field}`).toEqual({ before, after });
      }
      // No secret of any write, nor a message's payload, reaches the trail.
      for (const secret of [...SECRETS, "4111 1111"]) expect(entry!.changes ?? "", label).not.toContain(secret);
    }
  });

  it("masks secrets, nested ones included: a source's verification secret, a destination's auth config and header values", async () => {
    const src = await latest(100, "&resource_type=source&action=create");
    expect(changesOf(src.find((e) => e.resource_id === made.source)!)!.verification_secret).toEqual({ before: null, after: "[masked]" });
    const [dst] = await latest(1, `&resource_type=destination&action=create&resource_id=${made.destination}`);
    const changes = changesOf(dst!)!;
    expect(changes.auth_config!.after).toBe("[masked]");
    expect(JSON.parse(changes.headers!.after as string)).toEqual({ Authorization: expect.not.stringContaining("header-secret") });
    const stored = await server.deps.db.select({ changes: auditLog.changes }).from(auditLog).where(eq(auditLog.orgId, scope.orgId));
    for (const row of stored) for (const secret of SECRETS) expect(row.changes ?? "").not.toContain(secret);
  });

  it("names an API key by its id and name", async () => {
    const res = await call(server, "POST", "/v1/event-types", { key, body: { name: "by.key" } });
    expect(res.status).toBe(201);
    const keyRow = (await call(server, "GET", "/v1/auth/api-keys", { headers: session })).body.api_keys.find((k: { key_prefix: string }) => key.startsWith(k.key_prefix));
    const [entry] = await latest();
    expect(entry).toMatchObject({ actor_type: "api_key", actor_id: keyRow.id, actor_name: "test", action: "create", resource_type: "event_type", resource_id: res.body.event_type.id, env_id: scope.envId });
  });

  it("names a portal link as the portal actor, by its application", async () => {
    const app = (await call(server, "POST", "/v1/applications", { key, body: { name: "Portal customer", uid: "audit-portal", allow_private_endpoints: true } })).body.application;
    const link = await call(server, "POST", `/v1/applications/${app.id}/portal`, { key });
    const token = new URL(link.body.url).hash.replace(/^#token=/, "");
    const made = await call(server, "POST", `/v1/applications/${app.id}/endpoints`, { headers: { authorization: `Bearer ${token}` }, body: { url: `${sink.url}/portal` } });
    expect(made.status).toBe(201);
    const [entry] = await latest();
    expect(entry).toMatchObject({ actor_type: "portal", actor_id: app.id, actor_name: "portal link", action: "create", resource_type: "endpoint", resource_id: made.body.endpoint.id, ip: "127.0.0.1" });
  });

  it.skipIf(onPostgres)("records a backup made by the instance owner (SQLite: backups are files)", async () => {
    const res = await call(server, "POST", "/v1/backups", { headers: session });
    expect(res.status).toBe(201);
    const [entry] = await latest();
    expect(entry).toMatchObject({ actor_id: adminId, action: "create", resource_type: "backup", resource_id: res.body.backup.name, env_id: null });
  });

  it("names the local CLI as the system actor (local mode calls the same use-cases)", async () => {
    const local: Scope = { orgId: scope.orgId, envId: scope.envId, userId: null, via: "local", scopes: "*", role: "owner" };
    const { source } = await createSourceUseCase(server.deps, local, { name: "Made locally" });
    const [entry] = await latest();
    expect(entry).toMatchObject({ actor_type: "system", actor_id: null, actor_name: "local CLI", action: "create", resource_type: "source", resource_id: source.id, ip: null });
  });

  it("records logins, failed logins of a known account, and logouts; an unknown email leaves nothing", async () => {
    const login = (password: string, email = ADMIN.email) => server.request("/v1/auth/login", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email, password }) });
    const before = (await latest(100)).length;
    expect((await login("wrong password")).status).toBe(401);
    let [entry] = await latest();
    expect(entry).toMatchObject({ actor_type: "user", actor_id: adminId, actor_name: ADMIN.email, action: "login_failed", resource_type: "user", resource_id: adminId, env_id: null, ip: "127.0.0.1" });
    expect((await login("whatever", "nobody@test.local")).status).toBe(401);
    expect((await latest())[0]!.id).toBe(entry!.id);

    const other = await server.session();
    [entry] = await latest();
    expect(entry).toMatchObject({ actor_id: adminId, action: "login", resource_type: "user", resource_id: adminId });
    expect(changesOf(entry!)).toEqual({ method: { before: null, after: "password" } });
    expect((await call(server, "POST", "/v1/auth/logout", { headers: other })).status).toBe(200);
    [entry] = await latest();
    expect(entry).toMatchObject({ actor_type: "user", actor_id: adminId, action: "logout", resource_type: "user", resource_id: adminId });
    expect((await latest(100)).length).toBe(Math.min(100, before + 3));
  });
});

describe("an entry is never without its change, nor a change without its entry", () => {
  const count = async () => Number((await server.deps.db.select({ n: sql<number>`count(*)` }).from(auditLog).where(eq(auditLog.orgId, scope.orgId)))[0]!.n);

  it("a write refused with 409 leaves no entry", async () => {
    const first = await call(server, "POST", "/v1/sources", { headers: session, body: { name: "Taken", slug: "taken-slug" } });
    expect(first.status).toBe(201);
    const other = await call(server, "POST", "/v1/sources", { headers: session, body: { name: "Other", slug: "other-slug" } });
    const n = await count();
    expect((await call(server, "POST", "/v1/sources", { headers: session, body: { name: "Again", slug: "taken-slug" } })).status).toBe(409);
    // The update runs and fails on the unique slug after the row was read: nothing of it stays.
    expect((await call(server, "PATCH", `/v1/sources/${other.body.source.id}`, { headers: session, body: { slug: "taken-slug" } })).status).toBe(409);
    // Deleting a channel an alert rule still uses is refused after it was read and checked.
    const channel = await call(server, "POST", "/v1/notification-channels", { headers: session, body: { name: "In use", channel_type: "webhook", config: { url: `${sink.url}/x` } } });
    await call(server, "POST", "/v1/alert-rules", { headers: session, body: { name: "Uses it", rule_type: "dlq", channel_ids: [channel.body.id] } });
    const m = await count();
    expect((await call(server, "DELETE", `/v1/notification-channels/${channel.body.id}`, { headers: session })).status).toBe(409);
    expect(await count()).toBe(m);
    expect(m).toBe(n + 2);
  });

  it("a failure after the entry was written, inside the change's transaction, undoes both", async () => {
    const local: Scope = { orgId: scope.orgId, envId: scope.envId, userId: null, via: "local", scopes: "*", role: "owner" };
    const n = await count();
    let createdId: string | undefined;
    await expect(
      transaction(server.deps.db, async () => {
        const { source } = await createSourceUseCase(server.deps, local, { name: "Rolled back", slug: "rolled-back" });
        createdId = source.id;
        // The entry is written by now; a unique-constraint violation follows in the same transaction.
        await server.deps.db.insert(sources).values({ ...(await server.deps.db.select().from(sources).where(eq(sources.id, source.id)))[0]!, id: hex32() });
      }),
    ).rejects.toThrow();
    expect(createdId).toBeDefined();
    expect(await server.deps.db.$count(sources, eq(sources.id, createdId!))).toBe(0);
    expect(await server.deps.db.$count(auditLog, eq(auditLog.resourceId, createdId!))).toBe(0);
    expect(await count()).toBe(n);
  });

  it("when the entry cannot be written, the change is not made either", async () => {
    // The store refuses audit rows for a moment: a trigger on SQLite, a check constraint on PostgreSQL.
    const refuse = onPostgres
      ? sql`ALTER TABLE audit_log ADD CONSTRAINT audit_refused CHECK (action <> 'create') NOT VALID`
      : sql`CREATE TRIGGER audit_refused BEFORE INSERT ON audit_log WHEN NEW.action = 'create' BEGIN SELECT RAISE(ABORT, 'audit refused'); END`;
    const allow = onPostgres ? sql`ALTER TABLE audit_log DROP CONSTRAINT audit_refused` : sql`DROP TRIGGER audit_refused`;
    const exec = async (q: ReturnType<typeof sql>) => {
      const db = server.deps.db as unknown as { execute?(q: unknown): Promise<unknown>; run(q: unknown): unknown };
      if (onPostgres) await db.execute!(q);
      else db.run(q);
    };
    await exec(refuse);
    try {
      const res = await call(server, "POST", "/v1/sources", { headers: session, body: { name: "Never made", slug: "never-made" } });
      expect(res.status).toBe(500);
    } finally {
      await exec(allow);
    }
    expect(await server.deps.db.$count(sources, and(eq(sources.orgId, scope.orgId), eq(sources.slug, "never-made")))).toBe(0);
  });
});

describe("GET /v1/audit-log", () => {
  it("filters by actor, resource type, resource id, action and time", async () => {
    const byKey = await latest(100, `&resource_type=event_type&action=create`);
    expect(byKey.length).toBeGreaterThanOrEqual(2);
    expect(byKey.every((e) => e.resource_type === "event_type" && e.action === "create")).toBe(true);
    const mine = await latest(100, `&actor_id=${adminId}&action=update`);
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.every((e) => e.actor_id === adminId && e.action === "update")).toBe(true);
    const one = await latest(100, `&resource_id=${made.connection}`);
    expect(one.map((e) => e.action).sort()).toEqual(["create", "delete", "update"]);
    const all = await latest(100);
    const pivot = all[Math.floor(all.length / 2)]!.created_at;
    const after = await latest(100, `&after=${encodeURIComponent(pivot)}`);
    const before = await latest(100, `&before=${encodeURIComponent(pivot)}`);
    expect(after.every((e) => e.created_at >= pivot)).toBe(true);
    expect(before.every((e) => e.created_at < pivot)).toBe(true);
    expect(after.length + before.length).toBe(all.length);
  });

  it("pages newest first with a cursor, neither repeating nor skipping", async () => {
    const all = await latest(100);
    expect(all.length).toBeGreaterThan(10);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await call(server, "GET", `/v1/audit-log?limit=7${cursor ? `&cursor=${cursor}` : ""}`, { headers: session });
      expect(res.status).toBe(200);
      expect(res.body.entries.length).toBeLessThanOrEqual(7);
      seen.push(...res.body.entries.map((e: Entry) => e.id));
      expect(res.body.has_more).toBe(res.body.next_cursor !== null);
      cursor = res.body.next_cursor;
    } while (cursor && seen.length < all.length + 10);
    expect(seen).toEqual(all.map((e) => e.id).slice(0, seen.length));
    expect(seen.length).toBe(all.length);
    const times = all.map((e) => e.created_at);
    expect([...times].sort().reverse()).toEqual(times);
  });

  it("answers 400 with the error body for bad filters", async () => {
    for (const q of ["limit=0", "limit=101", "after=yesterday", "before=not-a-time", "cursor=garbage", "action=DROP%20TABLE", "resource_type=Source!"]) {
      const res = await call(server, "GET", `/v1/audit-log?${q}`, { headers: session });
      expect(res.status, q).toBe(400);
      expect(res.body.error.code, q).toBe("validation_error");
    }
  });

  it("shows only the caller's organization", async () => {
    const now = new Date().toISOString();
    const { organizations } = await import("../../src/db/schema");
    const orgId = hex32();
    await server.deps.db.insert(organizations).values({ id: orgId, name: "Elsewhere", slug: `elsewhere-${orgId}`, createdAt: now });
    await server.deps.db.insert(auditLog).values({ id: hex32(), orgId, envId: null, actorType: "system", actorId: null, actorName: "x", action: "create", resourceType: "source", resourceId: "src_elsewhere", changes: null, ip: null, createdAt: now });
    const entries = await latest(100, "&resource_id=src_elsewhere");
    expect(entries).toEqual([]);
  });

  it("is for admins and owners: developers and viewers get 403, a read key too", async () => {
    for (const role of ["developer", "viewer"]) {
      const member = await memberSession(role);
      const res = await call(server, "GET", "/v1/audit-log", { headers: member.headers });
      expect(res.status, role).toBe(403);
      expect(res.body.error.code).toBe("forbidden");
    }
    const admin = await memberSession("admin");
    expect((await call(server, "GET", "/v1/audit-log", { headers: admin.headers })).status).toBe(200);
    expect((await call(server, "GET", "/v1/audit-log", { key: await server.apiKey("read") })).status).toBe(403);
    expect((await call(server, "GET", "/v1/audit-log")).status).toBe(401);
  });
});
