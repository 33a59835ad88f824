import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { connections } from "../../src/db/schema";
import { sandbox } from "../../src/rules/sandbox";
import { createSource, insertEvent, otherOrgKey, scopeOf, type TestScope } from "../helpers/rows";
import { call, type TestServer } from "../helpers/server";
import { useServer } from "../helpers/fixture";

let server: TestServer, key: string;
let scope: TestScope;
let source: { id: string; name: string };
let destination: { id: string; name: string };

useServer({}, (s) => ({ server, key } = s));
beforeAll(async () => {
  scope = await scopeOf(server, key);
  source = await createSource(server, key, "GitHub");
  destination = await newDestination("Orders API");
});

async function newDestination(name: string, extra: Record<string, unknown> = {}) {
  const res = await call(server, "POST", "/v1/destinations", { key, body: { name, url: "https://example.com/hook", ...extra } });
  if (res.status !== 201) throw new Error(`destination: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.destination as { id: string; name: string };
}

const create = (body: Record<string, unknown>, k = key) => call(server, "POST", "/v1/connections", { key: k, body });
const base = () => ({ source_id: source.id, destination_id: destination.id, name: "gh → orders" });
const storedRow = async (id: string) => (await server.deps.db.select().from(connections).where(eq(connections.id, id)))[0];

function expectValidation(res: { status: number; body: any }, field?: string) {
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe("validation_error");
  if (field) expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
}

describe("POST /v1/connections", () => {
  it("creates with every Connection field of the spec, names joined in", async () => {
    const res = await create(base());
    expect(res.status).toBe(201);
    const c = res.body.connection;
    expect(c.id).toMatch(/^[0-9a-f]{32}$/);
    expect(c).toEqual({
      id: c.id,
      org_id: scope.orgId,
      env_id: scope.envId,
      source_id: source.id,
      destination_id: destination.id,
      name: "gh → orders",
      description: null,
      enabled: 1,
      filter_rules: null,
      status: "active",
      event_count: 0,
      last_event_at: null,
      created_at: c.created_at,
      updated_at: c.created_at,
      transform_enabled: 0,
      transform_expression: null,
      source_name: "GitHub",
      destination_name: "Orders API",
      ordered: false,
      ordering_key: null,
      on_dlq: "continue",
    });
    expect(Date.parse(c.created_at)).not.toBeNaN();
    expect(await storedRow(c.id)).toMatchObject({ sourceId: source.id, destinationId: destination.id, enabled: 1 });
  });

  it("stores filter rules (normalized) as a JSON string and a transform, which it turns on", async () => {
    const res = await create({
      ...base(),
      description: "only pushes",
      filter_rules: [
        { field: "headers.X-GitHub-Event", operator: "eq", value: "push" },
        { field: "body.commits[0].id", operator: "exists" },
      ],
      transform_expression: '{"repo": repository.full_name}',
      enabled: false,
    });
    expect(res.status).toBe(201);
    const c = res.body.connection;
    expect(c).toMatchObject({ description: "only pushes", enabled: 0, status: "disabled", transform_enabled: 1, transform_expression: '{"repo": repository.full_name}' });
    expect(typeof c.filter_rules).toBe("string");
    expect(JSON.parse(c.filter_rules)).toEqual([
      { field: "headers.x-github-event", operator: "eq", value: "push" },
      { field: "body.commits.0.id", operator: "exists" },
    ]);
    const off = await create({ ...base(), transform_expression: "$", transform_enabled: false, filter_rules: [] });
    expect(off.body.connection).toMatchObject({ transform_enabled: 0, transform_expression: "$", filter_rules: "[]" });
  });

  it("accepts ids without their prefix and filter_rules as JSON text", async () => {
    const res = await create({ ...base(), source_id: source.id.slice(4), destination_id: destination.id.slice(4), filter_rules: '[{"field":"method","operator":"eq","value":"post"}]' });
    expect(res.status).toBe(201);
    expect(res.body.connection).toMatchObject({ source_id: source.id, destination_id: destination.id, filter_rules: '[{"field":"method","operator":"eq","value":"POST"}]' });
  });

  it("answers 404 not_found for a missing source or destination in any id shape, or one of another organization", async () => {
    const otherKey = await otherOrgKey(server);
    const foreignSource = await createSource(server, otherKey, "Foreign");
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ source_id: "src_" + "0".repeat(32) }, /Source/],
      [{ source_id: "0".repeat(32) }, /Source/],
      [{ source_id: "nope" }, /Source/],
      [{ source_id: destination.id }, /Source/],
      [{ source_id: foreignSource.id }, /Source/],
      [{ destination_id: "dst_" + "0".repeat(32) }, /Destination/],
      [{ destination_id: "garbage!" }, /Destination/],
      [{ destination_id: source.id }, /Destination/],
    ];
    for (const [patch, what] of cases) {
      const res = await create({ ...base(), ...patch });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe("not_found");
      expect(res.body.error.message).toMatch(what);
    }
    // The other organization cannot reach our destination either.
    const res = await create({ source_id: foreignSource.id, destination_id: destination.id, name: "x" }, otherKey);
    expect(res.status).toBe(404);
  });

  it("answers 400 validation_error for missing fields, wrong types, invalid rules and bad JSONata", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ name: undefined }, "body.name"],
      [{ name: "" }, "body.name"],
      [{ source_id: undefined }, "body.source_id"],
      [{ destination_id: 5 }, "body.destination_id"],
      [{ enabled: "yes" }, "body.enabled"],
      [{ enabled: 1 }, "body.enabled"],
      [{ transform_enabled: "true" }, "body.transform_enabled"],
      [{ description: 3 }, "body.description"],
      [{ filter_rules: { field: "body.a", operator: "eq", value: 1 } }, "body.filter_rules"],
      [{ filter_rules: [{ field: "body.a", operator: "like", value: 1 }] }, "body.filter_rules.0.operator"],
      [{ filter_rules: [{ field: "cookie.a", operator: "exists" }] }, "body.filter_rules.0.field"],
      [{ filter_rules: [{ field: "body.a", operator: "eq" }] }, "body.filter_rules.0.value"],
      [{ filter_rules: [{ field: "body.a", operator: "regex", value: "([" }] }, "body.filter_rules.0.value"],
      [{ filter_rules: "[{broken" }, "body.filter_rules"],
      [{ transform_expression: "{ a: " }, "body.transform_expression"],
      [{ transform_expression: 42 }, "body.transform_expression"],
      [{ transform_enabled: true }, "body.transform_expression"],
      [{ transform_enabled: true, transform_expression: "" }, "body.transform_expression"],
    ];
    for (const [patch, field] of cases) {
      expectValidation(await create({ ...base(), ...patch }), field);
    }
    const bad = await create({ ...base(), transform_expression: "{ a: " });
    expect(bad.body.error.message).toMatch(/Invalid JSONata expression: .*position 5/);
    expectValidation(await create("{nope" as never));
  });

  it("creates only in the caller's scope: another env_id is 404", async () => {
    expect((await create({ ...base(), org_id: scope.orgId, env_id: scope.envId })).status).toBe(201);
    const res = await create({ ...base(), env_id: "e".repeat(32) });
    expect(res.status).toBe(404);
  });

  it("needs authentication", async () => {
    expect((await call(server, "POST", "/v1/connections", { body: base() })).status).toBe(401);
  });
});

describe("GET /v1/connections", () => {
  it("lists newest first and filters by source_id, destination_id and enabled", async () => {
    const src2 = await createSource(server, key, "Stripe");
    const dst2 = await newDestination("Billing");
    const a = (await create({ source_id: src2.id, destination_id: dst2.id, name: "a" })).body.connection;
    const b = (await create({ source_id: src2.id, destination_id: destination.id, name: "b", enabled: false })).body.connection;

    const all = await call(server, "GET", "/v1/connections", { key });
    expect(all.status).toBe(200);
    const ids = all.body.connections.map((c: { id: string }) => c.id);
    expect(ids.indexOf(b.id)).toBeLessThan(ids.indexOf(a.id));

    const bySource = await call(server, "GET", `/v1/connections?source_id=${src2.id}`, { key });
    expect(bySource.body.connections.map((c: { id: string }) => c.id)).toEqual([b.id, a.id]);
    expect(bySource.body.connections[1]).toMatchObject({ source_name: "Stripe", destination_name: "Billing" });
    const byBare = await call(server, "GET", `/v1/connections?source_id=${src2.id.slice(4)}&destination_id=${dst2.id.slice(4)}`, { key });
    expect(byBare.body.connections.map((c: { id: string }) => c.id)).toEqual([a.id]);
    for (const [q, want] of [
      ["enabled=0", [b.id]],
      ["enabled=false", [b.id]],
      ["enabled=1", [a.id]],
      ["enabled=true", [a.id]],
    ] as const) {
      const res = await call(server, "GET", `/v1/connections?source_id=${src2.id}&${q}`, { key });
      expect(res.body.connections.map((c: { id: string }) => c.id)).toEqual(want);
    }
  });

  it("gives an empty list for ids that cannot exist and 400 for a bad enabled value", async () => {
    for (const q of ["source_id=nope", "destination_id=dst_0", `source_id=src_${"9".repeat(32)}`]) {
      expect(await call(server, "GET", `/v1/connections?${q}`, { key })).toMatchObject({ status: 200, body: { connections: [] } });
    }
    expectValidation(await call(server, "GET", "/v1/connections?enabled=maybe", { key }), "query.enabled");
  });

  it("shows another organization none of ours", async () => {
    const res = await call(server, "GET", "/v1/connections", { key: await otherOrgKey(server) });
    expect(res).toMatchObject({ status: 200, body: { connections: [] } });
  });
});

describe("GET /v1/connections/{id}", () => {
  it("reads one, and 404s unknown ids in any shape and other organizations' connections", async () => {
    const c = (await create(base())).body.connection;
    const got = await call(server, "GET", `/v1/connections/${c.id}`, { key });
    expect(got).toMatchObject({ status: 200, body: { connection: c } });
    const otherKey = await otherOrgKey(server);
    for (const [id, k] of [
      ["0".repeat(32), key],
      ["dst_" + c.id, key],
      ["xyz", key],
      [c.id.toUpperCase(), key],
      [c.id, otherKey],
    ] as const) {
      const res = await call(server, "GET", `/v1/connections/${id}`, { key: k });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe("not_found");
    }
  });
});

describe("PATCH /v1/connections/{id}", () => {
  it("updates only what is given; enabled drives status; names follow a new destination", async () => {
    const c = (await create({ ...base(), description: "d", filter_rules: [{ field: "method", operator: "eq", value: "POST" }] })).body.connection;
    const dst2 = await newDestination("Warehouse");
    await Bun.sleep(5);
    const res = await call(server, "PATCH", `/v1/connections/${c.id}`, { key, body: { name: "renamed", enabled: false, destination_id: dst2.id.slice(4) } });
    expect(res.status).toBe(200);
    expect(res.body.connection).toMatchObject({ name: "renamed", description: "d", enabled: 0, status: "disabled", destination_id: dst2.id, destination_name: "Warehouse", source_name: "GitHub", filter_rules: c.filter_rules, created_at: c.created_at });
    expect(res.body.connection.updated_at > c.updated_at).toBe(true);
    expect((await call(server, "GET", `/v1/connections/${c.id}`, { key })).body.connection).toEqual(res.body.connection);

    const cleared = await call(server, "PATCH", `/v1/connections/${c.id}`, { key, body: { filter_rules: null, description: null, enabled: true } });
    expect(cleared.body.connection).toMatchObject({ filter_rules: null, description: null, enabled: 1, status: "active" });
  });

  it("turns a transform on with an expression, off with null, and checks it", async () => {
    const c = (await create(base())).body.connection;
    const on = await call(server, "PATCH", `/v1/connections/${c.id}`, { key, body: { transform_expression: "{'x': a}" } });
    expect(on.body.connection).toMatchObject({ transform_enabled: 1, transform_expression: "{'x': a}" });
    const paused = await call(server, "PATCH", `/v1/connections/${c.id}`, { key, body: { transform_enabled: false } });
    expect(paused.body.connection).toMatchObject({ transform_enabled: 0, transform_expression: "{'x': a}" });
    const back = await call(server, "PATCH", `/v1/connections/${c.id}`, { key, body: { transform_enabled: true } });
    expect(back.body.connection).toMatchObject({ transform_enabled: 1 });
    const off = await call(server, "PATCH", `/v1/connections/${c.id}`, { key, body: { transform_expression: null } });
    expect(off.body.connection).toMatchObject({ transform_enabled: 0, transform_expression: null });

    expectValidation(await call(server, "PATCH", `/v1/connections/${c.id}`, { key, body: { transform_enabled: true } }), "body.transform_expression");
    expectValidation(await call(server, "PATCH", `/v1/connections/${c.id}`, { key, body: { transform_expression: "(((" } }), "body.transform_expression");
    expectValidation(await call(server, "PATCH", `/v1/connections/${c.id}`, { key, body: { filter_rules: [{ field: "body.a", operator: "in", value: 3 }] } }), "body.filter_rules.0.value");
    expectValidation(await call(server, "PATCH", `/v1/connections/${c.id}`, { key, body: { name: "" } }), "body.name");
    // Nothing of the refused patches was stored.
    expect((await call(server, "GET", `/v1/connections/${c.id}`, { key })).body.connection).toMatchObject({ transform_enabled: 0, transform_expression: null, filter_rules: null, name: c.name });
  });

  it("answers 404 for unknown connections and for sources or destinations outside the scope", async () => {
    const c = (await create(base())).body.connection;
    expect((await call(server, "PATCH", `/v1/connections/${"0".repeat(32)}`, { key, body: { name: "x" } })).status).toBe(404);
    expect((await call(server, "PATCH", `/v1/connections/${c.id}`, { key: await otherOrgKey(server), body: { name: "x" } })).status).toBe(404);
    expect((await call(server, "PATCH", `/v1/connections/${c.id}`, { key, body: { source_id: "src_" + "1".repeat(32) } })).status).toBe(404);
    expect((await call(server, "PATCH", `/v1/connections/${c.id}`, { key, body: { destination_id: "dst_" + "1".repeat(32) } })).status).toBe(404);
  });
});

describe("DELETE /v1/connections/{id}", () => {
  it("deletes once, then 404; deleting a destination removes its connections", async () => {
    const c = (await create(base())).body.connection;
    expect((await call(server, "DELETE", `/v1/connections/${c.id}`, { key: await otherOrgKey(server) })).status).toBe(404);
    expect(await call(server, "DELETE", `/v1/connections/${c.id}`, { key })).toMatchObject({ status: 200, body: { success: true } });
    expect((await call(server, "GET", `/v1/connections/${c.id}`, { key })).status).toBe(404);
    expect((await call(server, "DELETE", `/v1/connections/${c.id}`, { key })).status).toBe(404);

    const dst = await newDestination("Short-lived");
    const linked = (await create({ ...base(), destination_id: dst.id })).body.connection;
    expect((await call(server, "DELETE", `/v1/destinations/${dst.id}`, { key })).status).toBe(200);
    expect((await call(server, "GET", `/v1/connections/${linked.id}`, { key })).status).toBe(404);
    expect(await storedRow(linked.id)).toBeUndefined();
  });
});

describe("POST /v1/connections/test-transform", () => {
  it("runs an expression against a stored event with $headers, $query and $method", async () => {
    const eventId = await insertEvent(server, scope, source.id, {
      body: JSON.stringify({ repository: { full_name: "acme/app" }, commits: [{ id: "c1" }, { id: "c2" }] }),
      headers: { "x-github-event": "push" },
      query: '{"tenant":"t1"}',
      method: "POST",
    });
    const expression = '{"repo": repository.full_name, "n": $count(commits), "event": $headers."x-github-event", "tenant": $query.tenant, "m": $method}';
    for (const id of [eventId, eventId.slice(4)]) {
      const res = await call(server, "POST", "/v1/connections/test-transform", { key, body: { transform_expression: expression, event_id: id } });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ result: { repo: "acme/app", n: 2, event: "push", tenant: "t1", m: "POST" } });
    }
  });

  it("runs against a given body and headers", async () => {
    const res = await call(server, "POST", "/v1/connections/test-transform", { key, body: { transform_expression: "$headers.'x-a' & ':' & a", body: { a: "b" }, headers: { "X-A": "h" } } });
    expect(res).toMatchObject({ status: 200, body: { result: "h:b" } });
    const nothing = await call(server, "POST", "/v1/connections/test-transform", { key, body: { transform_expression: "missing", body: {} } });
    expect(nothing).toMatchObject({ status: 200, body: { result: null } });
  });

  it("answers 400 with JSONata's message for syntax errors and evaluation errors", async () => {
    const syntax = await call(server, "POST", "/v1/connections/test-transform", { key, body: { transform_expression: "{ a: ", body: {} } });
    expectValidation(syntax, "body.transform_expression");
    expect(syntax.body.error.message).toMatch(/Expected "}" before end of expression/);
    const runtime = await call(server, "POST", "/v1/connections/test-transform", { key, body: { transform_expression: "$nope()", body: {} } });
    expectValidation(runtime, "body.transform_expression");
    expect(runtime.body.error.message).toMatch(/non-function/);
  });

  const limited = (res: { status: number; body: any }, limit: "time" | "memory") => {
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe("transform_limit_exceeded");
    expect(res.body.error.details[0]).toMatchObject({ field: "body.transform_expression", limit });
    return res.body.error.message as string;
  };

  it("answers 422 transform_limit_exceeded when a transform runs out of time or memory", async () => {
    const pad = await call(server, "POST", "/v1/connections/test-transform", { key, body: { transform_expression: '$length($pad("", 100000000, "a"))', body: {} } });
    expect(limited(pad, "memory")).toMatch(/memory limit \(\$pad's result would be 100000000 characters long, over the 10000000 limit\)/);
    const loop = await call(server, "POST", "/v1/connections/test-transform", { key, body: { transform_expression: "($f := function($n) { $f($n + 1) }; $f(0))", body: {} } });
    expect(limited(loop, "time")).toMatch(/ran longer than the 1000 ms time limit/);
    const sequence = await call(server, "POST", "/v1/connections/test-transform", { key, body: { transform_expression: "$count([1..2000000])", body: {} } });
    expect(limited(sequence, "memory")).toMatch(/maximum sequence length of 1,000,000 was exceeded, the expression asked for 2000000/);
  });

  it("answers 422 for a catastrophically backtracking regex, and /healthz answers while it runs", async () => {
    const expression = "$contains(s, /(a*)*b/) or $contains(s, /(a*)*c/) or $contains(s, /(a*)*d/) or $contains(s, /(a*)*e/)";
    let done = false;
    const pending = call(server, "POST", "/v1/connections/test-transform", { key, body: { transform_expression: expression, body: { s: "a".repeat(100_000) } } }).finally(() => {
      done = true;
    });
    // The regex runs in the sandbox (this server runs in the test's process): once it is running there,
    // the server's own thread stays free for other requests.
    const deadline = Date.now() + 20_000;
    while (sandbox().busy() === 0 && !done && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    const health = await server.request("/healthz");
    expect(health.status).toBe(200);
    const answeredWhileRunning = !done;
    const res = await pending;
    expect(limited(res, "time")).toMatch(/ran longer than the 1000 ms time limit \(check for an infinite loop, runaway recursion or a backtracking regex\)/);
    expect(answeredWhileRunning).toBe(true);
    // The terminated worker was replaced: the next preview works.
    expect(await call(server, "POST", "/v1/connections/test-transform", { key, body: { transform_expression: "a", body: { a: 1 } } })).toMatchObject({ status: 200, body: { result: 1 } });
  });

  it("answers 404 for unknown events or another organization's, 400 without event or body", async () => {
    const eventId = await insertEvent(server, scope, source.id, { body: "{}" });
    const otherKey = await otherOrgKey(server);
    for (const [id, k] of [
      ["evt_" + "0".repeat(32), key],
      ["bogus", key],
      [eventId, otherKey],
    ] as const) {
      const res = await call(server, "POST", "/v1/connections/test-transform", { key: k, body: { transform_expression: "$", event_id: id } });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe("not_found");
    }
    expectValidation(await call(server, "POST", "/v1/connections/test-transform", { key, body: { transform_expression: "$" } }), "body.event_id");
    expectValidation(await call(server, "POST", "/v1/connections/test-transform", { key, body: { event_id: eventId } }), "body.transform_expression");
  });
});

describe("GET /v1/openapi.json", () => {
  it("documents the connection operations", async () => {
    const res = await call(server, "GET", "/v1/openapi.json", { key });
    expect(Object.keys(res.body.paths)).toEqual(expect.arrayContaining(["/connections", "/connections/{id}", "/connections/test-transform"]));
    expect(res.body.paths["/connections"].post.requestBody.content["application/json"].schema.required).toEqual(expect.arrayContaining(["source_id", "destination_id", "name"]));
  });
});
