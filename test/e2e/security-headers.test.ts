/**
 * The admin UI under its Content-Security-Policy, in headless chromium
 * against the compiled binary: with data in every area, every page loads
 * with no console error and no CSP violation, and another origin cannot
 * frame it.
 */
import { createHmac, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSink, type Sink } from "../helpers/sink";
import { ADMIN, launchBrowser, loginThroughUi, sleep, startBinary, type Browser, type Hookrelay } from "./helpers";

let server: Hookrelay;
let browser: Browser;
let sink: Sink;
const ids: Record<string, string> = {};

async function api<T = any>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(server.url + "/v1" + path, { method, headers: { "x-api-key": ids.key!, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  const json = await res.json();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json as T;
}

async function eventually<T>(what: string, get: () => Promise<T>, ok: (v: T) => boolean): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const v = await get();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)}`);
    await sleep(50);
  }
}

/** Some of everything: sources, destinations, connections, delivered, rejected and dead-lettered events, a replay, keys. */
async function seed() {
  const login = await fetch(server.url + "/v1/auth/login", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(ADMIN) });
  const cookie = login.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
  const key = await fetch(server.url + "/v1/auth/api-keys", { method: "POST", headers: { cookie, origin: server.url, "content-type": "application/json" }, body: JSON.stringify({ name: "seed", scopes: "*" }) });
  ids.key = ((await key.json()) as { key: string }).key;
  await fetch(server.url + "/v1/auth/api-keys", { method: "POST", headers: { cookie, origin: server.url, "content-type": "application/json" }, body: JSON.stringify({ name: "dashboards", scopes: "read" }) });

  const github = (await api("POST", "/sources", { name: "GitHub", template: "github", verification_secret: "gh-secret" })).source;
  const shop = (await api("POST", "/sources", { name: "Shop", dedup_enabled: true, ip_denylist: ["192.0.2.0/24"] })).source;
  const ok = (await api("POST", "/destinations", { name: "Orders service", url: `${sink.url}/ok` })).destination;
  const bad = (await api("POST", "/destinations", { name: "Broken service", url: `${sink.url}/fail`, max_retries: 0 })).destination;
  const conn = (
    await api("POST", "/connections", {
      name: "GitHub pushes",
      source_id: github.id,
      destination_id: ok.id,
      filter_rules: [{ field: "headers.x-github-event", operator: "eq", value: "push" }],
      transform_enabled: true,
      transform_expression: '{"repo": repository.full_name}',
    })
  ).connection;
  await api("POST", "/connections", { name: "Shop orders", source_id: shop.id, destination_id: bad.id });
  Object.assign(ids, { github: github.id, shop: shop.id, ok: ok.id, bad: bad.id, conn: conn.id });

  const body = JSON.stringify({ repository: { full_name: "acme/hookrelay" } });
  const signature = "sha256=" + createHmac("sha256", "gh-secret").update(body).digest("hex");
  const send = (url: string, headers: Record<string, string>, b = body) => fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: b }).then((r) => r.json() as Promise<any>);
  ids.delivered = (await send(github.ingest_url, { "x-github-event": "push", "x-github-delivery": randomUUID(), "x-hub-signature-256": signature })).event_id;
  ids.rejected = (await send(github.ingest_url, { "x-github-event": "push", "x-hub-signature-256": "sha256=00" })).error.details.event_id;
  ids.failed = (await send(shop.ingest_url, {}, '{"order":1}')).event_id;
  await eventually("final statuses", () => Promise.all([ids.delivered, ids.failed].map((id) => api(`GET`, `/events/${id}`))), (evs) => evs[0].status === "delivered" && evs[1].status === "failed");
  const replay = await api("POST", "/replay", { destination_id: ok.id, source_id: github.id, from: "2000-01-01T00:00:00Z", to: "2100-01-01T00:00:00Z" });
  await eventually("the replay", () => api("GET", `/replay/${replay.job_id}`), (j) => j.status === "completed");
}

beforeAll(async () => {
  sink = startSink();
  sink.respond = (req) => {
    if (req.path === "/fail") return new Response("down", { status: 500 });
    if (req.path === "/framer") return new Response(`<!doctype html><title>framer</title><iframe src="${server.url}/" width="600" height="400"></iframe>`, { headers: { "content-type": "text/html" } });
    return new Response("ok");
  };
  [server, browser] = await Promise.all([startBinary(), launchBrowser()]);
  await seed();
  // Every CSP violation, also those the console would not show.
  await browser.context.addInitScript(() => {
    const w = window as unknown as { __csp: string[] };
    w.__csp = [];
    document.addEventListener("securitypolicyviolation", (e) => w.__csp.push(`${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}`));
  });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
  sink?.close();
});

describe("the admin UI under its Content-Security-Policy", () => {
  it("loads every page with data without a console error or CSP violation", async () => {
    const { page, guard } = browser;
    const document = await fetch(server.url + "/");
    expect(document.headers.get("content-security-policy")).toContain("script-src 'self'");
    await loginThroughUi(page, guard, server.url, "/");

    const pages: [path: string, shows: string | RegExp][] = [
      ["/", "Dashboard"],
      ["/sources", "GitHub"],
      ["/sources/new", "New source"],
      [`/sources/${ids.github}`, "GitHub"],
      [`/sources/${ids.shop}`, "Shop"],
      ["/events", "Shop"],
      [`/events/${ids.delivered}`, "Orders service"],
      [`/events/${ids.rejected}`, /signature/i],
      [`/events/${ids.failed}`, "Broken service"],
      ["/destinations", "Broken service"],
      ["/destinations/new", "New destination"],
      [`/destinations/${ids.ok}`, "Orders service"],
      ["/connections", "GitHub pushes"],
      ["/connections/new", "New connection"],
      [`/connections/${ids.conn}`, "GitHub pushes"],
      ["/attempts", "Orders service"],
      ["/attempts?is_dlq=1", "Broken service"],
      ["/replay", "Replay"],
      ["/api-keys", "dashboards"],
    ];
    // Requests in flight when page.goto leaves a page are aborted by the browser: let them finish first.
    const inFlight = new Set<unknown>();
    page.on("request", (r) => !r.url().includes("/v1/events/stream") && inFlight.add(r));
    page.on("requestfinished", (r) => inFlight.delete(r));
    page.on("requestfailed", (r) => inFlight.delete(r));
    for (const [path, shows] of pages) {
      await expect.poll(() => inFlight.size).toBe(0);
      await page.goto(server.url + path);
      await page.getByRole("heading", { level: 1 }).first().waitFor();
      await page.locator("main").getByText(shows).filter({ visible: true }).first().waitFor();
      if (path === "/attempts") {
        // The attempt detail dialog, too.
        await page.getByRole("button", { name: /^Details of attempt/ }).first().click();
        await page.getByRole("dialog").waitFor();
      }
      expect(await page.evaluate(() => (window as unknown as { __csp: string[] }).__csp), path).toEqual([]);
      await expect.poll(() => inFlight.size).toBe(0);
      guard.assertClean();
    }
  }, 120_000);

  it("cannot be framed by another origin", async () => {
    const page = await browser.context.newPage();
    const refused: string[] = [];
    page.on("console", (m) => refused.push(m.text()));
    await page.goto(`${sink.url}/framer`);
    await expect.poll(() => refused.some((t) => /frame-ancestors|X-Frame-Options/i.test(t))).toBe(true);
    const frame = page.frames().find((f) => f !== page.mainFrame())!;
    expect(await frame.locator("#root").count()).toBe(0);
    await page.close();
  });
});
