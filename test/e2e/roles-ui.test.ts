/**
 * The admin UI respects the caller's role (docs/teams.md, "Who may do what";
 * docs/admin-ui.md, "Roles"), in headless chromium against the compiled
 * binary: a viewer walks every page and sees its data but no button it
 * cannot use, a developer sees the relay's write buttons but no environment
 * management, and the sidebar is grouped under headings with the current
 * page marked, scrolling in a short window rather than squeezing its links.
 *
 * The viewer and the developer are members of the admin's organization,
 * made in the store as rows (no members API is needed for the UI under
 * test), and log in through the login page.
 */
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import type { MeBody } from "../../src/contracts/apiKeys";
import { hex32 } from "../../src/contracts/ids";
import type { Role } from "../../src/contracts/roles";
import { memberships, users } from "../../src/db/schema";
import { openStoreOf } from "../helpers/database";
import { waitFor } from "../helpers/delivery";
import type { Sink } from "../helpers/sink";
import { launchBrowser, screenshot, SCREENSHOTS, sessionCall, type Browser, type Hookrelay } from "./helpers";
import { useBinaryAndBrowser } from "./fixture";

let server: Hookrelay;
let admin: Browser;
let sink: Sink;
let viewer: Browser;
let developer: Browser;
const PASSWORD = "a member's long password";
const ids = { source: "", destination: "", connection: "", topic: "", eventType: "", collection: "", app: "", endpoint: "", message: "", event: "", rule: "", channel: "" };

useBinaryAndBrowser({ sink: true, login: true }, (s) => ({ server, browser: admin, sink } = s));

const call = <T>(method: string, path: string, body?: unknown) => sessionCall<T>(admin, server.url, method, path, body);

/** An active member of the admin's organization with `role`, written to the store the binary runs on. */
async function addMember(email: string, name: string, role: Role) {
  const me = await call<MeBody>("GET", "/auth/me");
  const store = await openStoreOf(server.dataDir);
  try {
    const now = new Date().toISOString();
    const userId = hex32();
    await store.db.insert(users).values({ id: userId, email, name, passwordHash: await Bun.password.hash(PASSWORD), orgId: me.org_id, envId: me.env_id, createdAt: now });
    await store.db.insert(memberships).values({ id: hex32(), orgId: me.org_id, userId, role, status: "active", envId: me.env_id, createdAt: now, updatedAt: now });
  } finally {
    await store.close();
  }
}

async function logIn(b: Browser, email: string) {
  await b.page.goto(server.url + "/");
  await b.page.getByLabel("Email").fill(email);
  await b.page.getByLabel("Password").fill(PASSWORD);
  await b.page.getByRole("button", { name: "Log in" }).click();
  await b.page.getByRole("navigation", { name: "Main" }).waitFor();
}

/** What a button or a link styled as one says when it changes something. */
const WRITES = /^(new |create|add |delete|save|retry|replay|pause|resume|disable|enable|rotate|reveal|send|publish|revoke|rename|redrive|resend|acknowledge|resolve|ignore|reopen|snooze|end snooze|portal link|deliver anyway|preview)/i;

/** The visible buttons of the page's main part (and links styled as buttons, and switches that can be flipped) whose label is a write. */
async function writeButtons(page: Page): Promise<string[]> {
  const labels = await page.evaluate(() =>
    Array.from(document.querySelectorAll<HTMLElement>("main button, main a.btn, main input[role=switch]"))
      // Tabs choose what to show ("Resolved" issues), they change nothing.
      .filter((el) => el.checkVisibility() && el.getAttribute("role") !== "tab" && !(el instanceof HTMLInputElement && el.disabled))
      .map((el) => (el.textContent ?? "").trim() || el.getAttribute("aria-label") || ""),
  );
  return labels.filter((l) => WRITES.test(l));
}

/** Every page a member can open, with something of its data to wait for. */
function pages(): { path: string; shows: string }[] {
  return [
    { path: "/", shows: "Events received" },
    { path: "/events", shows: "Shop" },
    { path: `/events/${ids.event}`, shows: ids.event },
    { path: "/attempts", shows: "Orders API" },
    { path: "/issues", shows: "Issues" },
    { path: "/alert-rules", shows: "Orders failing" },
    { path: `/alert-rules/${ids.rule}`, shows: "Orders failing" },
    { path: "/notification-channels", shows: "Ops hook" },
    { path: `/notification-channels/${ids.channel}`, shows: "Ops hook" },
    { path: "/sources", shows: "Shop" },
    { path: `/sources/${ids.source}`, shows: "Ingest URL" },
    { path: "/connections", shows: "shop to orders" },
    { path: `/connections/${ids.connection}`, shows: "shop to orders" },
    { path: "/destinations", shows: "Orders API" },
    { path: `/destinations/${ids.destination}`, shows: "Signing secret" },
    { path: "/topics", shows: "Order events" },
    { path: `/topics/${ids.topic}`, shows: "Publish URL" },
    { path: "/collections", shows: "Customers" },
    { path: `/collections/${ids.collection}`, shows: "Customers" },
    { path: "/applications", shows: "Acme" },
    { path: `/applications/${ids.app}`, shows: `${sink.url}/acme` },
    { path: `/applications/${ids.app}/messages`, shows: "order.created" },
    { path: `/applications/${ids.app}/messages/${ids.message}`, shows: "order.created" },
    { path: `/applications/${ids.app}/endpoints/${ids.endpoint}`, shows: "Signing secret" },
    { path: `/applications/${ids.app}/settings`, shows: "Acme" },
    { path: "/event-types", shows: "order.created" },
    { path: `/event-types/${ids.eventType}`, shows: "order.created" },
    { path: "/api-keys", shows: "API keys" },
    { path: "/environments", shows: "production" },
  ];
}

/** Opens `path` and waits for its data, then for the page to settle (no spinner left). */
async function open(page: Page, path: string, shows: string) {
  await page.goto(server.url + path);
  await page.getByRole("main").getByText(shows).filter({ visible: true }).first().waitFor();
  await expect.poll(async () => page.locator("main .spinner").count()).toBe(0);
}

beforeAll(async () => {
  // What every page shows: one of each resource, an event delivered, a message sent.
  sink.respond = () => new Response("ok");
  const { source } = await call<{ source: { id: string; ingest_url: string } }>("POST", "/sources", { name: "Shop" });
  const { destination } = await call<{ destination: { id: string } }>("POST", "/destinations", { name: "Orders API", url: `${sink.url}/orders` });
  const { connection } = await call<{ connection: { id: string } }>("POST", "/connections", { name: "shop to orders", source_id: source.id, destination_id: destination.id });
  const { topic } = await call<{ topic: { id: string } }>("POST", "/topics", { name: "Order events" });
  const { event_type } = await call<{ event_type: { id: string } }>("POST", "/event-types", { name: "order.created", description: "An order was placed" });
  const { collection } = await call<{ collection: { id: string } }>("POST", "/collections", { source_id: source.id, key_path: "id", name: "Customers" });
  const { application } = await call<{ application: { id: string } }>("POST", "/applications", { name: "Acme", uid: "acme", allow_private_endpoints: true });
  const { endpoint } = await call<{ endpoint: { id: string } }>("POST", "/applications/acme/endpoints", { url: `${sink.url}/acme` });
  const { message } = await call<{ message: { id: string } }>("POST", "/applications/acme/messages", { event_type: "order.created", payload: { id: "ord_1" } });
  const channel = await call<{ id: string }>("POST", "/notification-channels", { name: "Ops hook", channel_type: "webhook", config: { url: `${sink.url}/ops` } });
  const { alert_rule } = await call<{ alert_rule: { id: string } }>("POST", "/alert-rules", { name: "Orders failing", rule_type: "failure_rate", rule_config: { threshold_percent: 25 }, channel_ids: [channel.id] });
  const res = await fetch(source.ingest_url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ id: "cus_1", type: "customer.created" }) });
  expect(res.status).toBe(200);
  const { event_id } = (await res.json()) as { event_id: string };
  Object.assign(ids, { source: source.id, destination: destination.id, connection: connection.id, topic: topic.id, eventType: event_type.id, collection: collection.id, app: application.id, endpoint: endpoint.id, message: message.id, event: event_id, rule: alert_rule.id, channel: channel.id });
  // The event's delivery and the message's, so the attempts pages have rows.
  await waitFor(async () => (await call<{ delivery_attempts: unknown[] }>("GET", `/delivery-attempts?event_id=${event_id}`)).delivery_attempts.length > 0, { what: "the event's delivery attempt" });

  await addMember("viewer@e2e.local", "Vera Viewer", "viewer");
  await addMember("developer@e2e.local", "Dev Eloper", "developer");
  [viewer, developer] = await Promise.all([launchBrowser(), launchBrowser()]);
});

afterEach(() => {
  viewer?.guard.assertClean();
  developer?.guard.assertClean();
});

afterAll(async () => {
  await viewer?.close();
  await developer?.close();
});

describe("a viewer", () => {
  it("logs in and sees every page's data, with no button that changes anything", async () => {
    await logIn(viewer, "viewer@e2e.local");
    const { page } = viewer;
    const found: Record<string, string[]> = {};
    for (const { path, shows } of pages()) {
      await open(page, path, shows);
      const writes = await writeButtons(page);
      if (writes.length > 0) found[path] = writes;
    }
    expect(found).toEqual({});
    await page.goto(server.url + `/destinations/${ids.destination}`);
    await page.getByRole("main").getByText("your role here sees them masked").waitFor();
    await screenshot(page, "roles-viewer-destination");
  });

  it("is offered no replay, no cluster and no getting-started steps; a form it opens anyway is locked and says why", async () => {
    const { page } = viewer;
    await open(page, "/", "Events received");
    const nav = page.getByRole("navigation", { name: "Main" });
    expect(await nav.getByRole("link", { name: "Replay" }).count()).toBe(0);
    await expect.poll(async () => nav.getByRole("link", { name: "Sources" }).count()).toBe(1);
    // GET /v1/cluster is the instance owner's: the dashboard does not ask (the guard would see the 403).
    expect(await page.getByRole("region", { name: "Cluster" }).count()).toBe(0);

    await open(page, "/sources/new", "New source");
    await page.getByTestId("read-only-note").waitFor();
    expect(await page.getByTestId("read-only-note").textContent()).toContain("viewer");
    expect(await page.getByRole("button", { name: "Create source" }).count()).toBe(0);
    expect(await page.getByRole("textbox", { name: "Name" }).first().isDisabled()).toBe(true);
    await screenshot(page, "roles-viewer-new-source");
  });
});

describe("a developer", () => {
  it("sees the relay's write buttons and secrets", async () => {
    await logIn(developer, "developer@e2e.local");
    const { page } = developer;
    await open(page, "/sources", "Shop");
    await page.getByRole("main").getByRole("link", { name: "New source" }).waitFor();
    await open(page, `/destinations/${ids.destination}`, "Signing secret");
    for (const name of ["Reveal secret", "Delete", "Save destination"]) await page.getByRole("button", { name }).waitFor();
    await open(page, `/events/${ids.event}`, ids.event);
    await page.getByRole("button", { name: "Retry" }).waitFor();
    await open(page, `/applications/${ids.app}/messages`, "order.created");
    await page.getByRole("form", { name: "Send a message" }).waitFor();
    await open(page, "/api-keys", "API keys");
    await page.getByRole("button", { name: /create/i }).first().waitFor();
    expect(await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Replay" }).count()).toBe(1);
  });

  it("sees the environments but no button to create, rename or delete one (an admin's)", async () => {
    const { page } = developer;
    await open(page, "/environments", "production");
    expect(await writeButtons(page)).toEqual([]);
    expect(await page.getByRole("button", { name: /environment/i }).count()).toBe(0);
  });
});

describe("the owner", () => {
  it("manages environments", async () => {
    const { page } = admin;
    await open(page, "/environments", "production");
    await page.getByRole("button", { name: "Create environment" }).waitFor();
    await page.getByRole("button", { name: "Rename environment production" }).waitFor();
  });
});

describe("the grouped sidebar", () => {
  it("shows its groups under headings, in order, with the current page marked", async () => {
    const { page } = admin;
    await page.setViewportSize({ width: 1280, height: 800 });
    await open(page, `/sources/${ids.source}`, "Ingest URL");
    const nav = page.getByRole("navigation", { name: "Main" });
    expect(await nav.getByRole("heading").allTextContents()).toEqual(["Watching", "Receiving", "Sending", "Settings"]);
    // Each link sits under its group's heading.
    for (const [group, link] of [
      ["Watching", "Dashboard"],
      ["Receiving", "Sources"],
      ["Sending", "Applications"],
      ["Settings", "Environments"],
    ]) {
      await nav.getByRole("region", { name: group }).getByRole("link", { name: link }).waitFor();
    }
    const current = nav.locator('a[aria-current="page"]');
    expect(await current.count()).toBe(1);
    expect(await current.textContent()).toBe("Sources");
    await screenshot(page, "sidebar-1280x800");
  });

  it("scrolls in a short window, keeping every part its height and the current page in view", async () => {
    const { page } = admin;
    await page.setViewportSize({ width: 1280, height: 600 });
    try {
      await open(page, "/environments", "production");
      const sidebar = page.locator(".sidebar");
      const { scrollHeight, clientHeight } = await sidebar.evaluate((el) => ({ scrollHeight: el.scrollHeight, clientHeight: el.clientHeight }));
      expect(scrollHeight).toBeGreaterThan(clientHeight);
      for (const box of await page.locator(".nav a").evaluateAll((els) => els.map((el) => el.getBoundingClientRect().height))) expect(box).toBeGreaterThanOrEqual(28);
      expect((await page.getByTestId("environment").boundingBox())!.height).toBeGreaterThan(20);
      // Log out stays in view at the sidebar's foot; the current page, low in the list, was scrolled into view above it.
      const logout = (await page.getByRole("button", { name: "Log out" }).boundingBox())!;
      expect(logout.height).toBeGreaterThan(20);
      expect(logout.y + logout.height).toBeLessThanOrEqual(600);
      const footTop = (await page.locator(".sidebar-foot").boundingBox())!.y;
      const link = (await page.locator('.nav a[aria-current="page"]').boundingBox())!;
      expect(await page.locator('.nav a[aria-current="page"]').textContent()).toBe("Environments");
      expect(link.y).toBeGreaterThanOrEqual(0);
      expect(link.y + link.height).toBeLessThanOrEqual(footTop);
      await page.screenshot({ path: join(SCREENSHOTS, "sidebar-1280x600.png") });
      // Scrolled back to the top, the brand and the environment come back: nothing was cut off.
      await sidebar.evaluate((el) => el.scrollTo(0, 0));
      await page.locator(".sidebar .brand").waitFor();
      expect((await page.locator(".sidebar .brand").boundingBox())!.y).toBeGreaterThanOrEqual(0);
      await page.screenshot({ path: join(SCREENSHOTS, "sidebar-1280x600-top.png") });
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });
});
