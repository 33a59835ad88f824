/**
 * The catalogue in the admin UI (docs/admin-ui.md, "Topics, event types, collections"), in headless chromium
 * against the compiled binary: event types with a schema editor that checks
 * JSON as you type and shows ajv's refusal next to the field; topics created
 * with a schema, paused and resumed, a test payload published (refused by
 * the topic's and the event type's schema, then accepted and found on the
 * Events page) and deleted; a collection created on a source with stored
 * events (backfilled, its counters and last error shown), its records
 * searched and paged by cursor, a record's changelog as a timeline of diffs,
 * a deleted record's history, the rebuild and delete confirmations.
 *
 * Data the pages show is created through the API (the browser's session) or
 * sent to a real ingest URL; what is tested goes through the UI.
 */
import { describe, expect, it } from "vitest";
import type { Sink } from "../helpers/sink";
import { screenshot, type Browser, type Hookrelay, sessionCall } from "./helpers";
import { useBinaryAndBrowser } from "./fixture";

let server: Hookrelay;
let browser: Browser;
let sink: Sink;
const ids = { topic: "", topicSource: "", shop: "", ingest: "", collection: "", event: "" };

useBinaryAndBrowser({ sink: true, login: true }, (s) => ({ server, browser, sink } = s));

const call = <T>(method: string, path: string, body?: unknown) => sessionCall<T>(browser, server.url, method, path, body);

async function ingest(body: unknown) {
  const res = await fetch(ids.ingest, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  expect(res.status).toBe(200);
}

const nav = (name: string) => browser.page.getByRole("navigation", { name: "Main" }).getByRole("link", { name, exact: true });

/** The message a field shows next to it ("" while it has none). */
async function messageOf(field: ReturnType<Browser["page"]["getByLabel"]>) {
  if ((await field.getAttribute("aria-invalid")) !== "true") return "";
  const id = (await field.getAttribute("aria-describedby"))!.split(" ")[0]!;
  return (await browser.page.locator(`[id="${id}"]`).textContent()) ?? "";
}

describe("event types", () => {
  it("checks the schema as you type, shows ajv's refusal next to the field, and creates the type", async () => {
    const { page, guard } = browser;
    await nav("Event types").click();
    await page.getByText("No event types yet").waitFor();
    await page.getByRole("link", { name: "Create your first event type" }).click();
    const form = page.getByRole("form", { name: "New event type" });
    await form.getByLabel("Name").fill("order.created");
    const schema = form.getByLabel("JSON Schema (optional)");

    // Not JSON: said at once, before any request.
    await schema.fill('{"type": "object", "required": ["total"]');
    await expect.poll(() => messageOf(schema)).toMatch(/^Not valid JSON/);
    await screenshot(page, "60-event-type-json-error");
    await schema.fill('["not", "an", "object"]');
    await expect.poll(() => messageOf(schema)).toBe("Must be a JSON object: { … }");

    // JSON, but not a JSON Schema: the server's (ajv's) message, next to the field.
    await schema.fill('{"type": "objekt"}');
    await form.getByText("✓ Valid JSON.").waitFor();
    guard.expectResponse(400, "/v1/event-types");
    await form.getByRole("button", { name: "Create event type" }).click();
    await expect.poll(() => messageOf(schema)).toMatch(/not a valid JSON Schema.*type/i);
    await screenshot(page, "61-event-type-schema-refused");

    // Editing the text takes the server's message away: it was about the old text.
    await schema.fill(JSON.stringify({ type: "object", required: ["total"], properties: { total: { type: "integer", minimum: 0 } } }, null, 2));
    await expect.poll(() => schema.getAttribute("aria-invalid")).toBeNull();
    await form.getByLabel("Description (optional)").fill("An order was placed");
    await form.getByRole("button", { name: "Create event type" }).click();
    await page.getByRole("form", { name: "Event type settings" }).waitFor();
    await page.getByRole("heading", { name: "order.created", level: 1 }).waitFor();
  });

  it("changes the status and lists the type with it", async () => {
    const { page } = browser;
    const form = page.getByRole("form", { name: "Event type settings" });
    await form.getByLabel("Status").selectOption("deprecated");
    await form.getByRole("button", { name: "Save event type" }).click();
    await page.getByRole("heading", { name: "order.created", level: 1 }).locator(".badge", { hasText: "deprecated" }).waitFor();
    await page.getByRole("link", { name: "← All event types" }).click();
    const row = page.locator("tbody tr", { hasText: "order.created" });
    await row.waitFor();
    await expect(row.textContent()).resolves.toMatch(/deprecated.*JSON Schema/);
    await screenshot(page, "62-event-types");
  });
});

describe("topics", () => {
  it("creates a topic with a schema", async () => {
    const { page } = browser;
    await nav("Topics").click();
    await page.getByRole("link", { name: "Create your first topic" }).click();
    const form = page.getByRole("form", { name: "New topic" });
    await form.getByLabel("Name").fill("Order events");
    await expect(form.getByLabel("Slug (optional)").getAttribute("placeholder")).resolves.toBe("order-events");
    await form.getByLabel("JSON Schema (optional)").fill(JSON.stringify({ type: "object", required: ["id"], properties: { id: { type: "string" } } }));
    await form.getByText("✓ Valid JSON.").waitFor();
    await screenshot(page, "63-topic-new");
    await form.getByRole("button", { name: "Create topic" }).click();
    await page.getByRole("heading", { name: /Order events/, level: 1 }).waitFor();
    ids.topic = new URL(page.url()).pathname.split("/").pop()!;
    const { topic } = await call<{ topic: { source_id: string; slug: string } }>("GET", `/topics/${ids.topic}`);
    ids.topicSource = topic.source_id;
    expect(topic.slug).toBe("order-events");
    await expect(page.getByRole("textbox", { name: "Publish URL" }).inputValue()).resolves.toBe(`${server.url}/v1/topics/order-events/publish`);
    // Its events flow through connections like received webhooks: connect it to the sink.
    const { destination } = await call<{ destination: { id: string } }>("POST", "/destinations", { name: "Order service", url: `${sink.url}/orders` });
    await call("POST", "/connections", { name: "orders", source_id: ids.topicSource, destination_id: destination.id });
  });

  it("refuses payloads that break the topic's or the event type's schema, listing why", async () => {
    const { page, guard } = browser;
    const publish = page.getByRole("form", { name: "Publish a test event" });
    const payload = publish.getByLabel("Payload");

    await payload.fill('{"id": 1001,');
    await expect.poll(() => messageOf(payload)).toMatch(/^Not valid JSON/);

    await payload.fill('{"id": 1001}');
    guard.expectResponse(422, "/publish");
    await publish.getByRole("button", { name: "Publish" }).click();
    const refusal = publish.getByTestId("schema-violation");
    await refusal.waitFor();
    await expect(refusal.textContent()).resolves.toMatch(/JSON Schema of topic "order-events".*\/id.*must be string/s);

    // The topic's schema passes; the event type's (total: integer) does not.
    await payload.fill('{"id": "ord_1001", "total": "lots"}');
    await publish.getByLabel("Event type (optional)").fill("order.created");
    guard.expectResponse(422, "/publish");
    await publish.getByRole("button", { name: "Publish" }).click();
    await expect.poll(() => refusal.textContent()).toMatch(/order\.created.*\/total.*must be integer/s);
    await screenshot(page, "64-topic-publish-refused");
  });

  it("publishes a test payload and links to the stored event, which is delivered", async () => {
    const { page } = browser;
    const publish = page.getByRole("form", { name: "Publish a test event" });
    await publish.getByLabel("Payload").fill('{"id": "ord_1001", "total": 4200}');
    await publish.getByRole("button", { name: "Publish" }).click();
    const done = publish.getByRole("status").filter({ hasText: "Published event" });
    await done.waitFor();
    await expect(publish.getByTestId("schema-violation").count()).resolves.toBe(0);
    const link = done.getByRole("link", { name: /^evt_/ });
    ids.event = (await link.textContent())!;
    await screenshot(page, "65-topic-published");

    const [req] = await sink.waitFor(1);
    expect(JSON.parse(req!.body)).toEqual({ id: "ord_1001", total: 4200 });
    expect(req!.headers["x-topic"]).toBe("order-events");

    await link.click();
    await page.getByRole("heading", { name: ids.event }).waitFor();
    expect(JSON.parse((await page.getByTestId("event-body").textContent())!)).toEqual({ id: "ord_1001", total: 4200 });
    await page.getByRole("table", { name: "Delivery attempts" }).locator("tbody tr", { hasText: "success" }).waitFor({ timeout: 15_000 });
  });

  it("pauses (publishing refused) and resumes", async () => {
    const { page } = browser;
    await page.goto(`${server.url}/topics/${ids.topic}`);
    await page.getByRole("button", { name: "Pause" }).click();
    await page.getByText("Paused: publishing is refused").waitFor();
    await expect(page.getByRole("form", { name: "Publish a test event" }).getByRole("button", { name: "Publish" }).isDisabled()).resolves.toBe(true);
    await screenshot(page, "66-topic-paused");
    await page.getByRole("button", { name: "Resume" }).click();
    await page.getByRole("button", { name: "Pause" }).waitFor();
    await expect(page.getByRole("form", { name: "Publish a test event" }).getByRole("button", { name: "Publish" }).isEnabled()).resolves.toBe(true);
  });

  it("lists the topic with its events", async () => {
    const { page } = browser;
    await nav("Topics").click();
    const row = page.locator("tbody tr", { hasText: "Order events" });
    await row.waitFor();
    await expect.poll(() => row.textContent()).toMatch(/order-events.*active.*JSON Schema.*1/);
    await screenshot(page, "67-topics");
  });
});

describe("collections", () => {
  const customer = (n: number) => `cus_${String(n).padStart(3, "0")}`;

  it("is created on a source with stored events and shows the backfill's outcome", async () => {
    const { page, guard } = browser;
    const { source } = await call<{ source: { id: string; ingest_url: string } }>("POST", "/sources", { name: "Shop" });
    ids.shop = source.id;
    ids.ingest = source.ingest_url;
    // 30 customers, then changes to customer 7, a keyless event, a type the collection ignores, and a deletion.
    for (let n = 1; n <= 30; n++) await ingest({ type: "customer.created", data: { id: customer(n), email: `c${n}@example.com`, name: `Customer ${n}` } });
    await ingest({ type: "customer.updated", data: { id: customer(7), email: "seven@example.org", name: "Customer 7", plan: "pro" } });
    await ingest({ type: "customer.updated", data: { email: "nobody@example.com" } });
    await ingest({ type: "invoice.paid", data: { id: "in_1" } });
    await ingest({ type: "customer.deleted", data: { id: customer(30) } });

    await nav("Collections").click();
    await page.getByRole("link", { name: "Create your first collection" }).click();
    const form = page.getByRole("form", { name: "New collection" });
    await form.getByRole("button", { name: "Create collection" }).click();
    await form.getByText("Choose the source whose events build the records").waitFor();
    await form.getByLabel("Source").selectOption({ label: "Shop" });
    await form.getByLabel("Record key path").fill("data.id");
    await form.getByLabel("Name (optional)").fill("Customers");
    await form.getByLabel("Event types that create and update records").fill("customer.created\ncustomer.updated");
    await form.getByLabel("Event types that delete the record").fill("customer.deleted");
    // A broken JSONata expression: JSONata's message next to the field.
    const transform = form.getByLabel("Transform (JSONata, optional)");
    await transform.fill('data.{"email": email, "name": name');
    guard.expectResponse(400, "/v1/collections");
    await form.getByRole("button", { name: "Create collection" }).click();
    await expect.poll(() => messageOf(transform)).not.toBe("");
    await transform.fill('data.{"email": email, "name": name, "plan": plan}');
    await screenshot(page, "68-collection-new");
    await form.getByRole("button", { name: "Create collection" }).click();

    await page.getByRole("heading", { name: "Customers", level: 1 }).waitFor();
    ids.collection = new URL(page.url()).pathname.split("/").pop()!;
    const build = page.getByRole("region", { name: "Build" });
    await build.locator(".badge", { hasText: /^live$/ }).waitFor({ timeout: 15_000 });
    await expect.poll(() => build.getByRole("group", { name: "Records" }).textContent()).toContain("29");
    await expect(build.textContent()).resolves.toContain("Backfilled from 34 stored events");
    await expect(build.getByRole("group", { name: "Events handled" }).textContent()).resolves.toContain("34");
    await expect(build.getByRole("group", { name: "Ignored" }).textContent()).resolves.toContain("1");
    await expect(build.getByRole("group", { name: "Missing key" }).textContent()).resolves.toContain("1");
    await expect(build.getByRole("group", { name: "Transform failed" }).textContent()).resolves.toContain("0");
    await expect(build.getByTestId("last-error").textContent()).resolves.toMatch(/data\.id/);
    await screenshot(page, "69-collection-detail");
  });

  it("backfills a second collection over the same events, and says so", async () => {
    const { collection } = await call<{ collection: { id: string; backfill_total: number } }>("POST", "/collections", { source_id: ids.shop, key_path: "data.id", name: "Customers (all types)" });
    expect(collection.backfill_total).toBe(34);
    const { page } = browser;
    await page.goto(`${server.url}/collections/${collection.id}`);
    const build = page.getByRole("region", { name: "Build" });
    await build.getByText("Backfilled from 34 stored events").waitFor({ timeout: 15_000 });
    // Without type lists every keyed event writes: the invoice is a record too, and "customer.deleted" is just an update.
    await expect.poll(() => build.getByRole("group", { name: "Records" }).textContent()).toContain("31");
    await call("DELETE", `/collections/${collection.id}`);
  });

  it("pages through the records by cursor without repeats, and searches them", async () => {
    const { page } = browser;
    await page.goto(`${server.url}/collections/${ids.collection}`);
    const records = page.getByRole("table", { name: "Records" });
    await expect.poll(() => records.locator("tbody tr").count()).toBe(25);
    const keysOf = async () => (await records.locator("tbody tr td:first-child").allTextContents()).map((t) => t.trim());
    const first = await keysOf();
    await page.getByRole("button", { name: "Next" }).click();
    await page.getByText("Page 2").waitFor();
    await expect.poll(() => records.locator("tbody tr").count()).toBe(4);
    const second = await keysOf();
    expect(new Set([...first, ...second]).size).toBe(29);
    expect([...first, ...second]).not.toContain(customer(30));
    await expect(page.getByRole("button", { name: "Next" }).isDisabled()).resolves.toBe(true);
    await screenshot(page, "70-collection-records-page-2");
    await page.getByRole("button", { name: "Previous" }).click();
    await page.getByText("Page 1").waitFor();
    await expect.poll(keysOf).toEqual(first);

    await page.getByRole("search", { name: "Search records" }).getByLabel("Search").fill("seven@example");
    await expect.poll(keysOf).toEqual([customer(7)]);
    expect(new URL(page.url()).searchParams.get("search")).toBe("seven@example");
    await screenshot(page, "71-collection-records-search");
  });

  it("shows a record's changelog as a timeline of diffs", async () => {
    const { page } = browser;
    await page.getByRole("table", { name: "Records" }).getByRole("link", { name: customer(7) }).click();
    await page.getByRole("heading", { name: `Record ${customer(7)}` }).waitFor();
    expect(JSON.parse((await page.getByTestId("record-data").textContent())!)).toEqual({ email: "seven@example.org", name: "Customer 7", plan: "pro" });
    const timeline = page.getByRole("region", { name: "Changelog" });
    const entries = timeline.locator("ol.timeline > li");
    await expect.poll(() => entries.count()).toBe(2);
    const updated = entries.nth(0);
    await expect(updated.locator(".badge").textContent()).resolves.toBe("updated");
    const rows = updated.getByRole("table", { name: "Changes" }).getByRole("row");
    await expect(rows.allTextContents()).resolves.toEqual(['~email"c7@example.com" → "seven@example.org"', '+plan"pro"']);
    await expect(updated.textContent()).resolves.toContain("1 changed, 1 added");
    await expect(entries.nth(1).locator(".badge").textContent()).resolves.toBe("created");
    await expect(entries.nth(1).textContent()).resolves.toContain('"email": "c7@example.com"');
    await screenshot(page, "72-record-changelog");
    await page.emulateMedia({ colorScheme: "dark" });
    await screenshot(page, "73-record-changelog-dark");
    await page.emulateMedia({ colorScheme: "light" });
  });

  it("keeps a deleted record's history readable, without asking for the record", async () => {
    const { page } = browser;
    const asked: string[] = [];
    const onRequest = (r: { url(): string }) => asked.push(new URL(r.url()).pathname);
    page.on("request", onRequest);
    try {
      await page.goto(`${server.url}/collections/${ids.collection}/records/${customer(30)}`);
      await page.getByText("This record was deleted by a customer.deleted event").waitFor();
      const entries = page.getByRole("region", { name: "Changelog" }).locator("ol.timeline > li");
      await expect.poll(() => entries.count()).toBe(2);
      await expect(entries.nth(0).textContent()).resolves.toMatch(/deleted.*its last data was.*c30@example\.com/is);
      expect(asked).not.toContain(`/v1/collections/${ids.collection}/records/${customer(30)}`);
      await screenshot(page, "74-record-deleted");
    } finally {
      page.off("request", onRequest);
    }
  });

  it("stays readable at phone width", async () => {
    const { page } = browser;
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      await page.goto(`${server.url}/collections/${ids.collection}/records/${customer(7)}`);
      await page.getByRole("region", { name: "Changelog" }).locator("ol.timeline > li").first().waitFor();
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await screenshot(page, "75-record-phone");
      await page.goto(`${server.url}/collections/${ids.collection}`);
      await page.getByRole("table", { name: "Records" }).waitFor();
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await screenshot(page, "76-collection-phone");
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  it("asks before a change that rebuilds, and saves a rename in place", async () => {
    const { page } = browser;
    await page.goto(`${server.url}/collections/${ids.collection}`);
    const settings = page.getByRole("form", { name: "Collection settings" });
    await settings.getByLabel("Event types that delete the record").fill("customer.deleted, customer.archived");
    await settings.getByRole("button", { name: "Save collection" }).click();
    const dialog = page.getByRole("alertdialog", { name: "Rebuild this collection?" });
    await dialog.waitFor();
    await expect(dialog.textContent()).resolves.toMatch(/29 records.*changelog are deleted and built again.*cannot be undone/s);
    await screenshot(page, "77-collection-rebuild-confirm");
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "hidden" });
    await settings.getByLabel("Event types that delete the record").fill("customer.deleted");

    await settings.getByLabel("Name", { exact: true }).fill("Shop customers");
    await settings.getByRole("button", { name: "Save collection" }).click();
    await page.getByRole("heading", { name: "Shop customers", level: 1 }).waitFor();
    await expect(page.getByRole("region", { name: "Build" }).getByRole("group", { name: "Records" }).textContent()).resolves.toContain("29");
  });

  it("lists the collection with its build state, and deletes it after a red confirmation", async () => {
    const { page } = browser;
    await nav("Collections").click();
    const row = page.locator("tbody tr", { hasText: "Shop customers" });
    await row.waitFor();
    await expect(row.textContent()).resolves.toMatch(/Shop.*29.*live.*1 event not built/);
    await screenshot(page, "78-collections");
    await row.getByRole("link", { name: "Shop customers" }).click();
    await page.getByRole("button", { name: "Delete" }).click();
    const dialog = page.getByRole("alertdialog", { name: "Delete this collection?" });
    await expect(dialog.textContent()).resolves.toMatch(/29 records and the changelog of every record.*source and its events stay/s);
    await dialog.getByRole("button", { name: "Delete collection" }).click();
    await page.getByText("No collections yet").waitFor();
  });
});

describe("deleting a topic", () => {
  it("says what goes with it", async () => {
    const { page } = browser;
    await page.goto(`${server.url}/topics/${ids.topic}`);
    await page.getByRole("button", { name: "Delete" }).click();
    const dialog = page.getByRole("alertdialog", { name: "Delete this topic?" });
    await expect.poll(() => dialog.textContent()).toMatch(/its source and 1 stored event.*connections and every collection.*cannot be undone/s);
    await screenshot(page, "79-topic-delete-confirm");
    await dialog.getByRole("button", { name: "Delete topic" }).click();
    await page.getByText("No topics yet").waitFor();
    await expect(call("GET", `/sources/${ids.topicSource}`)).rejects.toThrow(/404/);
  });
});
