import { describe, expect, it } from "vitest";
import { createSourceId, sendEvent } from "../helpers/delivery";
import { hmacHex, ingest } from "../helpers/ingest";
import { call, type TestServer } from "../helpers/server";
import { useServer } from "../helpers/fixture";
import { changelog, createCollection, getCollection, record, records, waitBuilt } from "./helpers";

/**
 * Collections built by the running server's builder from events received
 * through the real ingest URL (docs/catalog.md, "How a collection is built").
 */
let server: TestServer, key: string;

useServer({}, (s) => ({ server, key } = s));

const customer = (type: string, id: string, extra: Record<string, unknown> = {}) => ({ type, data: { id, ...extra } });

describe("records from ingested events", () => {
  it("creates a record per key and updates it in received order, each change in the changelog with before and after", async () => {
    const source = await createSourceId(server, key);
    const c = await createCollection(server, key, { source_id: source, key_path: "data.id" });
    const e1 = await sendEvent(server, source, customer("customer.created", "cus_1", { email: "a@example.com" }));
    const e2 = await sendEvent(server, source, customer("customer.created", "cus_2", { email: "b@example.com" }));
    const e3 = await sendEvent(server, source, customer("customer.updated", "cus_1", { email: "c@example.com" }));
    const built = await waitBuilt(server, key, c.id);
    expect(built).toMatchObject({ record_count: 2, events_processed: 3, position_event_id: e3, events_missing_key: 0 });

    const r1 = await record(server, key, c.id, "cus_1");
    expect(r1.status).toBe(200);
    expect(r1.body.record).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{32}$/),
      collection_id: c.id,
      org_id: c.org_id,
      env_id: c.env_id,
      record_key: "cus_1",
      data: JSON.stringify(customer("customer.updated", "cus_1", { email: "c@example.com" })),
      event_type: "customer.updated",
      source_event_id: e3,
      source_event_at: expect.any(String),
      created_at: expect.any(String),
      updated_at: r1.body.record.source_event_at,
    });
    const log = await changelog(server, key, c.id, "cus_1");
    expect(log).toEqual([
      {
        id: expect.any(String),
        collection_id: c.id,
        record_id: r1.body.record.id,
        record_key: "cus_1",
        change_type: "updated",
        before_data: JSON.stringify(customer("customer.created", "cus_1", { email: "a@example.com" })),
        after_data: JSON.stringify(customer("customer.updated", "cus_1", { email: "c@example.com" })),
        event_id: e3,
        event_type: "customer.updated",
        created_at: expect.any(String),
      },
      expect.objectContaining({ change_type: "created", before_data: null, after_data: JSON.stringify(customer("customer.created", "cus_1", { email: "a@example.com" })), event_id: e1 }),
    ]);
    expect((await changelog(server, key, c.id, "cus_2")).map((e) => [e.change_type, e.event_id])).toEqual([["created", e2]]);
    expect((await changelog(server, key, c.id, "cus_1", 1)).map((e) => e.change_type)).toEqual(["updated"]);
  });

  it("writes nothing for an event whose data equals the record's (keys in any order)", async () => {
    const source = await createSourceId(server, key);
    const c = await createCollection(server, key, { source_id: source, key_path: "id" });
    await sendEvent(server, source, '{"id":"k","a":1,"b":{"x":1,"y":2}}');
    await sendEvent(server, source, '{"id":"k","a":1,"b":{"x":1,"y":2}}');
    const last = await sendEvent(server, source, '{"b":{"y":2,"x":1},"a":1,"id":"k"}');
    const built = await waitBuilt(server, key, c.id);
    expect(built.events_processed).toBe(3);
    expect(built.position_event_id).toBe(last);
    const log = await changelog(server, key, c.id, "k");
    expect(log.map((e) => e.change_type)).toEqual(["created"]);
  });

  it("keys numbers as text; counts events without a key and shows the last problem", async () => {
    const source = await createSourceId(server, key);
    const c = await createCollection(server, key, { source_id: source, key_path: "data.id" });
    await sendEvent(server, source, { data: { id: 42 } });
    const noKey = await sendEvent(server, source, { data: { name: "anonymous" } });
    await sendEvent(server, source, { data: { id: { nested: true } } });
    await sendEvent(server, source, "plain text body");
    const built = await waitBuilt(server, key, c.id);
    expect(built).toMatchObject({ record_count: 1, events_processed: 4, events_missing_key: 3, last_error: expect.stringContaining("data.id") });
    expect(built.last_error_event_id).not.toBe(noKey); // the last keyless one was the text body
    expect((await record(server, key, c.id, "42")).status).toBe(200);
  });
});

describe("deletes", () => {
  it("removes the record on a delete_event_type; its changelog stays readable; the key can come back", async () => {
    const source = await createSourceId(server, key);
    const c = await createCollection(server, key, { source_id: source, key_path: "data.id", event_types: ["customer.created", "customer.updated"], delete_event_types: ["customer.deleted"] });
    await sendEvent(server, source, customer("customer.created", "cus_d", { v: 1 }));
    await sendEvent(server, source, customer("customer.created", "cus_keep", { v: 1 }));
    const del = await sendEvent(server, source, customer("customer.deleted", "cus_d"));
    // Deleting what does not exist changes nothing.
    await sendEvent(server, source, customer("customer.deleted", "cus_never"));
    let built = await waitBuilt(server, key, c.id);
    expect(built.record_count).toBe(1);
    expect((await record(server, key, c.id, "cus_d")).status).toBe(404);
    expect((await records(server, key, c.id)).records.map((r) => r.record_key)).toEqual(["cus_keep"]);
    const log = await changelog(server, key, c.id, "cus_d");
    expect(log[0]).toMatchObject({ change_type: "deleted", before_data: JSON.stringify(customer("customer.created", "cus_d", { v: 1 })), after_data: "null", event_id: del, event_type: "customer.deleted" });
    expect((await call(server, "GET", `/v1/collections/${c.id}/records/cus_never/changelog`, { key })).status).toBe(404);

    await sendEvent(server, source, customer("customer.created", "cus_d", { v: 2 }));
    built = await waitBuilt(server, key, c.id);
    expect(built.record_count).toBe(2);
    expect((await changelog(server, key, c.id, "cus_d")).map((e) => e.change_type)).toEqual(["created", "deleted", "created"]);
  });
});

describe("event_types filtering", () => {
  it("applies only the listed types (and the delete types), counting the others as ignored", async () => {
    const source = await createSourceId(server, key);
    const c = await createCollection(server, key, { source_id: source, key_path: "data.id", event_types: ["customer.created"], delete_event_types: ["customer.deleted"] });
    await sendEvent(server, source, customer("customer.created", "a"));
    await sendEvent(server, source, customer("invoice.paid", "b"));
    await sendEvent(server, source, { data: { id: "untyped" } });
    await sendEvent(server, source, customer("customer.created", "c"));
    await sendEvent(server, source, customer("customer.deleted", "c"));
    const built = await waitBuilt(server, key, c.id);
    expect(built).toMatchObject({ record_count: 1, events_processed: 5, events_ignored: 2 });
    expect((await records(server, key, c.id)).records.map((r) => r.record_key)).toEqual(["a"]);
  });

  it("reads the type at event_type_path, or the type ingest stored (a topic publish's event_type)", async () => {
    const topic = await call(server, "POST", "/v1/topics", { key, body: { name: "Customers feed" } });
    const c = await createCollection(server, key, { source_id: topic.body.topic.source_id, key_path: "id", event_types: ["customer.upserted"], delete_event_types: ["customer.removed"] });
    const publish = (event_type: string, payload: unknown) => call(server, "POST", `/v1/topics/${topic.body.topic.id}/publish`, { key, body: { event_type, payload } });
    expect((await publish("customer.upserted", { id: "p1", plan: "pro" })).status).toBe(200);
    await publish("customer.upserted", { id: "p2", plan: "free" });
    await publish("something.else", { id: "p3" });
    await publish("customer.removed", { id: "p2" });
    const built = await waitBuilt(server, key, c.id);
    expect(built).toMatchObject({ record_count: 1, events_ignored: 1 });
    expect(JSON.parse((await record(server, key, c.id, "p1")).body.record.data)).toEqual({ id: "p1", plan: "pro" });

    const byPath = await createCollection(server, key, { source_id: topic.body.topic.source_id, key_path: "id", event_type_path: "kind", event_types: ["vip"] });
    await publish("customer.upserted", { id: "p9", kind: "vip" });
    expect((await waitBuilt(server, key, byPath.id)).record_count).toBe(1);
  });
});

describe("transform", () => {
  it("stores the JSONata transform's result as the data; a failing transform is counted and shown", async () => {
    const source = await createSourceId(server, key);
    const c = await createCollection(server, key, { source_id: source, key_path: "data.id", transform_expression: '{"email": data.email, "plan": $uppercase(data.plan), "via": $headers."x-via"}' });
    await sendEvent(server, source, customer("customer.created", "t1", { email: "t@example.com", plan: "pro", ignored: "x" }), { headers: { "x-via": "test" } });
    const failing = await sendEvent(server, source, customer("customer.created", "t2", { plan: 5 }));
    const built = await waitBuilt(server, key, c.id);
    expect(built).toMatchObject({ record_count: 1, events_transform_failed: 1, last_error_event_id: failing, last_error: expect.stringMatching(/Transform failed/) });
    expect(JSON.parse((await record(server, key, c.id, "t1")).body.record.data)).toEqual({ email: "t@example.com", plan: "PRO", via: "test" });
  });
});

describe("backfill", () => {
  it("builds a collection created after its events arrived from the stored events, with its progress visible", async () => {
    const source = await createSourceId(server, key);
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) ids.push(await sendEvent(server, source, customer("customer.updated", `b${i % 10}`, { n: i })));
    const c = await createCollection(server, key, { source_id: source, key_path: "data.id" });
    expect(c).toMatchObject({ build_status: "backfilling", backfill_total: 40, backfill_processed: 0, events_pending: 40, position_event_id: null, backfill_completed_at: null });
    const after = await sendEvent(server, source, customer("customer.updated", "b0", { n: 40 }));
    const built = await waitBuilt(server, key, c.id);
    expect(built).toMatchObject({ build_status: "live", backfill_total: 40, backfill_processed: 40, events_processed: 41, record_count: 10, position_event_id: after });
    expect(built.backfill_completed_at).toEqual(expect.any(String));
    expect(JSON.parse((await record(server, key, c.id, "b0")).body.record.data).data.n).toBe(40);
    expect((await changelog(server, key, c.id, "b3")).map((e) => JSON.parse(e.after_data).data.n)).toEqual([33, 23, 13, 3]);
  });

  it("is live at once for a source without events", async () => {
    const source = await createSourceId(server, key);
    const c = await createCollection(server, key, { source_id: source, key_path: "id" });
    expect(c).toMatchObject({ build_status: "live", backfill_total: 0, events_pending: 0 });
  });
});

describe("received order under concurrent ingest", () => {
  it("leaves each record at its newest event and chains every changelog entry onto the one before", async () => {
    const source = await createSourceId(server, key);
    const c = await createCollection(server, key, { source_id: source, key_path: "k" });
    let n = 0;
    const sender = async () => {
      while (n < 300) {
        const i = n++;
        await sendEvent(server, source, { k: `key${i % 5}`, n: i });
      }
    };
    await Promise.all([sender(), sender(), sender(), sender(), sender(), sender()]);
    const built = await waitBuilt(server, key, c.id);
    expect(built.events_processed).toBe(300);
    for (let k = 0; k < 5; k++) {
      const log = await changelog(server, key, c.id, `key${k}`);
      expect(log).toHaveLength(60);
      // Newest first: each entry's before is the after of the entry below it.
      for (let i = 0; i < log.length - 1; i++) expect(log[i].before_data).toBe(log[i + 1].after_data);
      const events = await call(server, "GET", `/v1/events?source_id=${source}&search=${encodeURIComponent(`"key${k}"`)}&limit=1`, { key });
      expect((await record(server, key, c.id, `key${k}`)).body.record.source_event_id).toBe(events.body.events[0].id);
      expect(log[0].event_id).toBe(events.body.events[0].id);
    }
  });
});

describe("events refused at ingest", () => {
  it("are not built: a failed signature or a duplicate never changes a record", async () => {
    const secret = "whsec-test";
    const source = await createSourceId(server, key, { verification_type: "hmac-sha256", verification_secret: secret, verification_header: "x-signature", dedup_enabled: true, dedup_strategy: "body_hash" });
    const c = await createCollection(server, key, { source_id: source, key_path: "id" });
    const good = '{"id":"s1","v":1}';
    expect((await ingest(server, source, { body: good, headers: { "x-signature": hmacHex("sha256", secret, good) } })).status).toBe(200);
    expect((await ingest(server, source, { body: good, headers: { "x-signature": hmacHex("sha256", secret, good) } })).body.duplicate).toBe(true);
    expect((await ingest(server, source, { body: '{"id":"s1","v":666}', headers: { "x-signature": "sha256=00" } })).status).toBe(401);
    const built = await waitBuilt(server, key, c.id);
    expect(built.events_processed).toBe(1);
    expect((await changelog(server, key, c.id, "s1")).map((e) => e.change_type)).toEqual(["created"]);
  });
});

describe("PATCH that changes how records are built", () => {
  it("rebuilds from the stored events under the new definition; a rename does not", async () => {
    const source = await createSourceId(server, key);
    const c = await createCollection(server, key, { source_id: source, key_path: "a" });
    await sendEvent(server, source, { a: "x", b: "1" });
    await sendEvent(server, source, { a: "y", b: "1" });
    expect((await waitBuilt(server, key, c.id)).record_count).toBe(2);
    const renamed = await call(server, "PATCH", `/v1/collections/${c.id}`, { key, body: { name: "Renamed" } });
    expect(renamed.body.collection).toMatchObject({ name: "Renamed", record_count: 2, events_processed: 2 });
    const rekeyed = await call(server, "PATCH", `/v1/collections/${c.id}`, { key, body: { key_path: "b" } });
    expect(rekeyed.status).toBe(200);
    expect(rekeyed.body.collection).toMatchObject({ key_path: "b", build_status: "backfilling", backfill_total: 2 });
    const built = await waitBuilt(server, key, c.id);
    expect(built).toMatchObject({ record_count: 1, events_processed: 2 });
    expect((await records(server, key, c.id)).records.map((r) => r.record_key)).toEqual(["1"]);
    expect((await call(server, "GET", `/v1/collections/${c.id}/records/x/changelog`, { key })).status).toBe(404);
  });
});

describe("GET /v1/collections/{id}/records", () => {
  it("searches key and data, filters by event_type, and pages by cursor without repeats while records change", async () => {
    const source = await createSourceId(server, key);
    const c = await createCollection(server, key, { source_id: source, key_path: "data.id" });
    for (let i = 0; i < 120; i++) await sendEvent(server, source, customer(i % 3 === 0 ? "customer.vip" : "customer.created", `cus_${String(i).padStart(3, "0")}`, { email: `user${i}@example.com` }));
    await waitBuilt(server, key, c.id);

    const seen: string[] = [];
    let page = await records(server, key, c.id, { limit: "50" });
    expect(page.records).toHaveLength(50);
    expect(page.has_more).toBe(true);
    // Newest first.
    expect(page.records[0].record_key).toBe("cus_119");
    seen.push(...page.records.map((r) => r.record_key));
    // Updates and new records between pages neither repeat nor shift what is left.
    await sendEvent(server, source, customer("customer.created", "cus_001", { email: "changed@example.com" }));
    await sendEvent(server, source, customer("customer.created", "cus_new", { email: "new@example.com" }));
    await waitBuilt(server, key, c.id);
    while (page.next_cursor) {
      page = await records(server, key, c.id, { limit: "50", cursor: page.next_cursor });
      seen.push(...page.records.map((r) => r.record_key));
    }
    expect(page.has_more).toBe(false);
    expect(seen).toHaveLength(120);
    expect(new Set(seen).size).toBe(120);

    expect((await records(server, key, c.id, { search: "cus_04" })).records.map((r) => r.record_key).sort()).toEqual([...Array(10)].map((_, i) => `cus_04${i}`));
    expect((await records(server, key, c.id, { search: "user7@" })).records.map((r) => r.record_key)).toEqual(["cus_007"]);
    // LIKE wildcards in a search are literal.
    expect((await records(server, key, c.id, { search: "cus%" })).records).toEqual([]);
    const vip = await records(server, key, c.id, { event_type: "customer.vip" });
    expect(vip.records).toHaveLength(40);
    expect(vip.records.every((r) => r.event_type === "customer.vip")).toBe(true);
    const searchedPages = await records(server, key, c.id, { search: "cus_1", limit: "7" });
    expect(searchedPages.has_more).toBe(true);
    const rest = await records(server, key, c.id, { search: "cus_1", limit: "100", cursor: searchedPages.next_cursor! });
    expect(new Set([...searchedPages.records, ...rest.records].map((r) => r.record_key)).size).toBe(7 + rest.records.length);
    expect(7 + rest.records.length).toBe(20);
  });

  it("answers 400 for a bad limit or cursor and 404 for unknown collections and keys", async () => {
    const source = await createSourceId(server, key);
    const c = await createCollection(server, key, { source_id: source, key_path: "id" });
    for (const q of ["limit=0", "limit=101", "limit=x", "cursor=%%%"]) {
      const res = await call(server, "GET", `/v1/collections/${c.id}/records?${q}`, { key });
      expect(res.status, q).toBe(400);
    }
    expect((await call(server, "GET", `/v1/collections/${c.id}/records/${"nope"}/changelog?limit=500`, { key })).status).toBe(400);
    for (const path of [`/v1/collections/${"e".repeat(32)}/records`, `/v1/collections/zzz/records/a`, `/v1/collections/${"e".repeat(32)}/records/a/changelog`, `/v1/collections/${c.id}/records/missing`, `/v1/collections/${c.id}/records/missing/changelog`]) {
      const res = await call(server, "GET", path, { key });
      expect(res.status, path).toBe(404);
      expect(res.body.error.code).toBe("not_found");
    }
  });

  it("finds keys holding slashes, spaces and unicode", async () => {
    const source = await createSourceId(server, key);
    const c = await createCollection(server, key, { source_id: source, key_path: "id" });
    for (const id of ["a/b", "with space", "ключ", "q?x=1#f"]) await sendEvent(server, source, { id });
    await waitBuilt(server, key, c.id);
    for (const id of ["a/b", "with space", "ключ", "q?x=1#f"]) {
      const res = await record(server, key, c.id, id);
      expect(res.status, id).toBe(200);
      expect(res.body.record.record_key).toBe(id);
      expect((await changelog(server, key, c.id, id))[0].change_type).toBe("created");
    }
  });
});

describe("GET /v1/collections/{id} while building", () => {
  it("shows the builder's position and what is pending", async () => {
    const source = await createSourceId(server, key);
    const c = await createCollection(server, key, { source_id: source, key_path: "id" });
    const id = await sendEvent(server, source, { id: "x" });
    const built = await waitBuilt(server, key, c.id);
    expect(built).toMatchObject({ position_event_id: id, position_at: expect.any(String), events_pending: 0 });
    expect(await getCollection(server, key, c.id)).toMatchObject({ record_count: 1 });
  });
});
