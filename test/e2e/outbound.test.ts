/**
 * Outbound sending in the admin UI and the consumer portal (docs/outbound.md,
 * "From the UI and the CLI"), in headless chromium against the compiled binary, with a real
 * local server receiving the webhooks: applications created, searched and
 * paged by cursor; endpoints added with event types chosen from the
 * catalogue, disabled and enabled, their secret revealed and rotated after a
 * confirmation that explains the 24-hour overlap; messages sent (a schema
 * refusal listed under the payload), filtered and paged, their attempts
 * with request and response, resent to one endpoint; a portal link created
 * and opened in a browser with no login cookie, where only that application
 * is managed, and whose token every other route refuses.
 *
 * Data the pages show is created through the API (the browser's session);
 * what is tested goes through the UI.
 */
import { mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Sink } from "../helpers/sink";
import { launchBrowser, type Browser, type Hookrelay, sessionCall } from "./helpers";
import { useBinaryAndBrowser } from "./fixture";

const SHOTS = join(tmpdir(), "hookrelay-outbound-screens");

let server: Hookrelay;
let browser: Browser;
let sink: Sink;
/** Paths the sink answers 500 to (with a body the attempt dialog must show). */
const failing = new Set<string>();
const ids = { app: "", other: "", otherEndpoint: "", orders: "", all: "", failedMessage: "", portalUrl: "" };

useBinaryAndBrowser({ sink: true, login: true }, (s) => ({ server, browser, sink } = s));
beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  sink.respond = (req) => (failing.has(req.path) ? new Response(`${req.path} is down for maintenance`, { status: 500 }) : new Response("thanks"));
});

async function shot(page: Page, name: string) {
  await page.waitForTimeout(250);
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

const call = <T>(method: string, path: string, body?: unknown) => sessionCall<T>(browser, server.url, method, path, body);

/** A call with the portal link's token only (no cookie): its status and body. */
async function asPortal(token: string, method: string, path: string, body?: unknown) {
  const res = await fetch(server.url + "/v1" + path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

const nav = (name: string) => browser.page.getByRole("navigation", { name: "Main" }).getByRole("link", { name, exact: true });

/** The message a field shows next to it ("" while it has none). */
async function messageOf(page: Page, field: ReturnType<Page["getByLabel"]>) {
  if ((await field.getAttribute("aria-invalid")) !== "true") return "";
  const id = (await field.getAttribute("aria-describedby"))!.split(" ")[0]!;
  return (await page.locator(`[id="${id}"]`).textContent()) ?? "";
}

const tokenOf = (url: string) => decodeURIComponent(new URL(url).hash.replace(/^#token=/, ""));

describe("applications", () => {
  it("creates an application through the form, with its metadata checked as JSON", async () => {
    const { page } = browser;
    await nav("Applications").click();
    await page.getByText("No applications yet").waitFor();
    await page.getByRole("link", { name: "Create your first application" }).click();
    const form = page.getByRole("form", { name: "New application" });
    await form.getByRole("button", { name: "Create application" }).click();
    await expect.poll(() => messageOf(page, form.getByLabel("Name"))).toMatch(/Give the application a name/);
    await form.getByLabel("Name").fill("Acme Corp");
    await form.getByLabel("UID (optional)").fill("acme");
    const metadata = form.getByLabel("Metadata (optional)");
    await metadata.fill('{"plan": "pro"');
    await expect.poll(() => messageOf(page, metadata)).toMatch(/^Not valid JSON/);
    await metadata.fill('{"plan": "pro"}');
    await form.getByLabel("Rate limit (messages per second)").fill("50");
    await shot(page, "01-application-new");
    await form.getByRole("button", { name: "Create application" }).click();
    await page.getByRole("heading", { name: /Acme Corp/, level: 1 }).waitFor();
    ids.app = new URL(page.url()).pathname.split("/").pop()!;
    const { application } = await call<{ application: { uid: string; metadata: string; rate_limit: number } }>("GET", "/applications/acme");
    expect(application).toMatchObject({ uid: "acme", metadata: '{"plan":"pro"}', rate_limit: 50 });
  });

  it("refuses a duplicate uid next to the field (409)", async () => {
    const { page, guard } = browser;
    await page.goto(`${server.url}/applications/new`);
    const form = page.getByRole("form", { name: "New application" });
    await form.getByLabel("Name").fill("Acme again");
    await form.getByLabel("UID (optional)").fill("acme");
    guard.expectResponse(409, "/v1/applications");
    await form.getByRole("button", { name: "Create application" }).click();
    await expect.poll(() => messageOf(page, form.getByLabel("UID (optional)"))).toMatch(/unique in the environment/i);
    await shot(page, "02-application-duplicate-uid");
  });

  it("edits the settings on the Settings tab", async () => {
    const { page } = browser;
    await page.goto(`${server.url}/applications/${ids.app}`);
    await page.getByRole("tab", { name: "Settings" }).click();
    const form = page.getByRole("form", { name: "Application settings" });
    await form.getByLabel("Description (optional)").fill("Our first customer");
    await form.getByRole("button", { name: "Save application" }).click();
    await page.getByText("Our first customer").first().waitFor();
    expect((await call<{ application: { description: string } }>("GET", `/applications/${ids.app}`)).application.description).toBe("Our first customer");
    await shot(page, "03-application-settings");
  });
});

describe("endpoints", () => {
  it("adds an endpoint for event types chosen from the catalogue", async () => {
    const { page } = browser;
    await call("POST", "/event-types", { name: "order.created", description: "An order was placed", json_schema: { type: "object", required: ["id"], properties: { id: { type: "string" }, total: { type: "integer" } } } });
    await call("POST", "/event-types", { name: "order.shipped", description: "An order left the warehouse" });
    await page.goto(`${server.url}/applications/${ids.app}`);
    await page.getByRole("link", { name: "Add your first endpoint" }).click();
    const form = page.getByRole("form", { name: "New endpoint" });
    await form.getByLabel("URL").fill(`${sink.url}/acme/orders`);
    await form.getByLabel("Description (optional)").fill("Order sync");
    await form.getByLabel("Only the types chosen below").check();
    await form.getByRole("button", { name: "Add endpoint" }).click();
    await form.getByText("Choose at least one event type, or every event type").waitFor();
    await form.getByRole("group", { name: "Event types to receive" }).getByLabel(/order\.created/).check();
    await form.getByLabel("Rate limit (requests per second)").fill("10");
    await shot(page, "04-endpoint-new");
    await form.getByRole("button", { name: "Add endpoint" }).click();
    await page.getByText("Endpoint added.").waitFor();
    ids.orders = new URL(page.url()).pathname.split("/").pop()!;
    const { endpoint } = await call<{ endpoint: Record<string, unknown> }>("GET", `/applications/acme/endpoints/${ids.orders}`);
    expect(endpoint).toMatchObject({ url: `${sink.url}/acme/orders`, description: "Order sync", filter_types: '["order.created"]', rate_limit_per_second: 10, status: "active", expires_at: null });

    // A second one for every type, added the same way.
    await page.getByRole("link", { name: "← Acme Corp" }).click();
    await page.getByRole("link", { name: "Add endpoint" }).click();
    const again = page.getByRole("form", { name: "New endpoint" });
    await again.getByLabel("URL").fill(`${sink.url}/acme/all`);
    await again.getByRole("button", { name: "Add endpoint" }).click();
    await page.getByText("Endpoint added.").waitFor();
    ids.all = new URL(page.url()).pathname.split("/").pop()!;
    await page.getByRole("link", { name: "← Acme Corp" }).click();
    const table = page.getByRole("table", { name: "Endpoints" });
    await expect.poll(() => table.locator("tbody tr").count()).toBe(2);
    await expect(table.locator("tbody tr", { hasText: "/acme/orders" }).textContent()).resolves.toMatch(/Order sync.*order\.created.*active.*10\/s/);
    await expect(table.locator("tbody tr", { hasText: "/acme/all" }).textContent()).resolves.toContain("every type");
    await shot(page, "05-endpoints");
  });

  it("edits an endpoint: its event types and an expiry", async () => {
    const { page } = browser;
    await page.goto(`${server.url}/applications/${ids.app}/endpoints/${ids.orders}`);
    const form = page.getByRole("form", { name: "Endpoint settings" });
    await form.getByRole("group", { name: "Event types to receive" }).getByLabel(/order\.shipped/).check();
    await form.getByLabel("Expires (optional)").fill("2099-01-01T12:00");
    await form.getByRole("button", { name: "Save endpoint" }).click();
    await expect
      .poll(async () => (await call<{ endpoint: { filter_types: string; expires_at: string | null } }>("GET", `/applications/acme/endpoints/${ids.orders}`)).endpoint)
      .toMatchObject({ filter_types: '["order.created","order.shipped"]', expires_at: expect.stringMatching(/^2099-01-01T/) });
    // Back to what the messages below expect.
    await form.getByRole("group", { name: "Event types to receive" }).getByLabel(/order\.shipped/).uncheck();
    await form.getByLabel("Expires (optional)").fill("");
    await form.getByRole("button", { name: "Save endpoint" }).click();
    await expect
      .poll(async () => (await call<{ endpoint: { filter_types: string; expires_at: string | null } }>("GET", `/applications/acme/endpoints/${ids.orders}`)).endpoint)
      .toMatchObject({ filter_types: '["order.created"]', expires_at: null });
  });

  it("reveals the signing secret, and rotates it after a confirmation that explains the 24-hour overlap", async () => {
    const { page } = browser;
    const panel = page.getByRole("region", { name: "Signing secret" });
    await panel.getByRole("button", { name: "Reveal secret" }).click();
    const { secret } = await call<{ secret: string }>("GET", `/applications/acme/endpoints/${ids.orders}/secret`);
    expect(secret).toMatch(/^whsec_/);
    await expect(panel.getByRole("textbox", { name: "Signing secret" }).inputValue()).resolves.toBe(secret);

    await panel.getByRole("button", { name: "Rotate secret…" }).click();
    const dialog = page.getByRole("alertdialog", { name: "Rotate the signing secret?" });
    await expect(dialog.textContent()).resolves.toMatch(/For 24 hours every request is signed with both/);
    await expect(dialog.getByRole("button", { name: "Rotate secret" }).getAttribute("class")).resolves.toContain("danger");
    await shot(page, "06-endpoint-rotate-confirm");
    await dialog.getByRole("button", { name: "Rotate secret" }).click();
    const rotated = page.getByRole("region", { name: "Signing secret" });
    await rotated.getByRole("heading", { name: "New signing secret" }).waitFor();
    const shown = await rotated.getByRole("textbox", { name: "Signing secret" }).inputValue();
    expect(shown).not.toBe(secret);
    expect((await call<{ secret: string }>("GET", `/applications/acme/endpoints/${ids.orders}/secret`)).secret).toBe(shown);
    await shot(page, "07-endpoint-rotated");
  });

  it("disables and enables the endpoint", async () => {
    const { page } = browser;
    await page.getByRole("button", { name: "Disable" }).click();
    await page.getByText("Disabled: nothing is sent to this endpoint").waitFor();
    expect((await call<{ endpoint: { status: string } }>("GET", `/applications/acme/endpoints/${ids.orders}`)).endpoint.status).toBe("disabled");
    await shot(page, "08-endpoint-disabled");
    await page.getByRole("button", { name: "Enable" }).click();
    await page.getByRole("button", { name: "Disable" }).waitFor();
    expect((await call<{ endpoint: { status: string } }>("GET", `/applications/acme/endpoints/${ids.orders}`)).endpoint.status).toBe("active");
  });
});

describe("messages", () => {
  it("refuses a payload that breaks the event type's schema, listing the errors under it, then sends", async () => {
    const { page, guard } = browser;
    await page.goto(`${server.url}/applications/${ids.app}`);
    await page.getByRole("tab", { name: "Messages" }).click();
    await page.getByText("No messages yet").waitFor();
    const form = page.getByRole("form", { name: "Send a message" });
    await form.getByLabel("Event type").fill("order.created");
    await form.getByLabel("Payload").fill('{"id": 1001, "total": "lots"}');
    guard.expectResponse(422, "/messages");
    await form.getByRole("button", { name: "Send message" }).click();
    const refusal = form.getByTestId("schema-violation");
    await refusal.waitFor();
    await expect(refusal.textContent()).resolves.toMatch(/order\.created.*\/id.*must be string.*\/total.*must be integer/s);
    await shot(page, "09-message-schema-violation");

    const before = sink.requests.length;
    await form.getByLabel("Payload").fill('{"id": "ord_1001", "total": 4200}');
    await form.getByRole("button", { name: "Send message" }).click();
    const accepted = form.getByRole("status").filter({ hasText: "accepted" });
    await accepted.waitFor();
    await expect(form.getByTestId("schema-violation").count()).resolves.toBe(0);
    const messageId = (await accepted.getByRole("link").textContent())!;
    // Both endpoints admit order.created: one signed request each, its webhook-id the message id.
    const got = (await sink.waitFor(before + 2)).slice(before);
    expect(got.map((r) => r.path).sort()).toEqual(["/acme/all", "/acme/orders"]);
    for (const r of got) {
      expect(r.headers["webhook-id"]).toBe(messageId);
      expect(JSON.parse(r.body)).toEqual({ id: "ord_1001", total: 4200 });
    }
    const row = page.getByRole("table", { name: "Messages" }).locator("tbody tr").first();
    await expect.poll(() => row.textContent(), { timeout: 15_000 }).toMatch(/order\.created.*delivered/);
    await shot(page, "10-message-sent");
  });

  it("lists messages newest first in cursor pages, filtered by event type", async () => {
    const { page } = browser;
    for (let n = 1; n <= 30; n++) await call("POST", "/applications/acme/messages", { event_type: "order.shipped", payload: { id: `ord_${n}` } });
    await page.getByRole("button", { name: "Refresh" }).click();
    const table = page.getByRole("table", { name: "Messages" });
    await expect.poll(() => table.locator("tbody tr").count()).toBe(25);
    const idsOf = async () => table.locator("tbody tr").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-row-id")));
    const first = await idsOf();
    await page.getByRole("button", { name: "Older" }).click();
    await page.getByText("Page 2").waitFor();
    await expect.poll(() => table.locator("tbody tr").count()).toBe(6);
    const second = await idsOf();
    expect(new Set([...first, ...second]).size).toBe(31);
    await expect(page.getByRole("button", { name: "Older" }).isDisabled()).resolves.toBe(true);

    await page.getByRole("search", { name: "Filter messages" }).getByLabel("Event type").selectOption("order.created");
    await page.getByText("Page 1").waitFor();
    await expect.poll(() => table.locator("tbody tr").count()).toBe(1);
    await expect(table.textContent()).resolves.toContain("order.created");
    expect(new URL(page.url()).searchParams.get("event_type")).toBe("order.created");
    await shot(page, "11-messages-filtered");
  });

  it("shows a failed attempt's request and response, and resends the message to that endpoint", async () => {
    const { page } = browser;
    failing.add("/acme/orders");
    const { message } = await call<{ message: { id: string } }>("POST", "/applications/acme/messages", { event_type: "order.created", payload: { id: "ord_2002", total: 1 } });
    ids.failedMessage = message.id;
    await page.goto(`${server.url}/applications/${ids.app}/messages/${message.id}`);
    await page.getByRole("heading", { name: /order\.created/, level: 1 }).waitFor();
    const attempts = page.getByRole("table", { name: "Delivery attempts" });
    const failed = attempts.locator("tbody tr", { hasText: "/acme/orders" }).filter({ hasText: "500" });
    await failed.waitFor({ timeout: 15_000 });
    await attempts.locator("tbody tr", { hasText: "/acme/all" }).filter({ hasText: "200" }).waitFor({ timeout: 15_000 });
    await shot(page, "12-message-attempts");

    await failed.getByRole("button", { name: /Request and response/ }).click();
    const dialog = page.getByRole("dialog", { name: "Delivery attempt" });
    await expect(dialog.getByLabel("Request headers").textContent()).resolves.toMatch(/webhook-signature[\s\S]*v1,/);
    expect(JSON.parse((await dialog.getByLabel("Request body").textContent())!)).toEqual({ id: "ord_2002", total: 1 });
    await expect(dialog.getByLabel("Response body").textContent()).resolves.toContain("/acme/orders is down for maintenance");
    await shot(page, "13-attempt-dialog");

    failing.delete("/acme/orders");
    const before = sink.requests.filter((r) => r.path === "/acme/orders").length;
    await dialog.getByRole("button", { name: "Resend to this endpoint" }).click();
    await dialog.waitFor({ state: "hidden" });
    await expect.poll(() => sink.requests.filter((r) => r.path === "/acme/orders").length, { timeout: 15_000 }).toBeGreaterThan(before);
    await attempts.locator("tbody tr", { hasText: "/acme/orders" }).filter({ hasText: "200" }).waitFor({ timeout: 15_000 });
    await page.getByRole("heading", { name: /order\.created/, level: 1 }).locator(".badge", { hasText: "delivered" }).waitFor({ timeout: 15_000 });
    await shot(page, "14-message-resent");
  });

  it("resends from the Resend panel to a chosen endpoint", async () => {
    const { page } = browser;
    const panel = page.getByRole("region", { name: "Resend" });
    const before = sink.requests.filter((r) => r.path === "/acme/all").length;
    await panel.getByLabel("Endpoint").selectOption({ label: `${sink.url}/acme/all` });
    await panel.getByRole("button", { name: "Resend" }).click();
    await expect.poll(() => sink.requests.filter((r) => r.path === "/acme/all").length, { timeout: 15_000 }).toBe(before + 1);
    await page.getByRole("table", { name: "Delivery attempts" }).locator("tbody tr", { hasText: "/acme/all" }).filter({ hasText: "manual" }).filter({ hasText: "200" }).waitFor({ timeout: 15_000 });
  });
});

describe("application list", () => {
  it("pages by cursor without repeats, searches by name or uid, and shows the counts", async () => {
    const { page } = browser;
    for (let n = 1; n <= 27; n++) await call("POST", "/applications", { name: `Customer ${String(n).padStart(2, "0")}`, uid: `customer-${n}` });
    const { application: other } = await call<{ application: { id: string } }>("POST", "/applications", { name: "Globex", uid: "globex" });
    ids.other = other.id;
    ids.otherEndpoint = (await call<{ endpoint: { id: string } }>("POST", "/applications/globex/endpoints", { url: `${sink.url}/globex` })).endpoint.id;
    await call("POST", "/applications/globex/messages", { event_type: "order.created", payload: { id: "globex_1" } });

    await nav("Applications").click();
    const table = page.getByRole("table", { name: "Applications" });
    await expect.poll(() => table.locator("tbody tr").count()).toBe(25);
    const idsOf = async () => table.locator("tbody tr").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-row-id")));
    const first = await idsOf();
    await page.getByRole("button", { name: "Next" }).click();
    await page.getByText("Page 2").waitFor();
    await expect.poll(() => table.locator("tbody tr").count()).toBe(4);
    const second = await idsOf();
    expect(new Set([...first, ...second]).size).toBe(29);
    await shot(page, "15-applications-page-2");

    await page.getByRole("search", { name: "Search applications" }).getByLabel("Search").fill("acme");
    await expect.poll(() => table.locator("tbody tr").count()).toBe(1);
    // 2 endpoints; 1 + 30 + 1 messages.
    await expect(table.locator("tbody tr").textContent()).resolves.toMatch(/Acme Corp.*acme.*active.*2.*32/);
    await page.getByRole("search", { name: "Search applications" }).getByLabel("Search").fill("customer-2");
    await expect.poll(() => table.locator("tbody tr").count()).toBe(9);
    await shot(page, "16-applications-search");
  });
});

describe("consumer portal", () => {
  let portal: Browser;
  let token = "";

  beforeAll(async () => {
    portal = await launchBrowser();
    // The portal adds an endpoint on the local receiver: the operator opts acme in (docs/outbound.md, "What a portal link can reach").
    await call("PATCH", "/applications/acme", { allow_private_endpoints: true });
  });
  afterAll(async () => {
    await portal?.close();
  });
  afterEach(() => portal.guard.assertClean());

  it("creates a portal link and shows it with a copy button and its expiry", async () => {
    const { page } = browser;
    await page.goto(`${server.url}/applications/${ids.app}`);
    await page.getByRole("button", { name: "Portal link" }).click();
    const dialog = page.getByRole("dialog", { name: "Consumer portal link" });
    const link = dialog.getByRole("textbox", { name: "Portal link" });
    ids.portalUrl = await link.inputValue();
    expect(ids.portalUrl).toMatch(new RegExp(`^${server.url}/portal#token=hrp_`));
    token = tokenOf(ids.portalUrl);
    await expect(dialog.getByRole("button", { name: "Copy" }).isVisible()).resolves.toBe(true);
    await expect(dialog.getByTestId("portal-expiry").textContent()).resolves.toMatch(/Expires .*\(in (60 min|1 h)\)/);
    await expect(dialog.getByRole("link", { name: "Open the portal" }).getAttribute("href")).resolves.toBe(ids.portalUrl);
    await shot(page, "17-portal-link");
    await page.keyboard.press("Escape");
  });

  it("opens from the link without a login: that application only, no admin navigation, the token out of the URL", async () => {
    const { page } = portal;
    expect(await portal.context.cookies()).toEqual([]);
    const apiRequests: { url: string; headers: Record<string, string> }[] = [];
    page.on("request", (req) => {
      if (new URL(req.url()).pathname.startsWith("/v1/")) void req.allHeaders().then((headers) => apiRequests.push({ url: req.url(), headers }));
    });
    await page.goto(ids.portalUrl);
    await page.getByText("Acme Corp", { exact: true }).waitFor();
    await expect(page.getByRole("navigation", { name: "Main" }).count()).resolves.toBe(0);
    await expect(page.getByLabel("Email").count()).resolves.toBe(0);
    await expect(page.getByTestId("portal-expiry").textContent()).resolves.toMatch(/This link expires in/);
    const table = page.getByRole("table", { name: "Endpoints" });
    await expect.poll(() => table.locator("tbody tr").count()).toBe(2);
    await expect(page.locator("body").textContent()).resolves.not.toContain("Globex");
    // The fragment is gone from the address bar; the token is kept for this tab only.
    expect(page.url()).toBe(`${server.url}/portal`);
    expect(await page.evaluate(() => sessionStorage.getItem("hookrelay.portal"))).toBe(token);
    expect(await page.evaluate(() => Object.keys(localStorage))).toEqual([]);
    // Every API call carried the token as a bearer credential, never in a URL.
    expect(apiRequests.length).toBeGreaterThan(0);
    for (const r of apiRequests) {
      expect(r.url).not.toContain("hrp_");
      expect(r.headers.authorization).toBe(`Bearer ${token}`);
      expect(r.headers.cookie).toBeUndefined();
    }
    await shot(page, "18-portal-endpoints");
    await page.setViewportSize({ width: 390, height: 844 });
    await shot(page, "18b-portal-endpoints-phone");
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it("adds an endpoint with event types from the catalogue, edits and disables it, reveals and rotates its secret", async () => {
    const { page } = portal;
    await page.getByRole("link", { name: "Add endpoint" }).click();
    const form = page.getByRole("form", { name: "New endpoint" });
    await form.getByLabel("URL").fill(`${sink.url}/acme/portal`);
    await form.getByLabel("Only the types chosen below").check();
    await form.getByRole("group", { name: "Event types to receive" }).getByLabel(/order\.shipped/).check();
    await shot(page, "19-portal-endpoint-new");
    await form.getByRole("button", { name: "Add endpoint" }).click();
    await page.getByText("Endpoint added.").waitFor();
    const endpointId = new URL(page.url()).pathname.split("/").pop()!;
    expect(new URL(page.url()).pathname).toBe(`/portal/endpoints/${endpointId}`);
    expect((await call<{ endpoint: { filter_types: string; application_id: string } }>("GET", `/applications/acme/endpoints/${endpointId}`)).endpoint).toMatchObject({ filter_types: '["order.shipped"]', application_id: ids.app });

    const settings = page.getByRole("form", { name: "Endpoint settings" });
    await settings.getByLabel("Description (optional)").fill("Set up by the customer");
    await settings.getByRole("button", { name: "Save endpoint" }).click();
    await expect.poll(async () => (await call<{ endpoint: { description: string } }>("GET", `/applications/acme/endpoints/${endpointId}`)).endpoint.description).toBe("Set up by the customer");

    const secret = page.getByRole("region", { name: "Signing secret" });
    await secret.getByRole("button", { name: "Reveal secret" }).click();
    const revealed = await secret.getByRole("textbox", { name: "Signing secret" }).inputValue();
    expect(revealed).toBe((await call<{ secret: string }>("GET", `/applications/acme/endpoints/${endpointId}/secret`)).secret);
    await secret.getByRole("button", { name: "Rotate secret…" }).click();
    await page.getByRole("alertdialog", { name: "Rotate the signing secret?" }).getByRole("button", { name: "Rotate secret" }).click();
    await page.getByRole("heading", { name: "New signing secret" }).waitFor();
    const rotated = await page.getByRole("region", { name: "Signing secret" }).getByRole("textbox", { name: "Signing secret" }).inputValue();
    expect(rotated).not.toBe(revealed);
    expect((await call<{ secret: string }>("GET", `/applications/acme/endpoints/${endpointId}/secret`)).secret).toBe(rotated);

    await page.getByRole("button", { name: "Disable" }).click();
    await page.getByText("Disabled: nothing is sent to this endpoint").waitFor();
    expect((await call<{ endpoint: { status: string } }>("GET", `/applications/acme/endpoints/${endpointId}`)).endpoint.status).toBe("disabled");
    await shot(page, "20-portal-endpoint");

    await page.getByRole("button", { name: "Delete" }).click();
    await page.getByRole("alertdialog", { name: "Delete this endpoint?" }).getByRole("button", { name: "Delete endpoint" }).click();
    await page.getByRole("table", { name: "Endpoints" }).waitFor();
    expect(new URL(page.url()).pathname).toBe("/portal");
  });

  it("shows the messages and their attempts with request and response, and resends; sending is not offered", async () => {
    const { page } = portal;
    await page.getByRole("tab", { name: "Messages" }).click();
    const table = page.getByRole("table", { name: "Messages" });
    await expect.poll(() => table.locator("tbody tr").count()).toBe(25);
    await expect(page.getByRole("form", { name: "Send a message" }).count()).resolves.toBe(0);
    await shot(page, "21-portal-messages");

    await page.getByRole("search", { name: "Filter messages" }).getByLabel("Event type").selectOption("order.created");
    await expect.poll(() => table.locator("tbody tr").count()).toBe(2);
    await page.goto(`${server.url}/portal/messages/${ids.failedMessage}`);
    const attempts = page.getByRole("table", { name: "Delivery attempts" });
    await attempts.locator("tbody tr", { hasText: "500" }).first().getByRole("button", { name: /Request and response/ }).click();
    const dialog = page.getByRole("dialog", { name: "Delivery attempt" });
    await expect(dialog.getByLabel("Response body").textContent()).resolves.toContain("is down for maintenance");
    await expect(dialog.getByLabel("Request headers").textContent()).resolves.toContain("webhook-signature");
    await shot(page, "22-portal-attempt");
    const before = sink.requests.filter((r) => r.path === "/acme/orders").length;
    await dialog.getByRole("button", { name: "Resend to this endpoint" }).click();
    // The resend's answer closes the dialog: the next test's reload must not cut it off.
    await dialog.waitFor({ state: "hidden" });
    await expect.poll(() => sink.requests.filter((r) => r.path === "/acme/orders").length, { timeout: 15_000 }).toBe(before + 1);
  });

  it("survives a reload (the token kept for the tab), and shows another application as absent", async () => {
    const { page, guard } = portal;
    await page.reload();
    await page.getByRole("heading", { name: /order\.created/, level: 1 }).waitFor();
    guard.expectResponse(404, `/endpoints/${ids.otherEndpoint}`);
    await page.goto(`${server.url}/portal/endpoints/${ids.otherEndpoint}`);
    await page.getByRole("alert").filter({ hasText: /not found/i }).waitFor();
    await expect(page.locator("body").textContent()).resolves.not.toContain("globex");
  });

  it("is refused by every route outside its application", async () => {
    expect(await asPortal(token, "GET", "/portal/session")).toMatchObject({ status: 200, body: { application: { id: ids.app } } });
    expect(await asPortal(token, "GET", "/applications/acme/endpoints")).toMatchObject({ status: 200 });
    for (const [method, path] of [
      ["GET", "/sources"],
      ["GET", "/applications"],
      ["GET", "/events"],
      ["GET", "/destinations"],
      ["GET", "/auth/me"],
      ["POST", "/applications/acme/portal"],
      ["PATCH", "/applications/acme"],
      ["DELETE", "/applications/acme"],
    ] as const) {
      const res = await asPortal(token, method, path, method === "PATCH" ? { name: "x" } : undefined);
      expect([method, path, res.status, res.body.error?.code]).toEqual([method, path, 403, "forbidden"]);
    }
    // Sending is the operator's: the portal reads and resends only.
    expect((await asPortal(token, "POST", "/applications/acme/messages", { event_type: "order.created", payload: { id: "x" } })).status).toBe(403);
    // Another application is absent, by id or uid.
    for (const path of ["/applications/globex", "/applications/globex/endpoints", `/applications/${ids.other}/messages`, `/applications/globex/endpoints/${ids.otherEndpoint}/secret`]) {
      expect([path, (await asPortal(token, "GET", path)).status]).toEqual([path, 404]);
    }
  });

  it("opened in a browser that is logged in as admin, it still acts with the link's token only", async () => {
    const page = await browser.context.newPage();
    const seen: Record<string, string>[] = [];
    page.on("request", (req) => {
      if (new URL(req.url()).pathname.startsWith("/v1/")) void req.allHeaders().then((h) => seen.push(h));
    });
    await page.goto(ids.portalUrl);
    await page.getByRole("table", { name: "Endpoints" }).waitFor();
    await expect(page.getByRole("navigation", { name: "Main" }).count()).resolves.toBe(0);
    expect(seen.length).toBeGreaterThan(0);
    for (const h of seen) {
      expect(h.authorization).toBe(`Bearer ${token}`);
      expect(h.cookie).toBeUndefined();
    }
    await page.close();
  });

  it("says clearly when the link is invalid or missing", async () => {
    const page = await portal.context.newPage();
    try {
      // A new tab: nothing kept, no fragment.
      await page.goto(`${server.url}/portal`);
      await page.getByRole("heading", { name: "This page needs a portal link" }).waitFor();
      await shot(page, "23-portal-no-token");

      const forged = token.slice(0, -4) + (token.endsWith("AAAA") ? "BBBB" : "AAAA");
      portal.guard.expectResponse(401, "/v1/portal/session");
      await page.goto(`${server.url}/portal#token=${forged}`);
      await page.getByRole("heading", { name: "This portal link no longer works" }).waitFor();
      await expect(page.getByRole("alert").textContent()).resolves.toContain("invalid or has expired");
      expect(await page.evaluate(() => sessionStorage.getItem("hookrelay.portal"))).toBeNull();
      await shot(page, "24-portal-invalid");
    } finally {
      await page.close();
    }
  });

  it("says so when the link has expired", async () => {
    const { url } = await call<{ url: string }>("POST", "/applications/acme/portal", { expires_in: 60 });
    const shortLived = tokenOf(url);
    expect((await asPortal(shortLived, "GET", "/portal/session")).status).toBe(200);
    // The server's clock cannot be moved here: an expired token is a link whose end has passed; the page reaches it by the clock of the browser.
    const page = await portal.context.newPage();
    try {
      await page.clock.install({ time: Date.now() });
      await page.goto(url);
      await page.getByRole("table", { name: "Endpoints" }).waitFor();
      await page.clock.fastForward(61_000);
      await page.getByRole("heading", { name: "This portal link no longer works" }).waitFor();
      await expect(page.getByRole("alert").textContent()).resolves.toContain("expired");
      expect(await page.evaluate(() => sessionStorage.getItem("hookrelay.portal"))).toBeNull();
    } finally {
      await page.close();
    }
  });
});
