import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useServer } from "../helpers/fixture";
import { tempDir } from "../helpers/server";
import { cli, modeEnvs, ok, refused, same } from "./helpers";

/**
 * `hookrelay topics`, `event-types` and `collections` (docs/cli.md, "Topics, event types and collections") with
 * --json in both modes, against one running server: remote (URL + API key)
 * and local (its data dir). What one mode writes the other reads back
 * identically; bad flags exit 2, API refusals exit 1 with the API's body.
 */
let remoteEnv: Record<string, string>;
let localEnv: Record<string, string>;
const files = tempDir("hookrelay-cli-catalog-");

useServer({}, (s) => ({ remoteEnv, localEnv } = modeEnvs(s.server, s.key)));

const remote = (args: string[], stdin?: string) => cli([...args, "--json"], { env: remoteEnv, stdin });
const local = (args: string[], stdin?: string) => cli([...args, "--json"], { env: localEnv, stdin });
const both = (args: string[]) => Promise.all([remote(args), local(args)]);

function file(name: string, value: unknown) {
  const p = join(files, name);
  writeFileSync(p, typeof value === "string" ? value : JSON.stringify(value));
  return p;
}

const ORDER_SCHEMA = { type: "object", required: ["id", "total"], properties: { id: { type: "string" }, total: { type: "integer" } } };

describe("event-types", () => {
  it("creates with --schema @file, reads back by name in both modes, refuses duplicates and invalid schemas", async () => {
    const created = ok(await remote(["event-types", "create", "--name", "order.created", "--schema", `@${file("order.schema.json", ORDER_SCHEMA)}`, "--description", "An order was placed"])).event_type;
    expect(created).toMatchObject({ name: "order.created", status: "active", json_schema: JSON.stringify(ORDER_SCHEMA) });
    expect(same(await both(["event-types", "get", "order.created"])).event_type).toEqual(created);
    expect(same(await both(["event-types", "get", created.id])).event_type).toEqual(created);

    refused(await both(["event-types", "create", "--name", "order.created"]), "conflict");
    const invalid = refused(await both(["event-types", "create", "--name", "order.bad", "--json-schema", '{"type": "objekt"}']), "validation_error");
    expect(invalid.details[0]).toMatchObject({ field: "body.json_schema" });
    expect(invalid.message).toMatch(/not a valid JSON Schema/);
  });

  it("updates the status and lists the same in both modes", async () => {
    const updated = ok(await local(["event-types", "update", "order.created", "--status", "deprecated"])).event_type;
    expect(updated.status).toBe("deprecated");
    const list = same(await both(["event-types", "list"]));
    expect(list.event_types).toEqual([updated]);
    expect(same(await both(["event-types", "list", "--status", "active"])).event_types).toEqual([]);
    ok(await remote(["event-types", "update", "order.created", "--status", "active"]));
  });
});

describe("topics", () => {
  let topic: any;

  it("creates a topic with a schema and addresses it by slug or id in both modes", async () => {
    topic = ok(await local(["topics", "create", "--name", "Order events", "--schema", JSON.stringify({ type: "object", required: ["id"] })])).topic;
    expect(topic).toMatchObject({ name: "Order events", slug: "order-events", status: "active", schema: '{"type":"object","required":["id"]}' });
    expect(same(await both(["topics", "get", "order-events"])).topic).toEqual(topic);
    expect(same(await both(["topics", "get", topic.id])).topic).toEqual(topic);
    expect(same(await both(["topics", "list"])).topics).toEqual([topic]);
    // Its own source, of type topic.
    expect(ok(await remote(["sources", "get", topic.source_id])).source).toMatchObject({ type: "topic", name: "Order events" });
  });

  it("publishes --data @file, inline and from stdin, with --event-type; the events hold the payloads", async () => {
    const order = { id: "ord_1", total: 4200 };
    const viaFile = ok(await remote(["topics", "publish", "order-events", "--event-type", "order.created", "--data", `@${file("order.json", order)}`]));
    expect(viaFile).toEqual({ success: true, event_id: expect.stringMatching(/^evt_/) });
    const inline = ok(await local(["topics", "publish", topic.id, "--data", '{"id": "ord_2", "total": 1}']));
    const stdin = ok(await local(["topics", "publish", "order-events", "--data", "-"], '{"id": "ord_3", "total": 2}'));

    const event = same(await both(["events", "get", viaFile.event_id]));
    expect(JSON.parse(event.body)).toEqual(order);
    expect(event).toMatchObject({ source_id: topic.source_id, event_type: "order.created" });
    expect(JSON.parse(ok(await remote(["events", "get", inline.event_id])).body)).toEqual({ id: "ord_2", total: 1 });
    expect(JSON.parse(ok(await remote(["events", "get", stdin.event_id])).body)).toEqual({ id: "ord_3", total: 2 });
  });

  it("refuses payloads against the topic's and the event type's schema (422), and a paused topic (409)", async () => {
    const noId = refused(await both(["topics", "publish", "order-events", "--data", '{"total": 1}']), "schema_violation");
    expect(noId.details).toMatchObject({ topic: "order-events", errors: [{ message: expect.stringContaining("id") }] });
    const badTotal = refused(await both(["topics", "publish", "order-events", "--event-type", "order.created", "--data", '{"id": "x", "total": "lots"}']), "schema_violation");
    expect(badTotal.details).toMatchObject({ event_type: "order.created", errors: [{ path: "/total" }] });
    // Without --json the schema's complaints are in the one error line, not only in the JSON body.
    const human = await cli(["topics", "publish", "order-events", "--data", '{"total": 1}'], { env: remoteEnv });
    expect(human.code).toBe(1);
    expect(human.stderr).toMatch(/error \(schema_violation\): .*\(.*must have required property 'id'/);

    expect(ok(await remote(["topics", "update", "order-events", "--status", "paused"])).topic.status).toBe("paused");
    refused(await both(["topics", "publish", "order-events", "--data", '{"id": "x"}']), "conflict");
    expect(ok(await local(["topics", "update", "order-events", "--status", "active"])).topic.status).toBe("active");
  });

  it("deletes in one mode; gone in the other", async () => {
    expect(ok(await local(["topics", "delete", "order-events", "--yes"]))).toEqual({ success: true });
    refused(await both(["topics", "get", topic.id]), "not_found");
    refused(await both(["sources", "get", topic.source_id]), "not_found");
  });
});

describe("collections", () => {
  let collection: any;
  const KEY = "team/a b"; // a key a URL must encode

  async function ingest(url: string, body: unknown) {
    const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    expect(res.status).toBe(200);
  }

  it("creates a collection with flags and a transform file; it is built from the events", async () => {
    const source = ok(await remote(["sources", "create", "--name", "Shop"])).source;
    for (let n = 1; n <= 5; n++) await ingest(source.ingest_url, { type: "customer.created", data: { id: `cus_${n}`, email: `c${n}@example.com` } });
    await ingest(source.ingest_url, { type: "customer.created", data: { id: KEY, email: "team@example.com" } });
    await ingest(source.ingest_url, { type: "customer.updated", data: { id: "cus_2", email: "two@example.org", plan: "pro" } });
    await ingest(source.ingest_url, { type: "customer.deleted", data: { id: "cus_5" } });
    await ingest(source.ingest_url, { type: "customer.updated", data: {} });

    collection = ok(
      await remote([
        "collections",
        "create",
        "--name",
        "Customers",
        "--source-id",
        source.id,
        "--key-path",
        "data.id",
        "--event-types",
        "customer.created,customer.updated",
        "--delete-event-types",
        "customer.deleted",
        "--transform-file",
        file("customer.jsonata", 'data.{"email": email, "plan": plan}'),
      ]),
    ).collection;
    expect(collection).toMatchObject({ name: "Customers", source_name: "Shop", key_path: "data.id", event_types: '["customer.created","customer.updated"]', delete_event_types: '["customer.deleted"]', backfill_total: 9 });

    const until = Date.now() + 30_000;
    let got: any;
    do {
      got = ok(await local(["collections", "get", collection.id])).collection;
      if (got.build_status === "live" && got.events_pending === 0) break;
      await Bun.sleep(100);
    } while (Date.now() < until);
    expect(got).toMatchObject({ build_status: "live", record_count: 5, events_processed: 9, events_missing_key: 1, backfill_processed: 9 });
    expect(same(await both(["collections", "get", collection.id])).collection).toEqual(got);
    expect(same(await both(["collections", "list", "--source-id", source.id])).collections).toEqual([got]);
  });

  it("lists records by cursor without repeats, searches, and gets one by a key with / and a space", async () => {
    const first = same(await both(["collections", "records", "list", collection.id, "--limit", "2"]));
    expect(first.records).toHaveLength(2);
    expect(first.has_more).toBe(true);
    const keys: string[] = first.records.map((r: { record_key: string }) => r.record_key);
    let cursor: string | null = first.next_cursor;
    while (cursor) {
      const page = same(await both(["collections", "records", "list", collection.id, "--limit", "2", "--cursor", cursor]));
      keys.push(...page.records.map((r: { record_key: string }) => r.record_key));
      cursor = page.next_cursor;
    }
    expect(keys).toEqual([KEY, "cus_4", "cus_3", "cus_2", "cus_1"]);

    const found = same(await both(["collections", "records", "list", collection.id, "--search", "two@example"]));
    expect(found.records.map((r: { record_key: string }) => r.record_key)).toEqual(["cus_2"]);
    expect(same(await both(["collections", "records", "list", collection.id, "--event-type", "customer.updated"])).records).toHaveLength(1);

    const record = same(await both(["collections", "records", "get", collection.id, KEY])).record;
    expect(record).toMatchObject({ record_key: KEY, event_type: "customer.created" });
    expect(JSON.parse(record.data)).toEqual({ email: "team@example.com" });
    refused(await both(["collections", "records", "get", collection.id, "cus_5"]), "not_found");
  });

  it("prints a record's changelog, newest first, also for a deleted record", async () => {
    const { changelog } = same(await both(["collections", "changelog", collection.id, "cus_2"]));
    expect(changelog.map((e: { change_type: string }) => e.change_type)).toEqual(["updated", "created"]);
    expect(JSON.parse(changelog[0].before_data)).toEqual({ email: "c2@example.com" });
    expect(JSON.parse(changelog[0].after_data)).toEqual({ email: "two@example.org", plan: "pro" });
    expect(same(await both(["collections", "changelog", collection.id, "cus_2", "--limit", "1"])).changelog).toEqual([changelog[0]]);
    expect(same(await both(["collections", "changelog", collection.id, "cus_5"])).changelog.map((e: { change_type: string }) => e.change_type)).toEqual(["deleted", "created"]);
    refused(await both(["collections", "changelog", collection.id, "nobody"]), "not_found");
  });

  it("prints tab-separated rows in a pipe: keys, types, and which fields an update changed", async () => {
    const rows = await cli(["collections", "records", "list", collection.id], { env: remoteEnv });
    expect(rows.code).toBe(0);
    expect(rows.stdout.trim().split("\n").map((l) => l.split("\t")[0])).toEqual([KEY, "cus_4", "cus_3", "cus_2", "cus_1"]);
    const log = await cli(["collections", "changelog", collection.id, "cus_2"], { env: localEnv });
    expect(log.code).toBe(0);
    const [updated, created] = log.stdout.trim().split("\n").map((l) => l.split("\t"));
    expect(updated!.slice(1, 4)).toEqual(["updated", "customer.updated", "email, plan"]);
    expect(created!.slice(1, 4)).toEqual(["created", "customer.created", ""]);
  });

  it("renames in one mode, deletes in the other; then it is gone", async () => {
    expect(ok(await local(["collections", "update", collection.id, "--name", "Shop customers"])).collection).toMatchObject({ name: "Shop customers", record_count: 5 });
    expect(ok(await remote(["collections", "delete", collection.id, "--yes"]))).toEqual({ success: true });
    refused(await both(["collections", "get", collection.id]), "not_found");
    refused(await both(["collections", "records", "list", collection.id]), "not_found");
  });
});

describe("bad input", () => {
  it("exits 2 for usage errors, with a JSON error under --json", async () => {
    const cases: [string[], RegExp][] = [
      [["topics", "publish", "order-events"], /required option '--data <json>'/],
      [["topics", "publish", "order-events", "--data", "{nope"], /--data must be JSON/],
      [["topics", "create"], /missing --name/],
      [["event-types", "create", "--name", "x", "--schema", "[nope"], /--schema must be JSON|--json-schema must be JSON/],
      [["collections", "create", "--name", "x"], /missing --source-id, --key-path/],
      [["collections", "records", "list", "c", "--limit", "0"], /--limit must be at least 1/],
      [["collections", "records", "get", "c"], /missing required argument 'key'/],
      [["collections", "changelog", "c", "k", "--limit", "many"], /--limit must be a whole number/],
    ];
    const results = await Promise.all(cases.map(([args]) => local(args)));
    results.forEach((r, i) => {
      const what = cases[i]![0].join(" ");
      expect(r.code, what).toBe(2);
      expect(r.stdout, what).toBe("");
      expect(r.errorJson().error.code, what).toBe("usage");
      expect(r.errorJson().error.message, what).toMatch(cases[i]![1]);
    });
  });

  it("exits 1 with the API's validation error for values the server refuses", async () => {
    const tooMany = refused(await both(["collections", "records", "list", "0123456789abcdef0123456789abcdef", "--limit", "500"]), "validation_error");
    expect(tooMany.details[0]).toMatchObject({ field: "query.limit" });
    const badSource = refused(await both(["collections", "create", "--source-id", "src_0123456789abcdef0123456789abcdef", "--key-path", "a..b"]), "validation_error");
    expect(badSource.details[0]).toMatchObject({ field: "body.key_path" });
    refused(await both(["topics", "update", "nope", "--status", "active"]), "not_found");
  });
});
