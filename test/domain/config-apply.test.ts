import { and, eq } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AppError } from "../../src/contracts/errors";
import { resolveSecretRefs, type RelayFile } from "../../src/contracts/relayFile";
import { auditLog } from "../../src/db/schema";
import { applyConfig as applyWith } from "../../src/domain/configApply";
import { exportConfig as exportWith } from "../../src/domain/configExport";
import type { Deps, Scope } from "../../src/domain/deps";
import { createApplication } from "../../src/outbound/applications";
import { applicationsSection } from "../../src/outbound/configApplications";
import { createEndpoint } from "../../src/outbound/endpoints";
import { createConnection } from "../../src/domain/connections";
import { createDestination, listDestinations } from "../../src/domain/destinations";
import { createSource, listSources } from "../../src/domain/sources";
import { createTopic } from "../../src/domain/topics";
import { createAlertRule } from "../../src/domain/alertRules";
import { createChannel } from "../../src/domain/notificationChannels";
import { createCollection } from "../../src/domain/collections";
import { createEventType } from "../../src/domain/eventTypes";
import { openDomain, type DomainHarness } from "../helpers/domainDeps";

/** Config as code on a real store, called on the domain directly (docs/config-as-code.md). */

const HMAC = "whsec_" + Buffer.alloc(32, 7).toString("base64");
const ENDPOINT_KEY = "whsec_" + Buffer.alloc(32, 5).toString("base64");

// As the edges call them (src/api/v1/config.ts): with the applications section.
const exportConfig = (deps: Deps, scope: Scope, opts: { includeSecrets?: boolean } = {}) => exportWith(deps, scope, opts, [applicationsSection]);
const applyConfig = (deps: Deps, scope: Scope, raw: unknown, opts: { dryRun?: boolean; prune?: boolean } = {}) => applyWith(deps, scope, raw, opts, [applicationsSection]);

let a: DomainHarness;
let b: DomainHarness;
beforeEach(async () => {
  a = await openDomain();
  b = await openDomain();
});
afterEach(async () => {
  await a?.close();
  await b?.close();
});

/** A populated environment: a source with a secret, a destination with auth, headers and a schedule, a connection with rules and a transform. */
async function populate(h: DomainHarness) {
  const github = await createSource(h.deps, h.scope, { name: "GitHub", slug: "github", template: "github", verification_secret: "gh-secret-0123456789", ip_allowlist: ["140.82.112.0/20"] });
  await createSource(h.deps, h.scope, { name: "Plain", slug: "plain", json_schema: { type: "object", required: ["id"] }, schema_validation_enabled: true });
  const api = await createDestination(h.deps, h.scope, {
    name: "api",
    url: "https://api.example.com/hooks",
    headers: { "X-Team": "core", Authorization: "Bearer abc" },
    auth_type: "basic",
    auth_config: { username: "relay", password: "pw-1" },
    retry_schedule: ["5s", "5m"],
    signing_secret: HMAC,
  });
  await createDestination(h.deps, h.scope, { name: "billing", url: "https://billing.example.com/in", max_retries: 3 });
  const pager = await createChannel(h.deps, h.scope, { name: "pager", channel_type: "webhook", config: { url: "https://pager.example.com/hook", secret: "pager-secret-1" } });
  await createAlertRule(h.deps, h.scope, { name: "github failing", rule_type: "failure_rate", rule_config: { threshold_percent: 50 }, source_id: github.source.id, channel_ids: [pager.id] });
  const orders = await createTopic(h.deps, h.scope, { name: "Orders", slug: "orders", schema: { type: "object" } });
  // A connection from the topic's own source: the file names it by that source's slug.
  await createConnection(h.deps, h.scope, { name: "orders-to-billing", source_id: orders.topic.source_id, destination_id: (await listDestinations(h.deps, h.scope)).destinations.find((d) => d.name === "billing")!.id });
  await createEventType(h.deps, h.scope, { name: "order.created", description: "An order was placed" });
  await createCollection(h.deps, h.scope, { name: "repos", source_id: github.source.id, key_path: "repository.id" });
  const acme = await createApplication(h.deps, h.scope, { name: "Acme", uid: "acme", metadata: { plan: "pro" } });
  await createEndpoint(h.deps, h.scope, acme.application.id, { url: "https://acme.example.com/hooks", secret: ENDPOINT_KEY, filter_types: ["order.created"] });
  await createApplication(h.deps, h.scope, { name: "Beta" });
  await createConnection(h.deps, h.scope, {
    name: "github-to-api",
    source_id: github.source.id,
    destination_id: api.destination.id,
    filter_rules: [{ field: "headers.x-github-event", operator: "eq", value: "push" }],
    transform_expression: "{ 'kind': body.action }",
    ordered: true,
  });
}

async function failure(p: Promise<unknown>): Promise<AppError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  return err as AppError;
}

const auditCount = async (h: DomainHarness) => (await h.deps.db.select({ id: auditLog.id }).from(auditLog).where(eq(auditLog.orgId, h.scope.orgId))).length;

describe("export", () => {
  it("writes every setting, references by slug and name, secrets as ${NAME} references, keys and lists sorted", async () => {
    await populate(a);
    const doc = await exportConfig(a.deps, a.scope);
    expect(Object.keys(doc)).toEqual(["alert_rules", "applications", "collections", "connections", "destinations", "event_types", "notification_channels", "sources", "topics", "version"]);
    expect(doc.applications).toEqual([
      {
        allow_private_endpoints: false,
        description: null,
        endpoints: [
          {
            description: null,
            expires_at: null,
            filter_types: ["order.created"],
            on_dlq: "continue",
            ordered: false,
            rate_limit_per_second: null,
            retry_schedule: null,
            secret: "${APP_ACME_ENDPOINT_ACME_EXAMPLE_COM_HOOKS_SECRET}",
            signing_algorithm: "hmac-sha256",
            status: "active",
            url: "https://acme.example.com/hooks",
          },
        ],
        metadata: { plan: "pro" },
        name: "Acme",
        rate_limit: null,
        status: "active",
        uid: "acme",
      },
      { allow_private_endpoints: false, description: null, endpoints: [], metadata: null, name: "Beta", rate_limit: null, status: "active" },
    ]);
    expect(doc.sources.map((s) => s.slug)).toEqual(["github", "plain"]);
    expect(doc.destinations.map((d) => d.name)).toEqual(["api", "billing"]);
    const github = doc.sources[0]!;
    expect(github).toMatchObject({ template: "github", verification_secret: "${SOURCE_GITHUB_SECRET}", verification_enabled: true, ip_allowlist: ["140.82.112.0/20"] });
    expect(Object.keys(github)).toEqual([...Object.keys(github)].sort());
    expect(github).not.toHaveProperty("id");
    expect(github).not.toHaveProperty("ingest_url");
    const api = doc.destinations[0]!;
    expect(api).toMatchObject({
      signing_secret: "${DESTINATION_API_SIGNING_SECRET}",
      auth_config: { username: "relay", password: "${DESTINATION_API_AUTH_PASSWORD}" },
      headers: { Authorization: "${DESTINATION_API_HEADER_AUTHORIZATION}", "X-Team": "core" },
      retry_schedule: ["5s", "5m"],
    });
    expect(doc.notification_channels[0]).toEqual({ name: "pager", channel_type: "webhook", config: { secret: "${CHANNEL_PAGER_SECRET}", url: "https://pager.example.com/hook" } });
    expect(doc.alert_rules[0]).toMatchObject({ name: "github failing", source: "github", destination: null, channels: ["pager"], rule_config: { threshold_percent: 50, window_minutes: 5, min_attempts: 10 } });
    expect(doc.topics[0]).toMatchObject({ slug: "orders", schema: { type: "object" } });
    expect(doc.event_types[0]).toMatchObject({ name: "order.created", description: "An order was placed" });
    expect(doc.collections[0]).toMatchObject({ name: "repos", source: "github", key_path: "repository.id" });
    expect(doc.connections[0]).toMatchObject({ name: "github-to-api", source: "github", destination: "api", ordered: true, filter_rules: [{ field: "headers.x-github-event", operator: "eq", value: "push" }] });
    // Two exports of one state are the same.
    expect(JSON.stringify(await exportConfig(a.deps, a.scope))).toBe(JSON.stringify(doc));
  });

  it("writes secrets in full with includeSecrets, which a developer may not ask for", async () => {
    await populate(a);
    const doc = await exportConfig(a.deps, a.scope, { includeSecrets: true });
    expect(doc.sources[0]!.verification_secret).toBe("gh-secret-0123456789");
    expect(doc.destinations[0]!.signing_secret).toBe(HMAC);
    const err = await failure(exportConfig(a.deps, { ...a.scope, role: "developer" }, { includeSecrets: true }));
    expect(err.code).toBe("forbidden");
  });

  it("leaves out what a file does not manage: a topic's source and an ephemeral source", async () => {
    await createTopic(a.deps, a.scope, { name: "Orders", slug: "orders" });
    await createSource(a.deps, a.scope, { name: "Scratch", is_ephemeral: true });
    const doc = await exportConfig(a.deps, a.scope);
    expect(doc.sources).toEqual([]);
  });
});

describe("apply", () => {
  it("export → apply on an empty environment → export gives the same document", async () => {
    await populate(a);
    const withSecrets = await exportConfig(a.deps, a.scope, { includeSecrets: true });
    const result = await applyConfig(b.deps, b.scope, withSecrets);
    expect(result.applied).toBe(true);
    expect(result.changes.map((c) => `${c.action} ${c.kind} ${c.name}`)).toEqual([
      "create source github",
      "create source plain",
      "create destination api",
      "create destination billing",
      "create notification_channel pager",
      "create topic orders",
      "create event_type order.created",
      "create connection github-to-api",
      "create connection orders-to-billing",
      "create alert_rule github failing",
      "create collection repos",
      "create application Acme",
      "create endpoint Acme https://acme.example.com/hooks",
      "create application Beta",
    ]);
    expect(JSON.stringify(await exportConfig(b.deps, b.scope, { includeSecrets: true }))).toBe(JSON.stringify(withSecrets));
    expect(JSON.stringify(await exportConfig(b.deps, b.scope))).toBe(JSON.stringify(await exportConfig(a.deps, a.scope)));
  });

  it("applying the same file twice changes nothing the second time", async () => {
    await populate(a);
    const doc = await exportConfig(a.deps, a.scope, { includeSecrets: true });
    await applyConfig(b.deps, b.scope, doc);
    const audited = await auditCount(b);
    expect(await applyConfig(b.deps, b.scope, doc)).toEqual({ changes: [], applied: false });
    // And the file the environment itself exported, applied back to it.
    expect(await applyConfig(a.deps, a.scope, doc)).toEqual({ changes: [], applied: false });
    expect(await auditCount(b)).toBe(audited);
  });

  it("plans an update with the changed fields only, old → new, and a changed secret without its value", async () => {
    await populate(a);
    const doc = await exportConfig(a.deps, a.scope, { includeSecrets: true });
    doc.destinations[1]!.max_retries = 5;
    doc.sources[0]!.verification_secret = "a-new-secret-0123456789";
    const plan = await applyConfig(a.deps, a.scope, doc, { dryRun: true });
    expect(plan).toEqual({
      applied: false,
      changes: [
        { action: "update", kind: "source", name: "github", fields: [{ field: "verification_secret", secret: true }] },
        { action: "update", kind: "destination", name: "billing", fields: [{ field: "max_retries", before: 3, after: 5 }] },
      ],
    });
    expect(JSON.stringify(plan)).not.toContain("a-new-secret");
    // The dry run changed nothing.
    expect((await exportConfig(a.deps, a.scope, { includeSecrets: true })).destinations[1]!.max_retries).toBe(3);
    await applyConfig(a.deps, a.scope, doc);
    const after = await exportConfig(a.deps, a.scope, { includeSecrets: true });
    expect(after.destinations[1]!.max_retries).toBe(5);
    expect(after.sources[0]!.verification_secret).toBe("a-new-secret-0123456789");
    // The update sent only what changed: the trail shows max_retries, not a signing secret sealed anew.
    const [entry] = await a.deps.db
      .select({ changes: auditLog.changes })
      .from(auditLog)
      .where(and(eq(auditLog.action, "update"), eq(auditLog.resourceType, "destination")));
    expect(Object.keys(JSON.parse(entry!.changes!)).sort()).toEqual(["max_retries", "updated_at"]);
  });

  it("--prune deletes what the file no longer names; without it nothing is deleted", async () => {
    await populate(a);
    const doc = await exportConfig(a.deps, a.scope, { includeSecrets: true });
    const smaller = {
      ...doc,
      sources: doc.sources.filter((s) => s.slug !== "plain"),
      destinations: doc.destinations.filter((d) => d.name !== "billing"),
      connections: doc.connections.filter((c) => c.destination !== "billing"),
    };
    expect(await applyConfig(a.deps, a.scope, smaller)).toEqual({ changes: [], applied: false });
    const slugs = async () => (await listSources(a.deps, a.scope, { type: "webhook" })).sources.map((s) => s.slug).sort();
    expect(await slugs()).toEqual(["github", "plain"]);
    const pruned = await applyConfig(a.deps, a.scope, smaller, { prune: true });
    expect(pruned.changes.map((c) => `${c.action} ${c.kind} ${c.name}`)).toEqual(["delete connection orders-to-billing", "delete destination billing", "delete source plain"]);
    expect(await slugs()).toEqual(["github"]);
    expect((await listDestinations(a.deps, a.scope)).destinations.map((d) => d.name)).toEqual(["api"]);
  });

  it("a secret reference resolved from the environment to the stored value is no change", async () => {
    await populate(a);
    const doc = await exportConfig(a.deps, a.scope);
    // billing's signing secret was generated: an operator reads it once (`destinations secret`) and keeps it with the others.
    const generated = (await exportConfig(a.deps, a.scope, { includeSecrets: true })).destinations[1]!.signing_secret!;
    const env: Record<string, string> = {
      SOURCE_GITHUB_SECRET: "gh-secret-0123456789",
      DESTINATION_API_SIGNING_SECRET: HMAC,
      DESTINATION_API_AUTH_PASSWORD: "pw-1",
      DESTINATION_API_HEADER_AUTHORIZATION: "Bearer abc",
      DESTINATION_BILLING_SIGNING_SECRET: generated,
      CHANNEL_PAGER_SECRET: "pager-secret-1",
      APP_ACME_ENDPOINT_ACME_EXAMPLE_COM_HOOKS_SECRET: ENDPOINT_KEY,
    };
    const { file, problems } = resolveSecretRefs(doc, (ref) => (ref.kind === "env" ? env[ref.name] : undefined));
    expect(problems).toEqual([]);
    expect(await applyConfig(a.deps, a.scope, file)).toEqual({ changes: [], applied: false });
    const missing = resolveSecretRefs(doc, () => undefined);
    expect(missing.problems).toContainEqual({ field: "sources[0].verification_secret", message: "secret reference: environment variable SOURCE_GITHUB_SECRET is not set" });
  });
});

describe("channels and alert rules", () => {
  it("shows a channel's config change with its secret hidden, and prunes a channel a rule stops naming", async () => {
    await populate(a);
    const doc = await exportConfig(a.deps, a.scope, { includeSecrets: true });
    doc.notification_channels[0]!.config = { url: "https://pager2.example.com/hook", secret: "pager-secret-2" };
    const plan = await applyConfig(a.deps, a.scope, doc, { dryRun: true });
    expect(plan.changes).toEqual([
      {
        action: "update",
        kind: "notification_channel",
        name: "pager",
        fields: [{ field: "config", before: { secret: "********", url: "https://pager.example.com/hook" }, after: { secret: "********", url: "https://pager2.example.com/hook" } }],
      },
    ]);
    expect(JSON.stringify(plan)).not.toContain("pager-secret");

    const withoutChannel = { ...doc, notification_channels: [], alert_rules: [{ ...doc.alert_rules[0]!, channels: [] }] };
    const pruned = await applyConfig(a.deps, a.scope, withoutChannel, { prune: true });
    expect(pruned.changes.map((c) => `${c.action} ${c.kind} ${c.name}`)).toEqual(["update alert_rule github failing", "delete notification_channel pager"]);
    expect((await exportConfig(a.deps, a.scope)).notification_channels).toEqual([]);
  });

  it("refuses to change a channel's type, naming the field, before anything changes", async () => {
    await populate(a);
    const doc = await exportConfig(a.deps, a.scope, { includeSecrets: true });
    doc.destinations[1]!.max_retries = 1;
    doc.notification_channels[0] = { name: "pager", channel_type: "slack", config: { webhook_url: "https://hooks.slack.example.com/x" } };
    const err = await failure(applyConfig(a.deps, a.scope, doc));
    expect(err.details).toEqual([{ field: "notification_channels[0].channel_type", message: "cannot change from webhook to slack: give the channel a new name" }]);
    expect((await exportConfig(a.deps, a.scope)).destinations[1]!.max_retries).toBe(3);
  });

  it("names an alert rule's unknown channel by its place in the list", async () => {
    const err = await failure(applyConfig(a.deps, a.scope, { version: 1, alert_rules: [{ name: "r", rule_type: "dlq", channels: ["nowhere"] }] }));
    expect(err.details).toEqual([{ field: "alert_rules[0].channels[0]", message: 'unknown notification channel "nowhere"' }]);
  });
});

describe("applications and endpoints", () => {
  it("updates an endpoint's fields, rotates its secret when the file gives a new one, and prunes what the file no longer names", async () => {
    await populate(a);
    const doc = await exportConfig(a.deps, a.scope, { includeSecrets: true });
    const acme = doc.applications[0]!;
    const newKey = "whsec_" + Buffer.alloc(32, 6).toString("base64");
    acme.endpoints![0] = { ...acme.endpoints![0]!, filter_types: ["order.created", "order.paid"], secret: newKey };
    acme.endpoints!.push({ url: "https://acme.example.com/second" });
    const smaller = { ...doc, applications: [acme] };
    const plan = await applyConfig(a.deps, a.scope, smaller, { dryRun: true, prune: true });
    expect(plan.changes).toEqual([
      {
        action: "update",
        kind: "endpoint",
        name: "Acme https://acme.example.com/hooks",
        fields: [{ field: "filter_types", before: ["order.created"], after: ["order.created", "order.paid"] }, { field: "secret", secret: true }],
      },
      { action: "create", kind: "endpoint", name: "Acme https://acme.example.com/second", fields: [] },
      { action: "delete", kind: "application", name: "Beta", fields: [] },
    ]);
    await applyConfig(a.deps, a.scope, smaller, { prune: true });
    const after = await exportConfig(a.deps, a.scope, { includeSecrets: true });
    expect(after.applications.map((app) => app.name)).toEqual(["Acme"]);
    expect(after.applications[0]!.endpoints!.map((e) => [e.url, e.secret === newKey])).toEqual([
      ["https://acme.example.com/hooks", true],
      ["https://acme.example.com/second", false],
    ]);
    const rotated = await a.deps.db.select({ action: auditLog.action }).from(auditLog).where(eq(auditLog.action, "rotate_secret"));
    expect(rotated).toHaveLength(1);
    const again = { ...after, applications: [{ ...after.applications[0]!, endpoints: after.applications[0]!.endpoints!.slice(0, 1) }] };
    expect((await applyConfig(a.deps, a.scope, again, { prune: true })).changes).toEqual([{ action: "delete", kind: "endpoint", name: "Acme https://acme.example.com/second", fields: [] }]);
  });

  it("names a bad endpoint by its place in the file", async () => {
    const err = await failure(applyConfig(a.deps, a.scope, { version: 1, applications: [{ name: "Acme", endpoints: [{ url: "https://a.example.com" }, { url: "https://a.example.com" }, { url: "ftp://x" }] }] }));
    expect((err.details as { field: string }[]).map((d) => d.field).sort()).toEqual(["applications[0].endpoints[1].url", "applications[0].endpoints[2].url"]);
  });
});

describe("a bad file changes nothing", () => {
  it("names each bad field with its place in the file", async () => {
    const err = await failure(
      applyConfig(a.deps, a.scope, {
        version: 1,
        sources: [{ slug: "Bad Slug!", name: "x" }],
        destinations: [{ name: "d", url: "ftp://nope" }],
        connections: [{ name: "c", source: "s", destination: "d", colour: "red" }],
      }),
    );
    expect(err.code).toBe("validation_error");
    const fields = (err.details as { field: string }[]).map((d) => d.field);
    expect(fields).toEqual(expect.arrayContaining(["sources[0].slug", "destinations[0].url", "connections[0]"]));
    expect(await auditCount(a)).toBe(0);
  });

  it("a reference to an unknown name is a path-named error, before anything changes", async () => {
    const err = await failure(
      applyConfig(a.deps, a.scope, {
        version: 1,
        sources: [{ slug: "github", name: "GitHub" }],
        destinations: [{ name: "api", url: "https://api.example.com" }],
        connections: [
          { name: "one", source: "github", destination: "api" },
          { name: "two", source: "github", destination: "api" },
          { name: "three", source: "github", destination: "billing" },
        ],
      }),
    );
    expect(err.details).toEqual([{ field: "connections[2].destination", message: 'unknown destination "billing"' }]);
    expect((await listSources(a.deps, a.scope)).sources).toEqual([]);
  });

  it("an unresolved secret reference sent to the domain is refused", async () => {
    const err = await failure(applyConfig(a.deps, a.scope, { version: 1, sources: [{ slug: "gh", name: "GH", verification_secret: "${GH_SECRET}" }] }));
    expect((err.details as { field: string }[])[0]!.field).toBe("sources[0].verification_secret");
  });

  it("is all or nothing: a change that fails late rolls back every change before it", async () => {
    await populate(a);
    const before = await exportConfig(a.deps, a.scope, { includeSecrets: true });
    const audited = await auditCount(a);
    const doc = structuredClone(before) as RelayFile;
    doc.sources.push({ slug: "new-one", name: "New one" } as RelayFile["sources"][number]);
    doc.destinations[1]!.max_retries = 9;
    // Only the destination's own use-case knows basic auth needs a password: the last change fails.
    doc.destinations.push({ name: "zz-late", url: "https://late.example.com", auth_type: "basic", auth_config: { username: "u" } } as RelayFile["destinations"][number]);
    const err = await failure(applyConfig(a.deps, a.scope, doc));
    expect(err.code).toBe("validation_error");
    expect(err.message).toContain('destinations[2] (create destination "zz-late")');
    expect((err.details as { field: string }[])[0]!.field).toBe("destinations[2].auth_config.password");
    expect(JSON.stringify(await exportConfig(a.deps, a.scope, { includeSecrets: true }))).toBe(JSON.stringify(before));
    expect(await auditCount(a)).toBe(audited);
  });
});

describe("the audit log", () => {
  it("records each change with the applying actor", async () => {
    const scope = { ...a.scope, via: "api_key" as const, apiKeyId: "key_1", actorName: "ci-deploy" };
    await applyConfig(a.deps, scope, { version: 1, sources: [{ slug: "github", name: "GitHub" }], destinations: [{ name: "api", url: "https://api.example.com" }] });
    const rows = await a.deps.db
      .select({ action: auditLog.action, type: auditLog.resourceType, actorType: auditLog.actorType, actorName: auditLog.actorName })
      .from(auditLog)
      .where(and(eq(auditLog.orgId, a.scope.orgId), eq(auditLog.actorName, "ci-deploy")));
    expect(rows.map((r) => `${r.action} ${r.type} ${r.actorType}`).sort()).toEqual(["create destination api_key", "create source api_key"]);
  });
});
