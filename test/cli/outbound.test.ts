import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { useServer } from "../helpers/fixture";
import { call, tempDir, type TestServer } from "../helpers/server";
import { outboundSink, verifiesWith } from "../outbound/helpers";
import { cli, modeEnvs, ok, refused, same } from "./helpers";

/**
 * `hookrelay apps`, `endpoints` and `messages` (docs/cli.md, "Applications, endpoints and messages (outbound)") with --json
 * in both modes against one running server: remote (URL + API key) and local
 * (its data dir). What one mode writes the other reads back identically; the
 * messages reach a real local receiver signed with the secret the CLI
 * prints; bad flags exit 2, API refusals exit 1 with the API's body (a
 * schema refusal's errors listed), a bad key exits 4.
 */
let server: TestServer;
let remoteEnv: Record<string, string>;
let localEnv: Record<string, string>;
const sink = outboundSink();
const files = tempDir("hookrelay-cli-outbound-");

useServer({}, (s) => {
  server = s.server;
  ({ remoteEnv, localEnv } = modeEnvs(s.server, s.key));
});
afterAll(() => sink.close());

const remote = (args: string[], stdin?: string) => cli([...args, "--json"], { env: remoteEnv, stdin });
const local = (args: string[], stdin?: string) => cli([...args, "--json"], { env: localEnv, stdin });
const both = (args: string[]) => Promise.all([remote(args), local(args)]);

function file(name: string, value: unknown) {
  const p = join(files, name);
  writeFileSync(p, typeof value === "string" ? value : JSON.stringify(value));
  return p;
}

/** Local mode writes the file the server reads; its workers find new deliveries by polling: allow for that. */
const WAIT = 15_000;

const ORDER_SCHEMA = { type: "object", required: ["id"], properties: { id: { type: "string" }, total: { type: "integer" } } };
let app: any;
let orders: any;
let all: any;

describe("apps", () => {
  it("creates an application and reads it back by uid or id in both modes", async () => {
    app = ok(await remote(["apps", "create", "--name", "Acme Corp", "--uid", "acme", "--metadata", '{"plan": "pro"}', "--rate-limit", "50"])).application;
    expect(app).toMatchObject({ name: "Acme Corp", uid: "acme", metadata: '{"plan":"pro"}', rate_limit: 50, status: "active" });
    expect(same(await both(["apps", "get", "acme"])).application).toEqual(app);
    expect(same(await both(["apps", "get", app.id])).application).toEqual(app);
    const updated = ok(await local(["apps", "update", "acme", "--description", "Our first customer", "--metadata", `@${file("meta.json", { plan: "enterprise" })}`])).application;
    expect(updated).toMatchObject({ description: "Our first customer", metadata: '{"plan":"enterprise"}' });
    app = updated;
  });

  it("refuses a duplicate uid (409) and an unknown application (404), exit 1", async () => {
    const dup = refused(await both(["apps", "create", "--name", "Again", "--uid", "acme"]), "conflict");
    expect(dup.message).toContain('uid "acme"');
    refused(await both(["apps", "get", "nobody"]), "not_found");
    refused(await both(["endpoints", "list", "--app", "nobody"]), "not_found");
  });

  it("lists with counts, --search, and --limit/--cursor pages without repeats", async () => {
    for (const n of [1, 2, 3]) ok(await (n % 2 ? remote : local)(["apps", "create", "--name", `Customer ${n}`, "--uid", `customer-${n}`]));
    const first = same(await both(["apps", "list", "--limit", "2"]));
    expect(first.applications).toHaveLength(2);
    expect(first.cursor).toEqual(expect.any(String));
    const uids = first.applications.map((a: { uid: string }) => a.uid);
    let cursor: string | null = first.cursor;
    while (cursor) {
      const page = same(await both(["apps", "list", "--limit", "2", "--cursor", cursor]));
      uids.push(...page.applications.map((a: { uid: string }) => a.uid));
      cursor = page.cursor;
    }
    expect(uids).toEqual(["customer-3", "customer-2", "customer-1", "acme"]);
    const found = same(await both(["apps", "list", "--search", "ACME"])).applications;
    expect(found).toEqual([{ ...app, endpoint_count: 0, message_count: 0 }]);
  });

  it("prints rows in a pipe, and where the next page starts on stderr", async () => {
    const r = await cli(["apps", "list", "--limit", "3"], { env: remoteEnv });
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split("\n").map((l) => l.split("\t")[1])).toEqual(["customer-3", "customer-2", "customer-1"]);
    expect(r.stderr).toMatch(/more applications: --cursor \S+/);
  });

  it("creates a portal link in either mode that the server honours for that application only", async () => {
    const [r, l] = await Promise.all([remote(["apps", "portal", "acme"]), local(["apps", "portal", app.id, "--expires-in", "600"])]);
    for (const link of [ok(r!), ok(l!)]) {
      expect(link.url.startsWith(`${server.deps.settings.baseUrl}/portal#token=hrp_`), link.url).toBe(true);
      const token = link.url.split("#token=")[1];
      const session = await call(server, "GET", "/v1/portal/session", { headers: { authorization: `Bearer ${token}` } });
      expect(session.status).toBe(200);
      expect(session.body).toMatchObject({ application: { id: app.id }, expires_at: link.expires_at });
      expect((await call(server, "GET", "/v1/sources", { headers: { authorization: `Bearer ${token}` } })).status).toBe(403);
    }
    const inTen = Date.parse(ok(l!).expires_at) - Date.now();
    expect(inTen).toBeGreaterThan(590_000);
    expect(inTen).toBeLessThanOrEqual(600_000);

    // A person gets the link alone on stdout, its expiry on stderr.
    const human = await cli(["apps", "portal", "acme"], { env: remoteEnv });
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^http:\/\/\S+\/portal#token=hrp_\S+\n$/);
    expect(human.stderr).toMatch(/expires \d{4}-/);
    const tooShort = refused(await both(["apps", "portal", "acme", "--expires-in", "10"]), "validation_error");
    expect(tooShort.details[0]).toMatchObject({ field: "body.expires_in" });
  });

  it("revokes every portal link issued so far (apps portal-revoke), in either mode", async () => {
    const session = async (link: { url: string }) => (await call(server, "GET", "/v1/portal/session", { headers: { authorization: `Bearer ${link.url.split("#token=")[1]}` } })).status;
    for (const run of [remote, local]) {
      const link = ok(await remote(["apps", "portal", "acme"]));
      expect(await session(link)).toBe(200);
      expect(ok(await run(["apps", "portal-revoke", "acme"]))).toEqual({ success: true });
      expect(await session(link)).toBe(401);
    }
  });
});

describe("endpoints", () => {
  it("creates endpoints under --app (filter types as a list or JSON) and reads them back in both modes", async () => {
    ok(await remote(["event-types", "create", "--name", "order.created", "--schema", JSON.stringify(ORDER_SCHEMA)]));
    orders = ok(await local(["endpoints", "create", "--app", "acme", "--url", `${sink.url}/orders`, "--filter-types", "order.created,order.refunded", "--description", "Order sync"])).endpoint;
    expect(orders).toMatchObject({ application_id: app.id, url: `${sink.url}/orders`, filter_types: '["order.created","order.refunded"]', status: "active", signing_algorithm: "hmac-sha256" });
    expect(orders).not.toHaveProperty("secret");
    all = ok(await remote(["endpoints", "create", "--app", app.id, "--data", JSON.stringify({ url: `${sink.url}/all`, rate_limit_per_second: 20 })])).endpoint;
    expect(all).toMatchObject({ filter_types: null, rate_limit_per_second: 20 });
    expect(same(await both(["endpoints", "get", orders.id, "--app", "acme"])).endpoint).toEqual(orders);
    expect(same(await both(["endpoints", "list", "--app", "acme"])).endpoints).toEqual([all, orders]);
  });

  it("updates fields (null clears them) and disables, in either mode", async () => {
    const narrowed = ok(await remote(["endpoints", "update", orders.id, "--app", "acme", "--filter-types", '["order.created"]', "--rate-limit-per-second", "5"])).endpoint;
    expect(narrowed).toMatchObject({ filter_types: '["order.created"]', rate_limit_per_second: 5 });
    const cleared = ok(await local(["endpoints", "update", orders.id, "--app", "acme", "--rate-limit-per-second", "null", "--status", "disabled"])).endpoint;
    expect(cleared).toMatchObject({ rate_limit_per_second: null, status: "disabled" });
    orders = ok(await remote(["endpoints", "update", orders.id, "--app", "acme", "--status", "active"])).endpoint;
    expect(orders.status).toBe("active");
  });

  it("prints the secret, rotates it, and prints the new one", async () => {
    const { secret } = same(await both(["endpoints", "secret", orders.id, "--app", "acme"]));
    expect(secret).toMatch(/^whsec_/);
    const human = await cli(["endpoints", "secret", orders.id, "--app", "acme"], { env: localEnv });
    expect(human.stdout).toBe(`${secret}\n`);

    const rotated = ok(await remote(["endpoints", "rotate-secret", orders.id, "--app", "acme"])).secret;
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
    expect(same(await both(["endpoints", "secret", orders.id, "--app", "acme"])).secret).toBe(rotated);
    const chosen = "whsec_" + Buffer.from("a chosen secret of 32 bytes ....").toString("base64");
    const viaLocal = await cli(["endpoints", "rotate-secret", orders.id, "--app", "acme", "--secret", chosen], { env: localEnv });
    expect(viaLocal.stdout).toBe(`${chosen}\n`);
    expect(viaLocal.stderr).toMatch(/24 hours/);
    refused(await both(["endpoints", "rotate-secret", orders.id, "--app", "acme", "--secret", "not-a-secret"]), "validation_error");
  });

  it("exits 2 without --app, and 1 for a bad URL", async () => {
    const noApp = await local(["endpoints", "list"]);
    expect(noApp.code).toBe(2);
    expect(noApp.errorJson().error.message).toMatch(/required option '--app <app>'/);
    const badUrl = refused(await both(["endpoints", "create", "--app", "acme", "--url", "ftp://example.com/x"]), "validation_error");
    expect(badUrl.details[0]).toMatchObject({ field: "body.url" });
  });
});

describe("messages", () => {
  let first: any;

  it("sends --data @file, inline and from stdin; each endpoint that admits the type gets it, signed with the secret the CLI prints", async () => {
    const secret = ok(await remote(["endpoints", "secret", orders.id, "--app", "acme"])).secret;
    first = ok(await remote(["messages", "send", "acme", "--type", "order.created", "--data", `@${file("order.json", { id: "ord_1", total: 4200 })}`])).message;
    expect(first).toMatchObject({ application_id: app.id, event_type: "order.created", payload: '{"id":"ord_1","total":4200}', status: "pending" });
    const inline = ok(await local(["messages", "send", app.id, "--type", "order.shipped", "--data", '{"id": "ord_1"}'])).message;
    const stdin = ok(await local(["messages", "send", "acme", "--type", "order.created", "--data", "-"], '{"id": "ord_2"}')).message;

    await sink.waitFor(5, WAIT);
    const toOrders = sink.at("/orders");
    expect(toOrders.map((r) => r.headers["webhook-id"]).sort()).toEqual([first.id, stdin.id].sort());
    for (const req of toOrders) expect(verifiesWith(secret, req)).toEqual({ standardwebhooks: true, svix: true });
    expect(sink.at("/all").map((r) => r.headers["webhook-id"]).sort()).toEqual([first.id, inline.id, stdin.id].sort());
  });

  it("answers the first message again for a repeated --id, and sends nothing new", async () => {
    const once = ok(await remote(["messages", "send", "acme", "--type", "order.created", "--data", '{"id": "ord_3"}', "--id", "order-3-created"])).message;
    const again = ok(await local(["messages", "send", "acme", "--type", "order.created", "--data", '{"id": "ord_3", "total": 1}', "--id", "order-3-created"])).message;
    // The message sent first (its payload, not this one's); only its status may have moved on.
    expect({ ...again, status: undefined, updated_at: undefined }).toEqual({ ...once, status: undefined, updated_at: undefined });
    await sink.waitFor(7, WAIT);
    // Nothing more can go out than the message's delivery attempts: the repeat made none (its deliveries are queued with it).
    await expect.poll(async () => ok(await remote(["messages", "get", "acme", once.id])).message.status, { timeout: WAIT }).toBe("delivered");
    expect(ok(await remote(["messages", "attempts", "acme", once.id])).attempts).toHaveLength(2);
    expect(sink.requests.filter((r) => r.headers["webhook-id"] === once.id)).toHaveLength(2);
    expect(same(await both(["messages", "get", "acme", "order-3-created"])).message.id).toBe(once.id);
  });

  it("refuses a payload that breaks the event type's schema: exit 1, the errors printed", async () => {
    const err = refused(await both(["messages", "send", "acme", "--type", "order.created", "--data", '{"id": 7, "total": "lots"}']), "schema_violation");
    expect(err.details).toMatchObject({ event_type: "order.created", errors: [{ path: "/id", message: "must be string" }, { path: "/total", message: "must be integer" }] });
    for (const env of [remoteEnv, localEnv]) {
      const human = await cli(["messages", "send", "acme", "--type", "order.created", "--data", '{"id": 7, "total": "lots"}'], { env });
      expect(human.code).toBe(1);
      expect(human.stdout).toBe("");
      expect(human.stderr).toBe('error (schema_violation): Payload does not match the JSON Schema of event type "order.created" (/id: must be string; /total: must be integer)\n');
    }
  });

  it("lists by --event-type and in --limit/--cursor pages, gets one, in both modes", async () => {
    await expect.poll(async () => ok(await remote(["messages", "get", "acme", first.id])).message.status, { timeout: WAIT }).toBe("delivered");
    const created = same(await both(["messages", "list", "acme", "--event-type", "order.created"])).messages;
    expect(created.map((m: { payload: string }) => JSON.parse(m.payload).id)).toEqual(["ord_3", "ord_2", "ord_1"]);
    const ids: string[] = [];
    let cursor: string | undefined;
    do {
      const page: { messages: { id: string }[]; cursor: string | null } = same(await both(["messages", "list", "acme", "--limit", "2", ...(cursor ? ["--cursor", cursor] : [])]));
      ids.push(...page.messages.map((m) => m.id));
      cursor = page.cursor ?? undefined;
    } while (cursor);
    expect(ids).toHaveLength(4);
    expect(new Set(ids).size).toBe(4);
    expect(same(await both(["messages", "get", "acme", first.id])).message).toMatchObject({ id: first.id, status: "delivered" });
    refused(await both(["messages", "get", "acme", "0123456789abcdef0123456789abcdef"]), "not_found");
  });

  it("shows a message's attempts with the responses, and resends it to one endpoint", async () => {
    const { attempts } = same(await both(["messages", "attempts", "acme", first.id]));
    expect(attempts).toHaveLength(2);
    for (const a of attempts) expect(a).toMatchObject({ event_id: `evt_${first.id}`, status: "success", response_status: 200, trigger_type: "initial" });
    const toOrders = same(await both(["messages", "attempts", "acme", first.id, "--endpoint", orders.id])).attempts;
    expect(toOrders.map((a: { destination_id: string }) => a.destination_id)).toEqual([`dst_${orders.id}`]);

    const before = sink.at("/orders").length;
    const { attempt } = ok(await remote(["messages", "resend", "acme", first.id, "--endpoint", orders.id]));
    // The answer shows the new attempt as it is when read back: the server's worker, woken by the resend, may already have it.
    expect(attempt).toMatchObject({ status: expect.stringMatching(/^(queued|delivering|success)$/), trigger_type: "manual", destination_id: `dst_${orders.id}` });
    await expect.poll(() => sink.at("/orders").length, { timeout: WAIT }).toBe(before + 1);
    await expect.poll(async () => ok(await local(["messages", "attempts", "acme", first.id, "--endpoint", orders.id])).attempts.length, { timeout: WAIT }).toBe(2);
    const endpointAttempts = same(await both(["endpoints", "attempts", orders.id, "--app", "acme", "--limit", "100"])).attempts;
    expect(endpointAttempts.some((a: { trigger_type: string }) => a.trigger_type === "manual")).toBe(true);

    const human = await cli(["messages", "resend", "acme", first.id, "--endpoint", all.id], { env: localEnv });
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(new RegExp(`Resending message ${first.id} to endpoint ${all.id}: attempt da_[0-9a-f]{32} (queued|delivering|success)$`, "m"));
    refused(await both(["messages", "resend", "acme", first.id, "--endpoint", "0123456789abcdef0123456789abcdef"]), "not_found");
  });

  it("exits 2 for usage errors and 4 for a bad API key", async () => {
    const cases: [string[], RegExp][] = [
      [["messages", "send", "acme", "--data", "{}"], /required option '--type <event-type>'/],
      [["messages", "send", "acme", "--type", "order.created"], /required option '--data <json>'/],
      [["messages", "send", "acme", "--type", "order.created", "--data", "{nope"], /--data must be JSON/],
      [["messages", "list", "acme", "--limit", "0"], /--limit must be at least 1/],
      [["messages", "resend", "acme", first.id], /required option '--endpoint <id>'/],
      [["apps", "create"], /missing --name/],
      [["apps", "portal", "acme", "--expires-in", "soon"], /--expires-in must be a whole number/],
    ];
    const results = await Promise.all(cases.map(([args]) => local(args)));
    results.forEach((r, i) => {
      const what = cases[i]![0].join(" ");
      expect(r.code, what).toBe(2);
      expect(r.stdout, what).toBe("");
      expect(r.errorJson().error.message, what).toMatch(cases[i]![1]);
    });
    const badKey = await cli(["apps", "list", "--json"], { env: { ...remoteEnv, HOOKRELAY_API_KEY: "hr_not_a_key" } });
    expect(badKey.code).toBe(4);
  });

  it("deletes an endpoint and then the application, in either mode", async () => {
    expect(ok(await local(["endpoints", "delete", all.id, "--app", "acme", "--yes"]))).toEqual({ success: true });
    refused(await both(["endpoints", "get", all.id, "--app", "acme"]), "not_found");
    expect(ok(await remote(["apps", "delete", "acme", "--yes"]))).toEqual({ success: true });
    refused(await both(["apps", "get", app.id]), "not_found");
    refused(await both(["messages", "list", "acme"]), "not_found");
  });
});
