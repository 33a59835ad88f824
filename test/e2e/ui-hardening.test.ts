/**
 * The admin UI's side of docs/admin-ui.md, "Conventions" and "Delivery
 * attempts and rejected events", in headless chromium against the compiled
 * binary: a login page that asks only how one may sign in, forms whose errors sit next to
 * their fields in words, a new connection with nothing chosen for the user and
 * no silently dropped rule, destructive confirmations that look it, a DLQ
 * redrive that starts on a destination with entries, failed attempts on the
 * dashboard, and rejected events: why nothing was delivered, the server's
 * refusal to retry one, "Deliver anyway" (force), bulk retry's skipped count,
 * and attempt times (sent, or scheduled while queued).
 *
 * Setup goes through the API with the browser's session; what is tested goes
 * through the UI. The parts that need the API of docs/delivery.md, "Retry, bulk
 * retry, redrive" and "Delivery attempts API" (`forced`, `skipped`, `sent_at`) look at what the server answers and are
 * skipped, saying so, against a server without them.
 */
import { createHmac, randomUUID } from "node:crypto";
import type { Request } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import type { Sink } from "../helpers/sink";
import { loginThroughUi, screenshot, type Browser, type Hookrelay, sessionCall } from "./helpers";
import { useBinaryAndBrowser } from "./fixture";

let server: Hookrelay;
let browser: Browser;
let sink: Sink;

const SECRET = "hardening-secret";
const ids = { github: "", ingest: "", ok: "", slow: "", dead: "", forged: "", good: "" };
/** Requests to /v1 the page made, for tests that check what was (not) asked. */
const apiRequests: Request[] = [];

useBinaryAndBrowser({ sink: true }, (s) => ({ server, browser, sink } = s));
beforeAll(async () => {
  sink.respond = (req) => (req.path.startsWith("/ok") ? new Response("ok") : new Response("down for maintenance", { status: 503 }));
  browser.page.on("request", (req) => {
    if (new URL(req.url()).pathname.startsWith("/v1/")) apiRequests.push(req);
  });
});

const call = <T>(method: string, path: string, body?: unknown) => sessionCall<T>(browser, server.url, method, path, body);

/** A webhook signed as GitHub signs it; a wrong secret makes it a forgery the source rejects. */
async function sendGithub(secret: string, payload: unknown = { ref: "refs/heads/main", id: randomUUID() }) {
  const body = JSON.stringify(payload);
  const res = await fetch(ids.ingest, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-github-event": "push",
      "x-github-delivery": randomUUID(),
      "x-hub-signature-256": "sha256=" + createHmac("sha256", secret).update(body).digest("hex"),
    },
    body,
  });
  const json = (await res.json()) as { event_id?: string; error?: { details?: { event_id?: string } } };
  return json.event_id ?? json.error!.details!.event_id!;
}

interface Attempt {
  id: string;
  status: string;
  event_id: string;
  sent_at?: string | null;
  forced?: number | null;
}
const attemptsOf = async (query: string) => (await call<{ delivery_attempts: Attempt[] }>("GET", `/delivery-attempts?${query}`)).delivery_attempts;

async function waitFor<T>(fn: () => Promise<T | null | undefined | false>, what: string, ms = 15_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("the login page", () => {
  it("asks the server only how one may sign in before the user logs in, so the console stays clean", async () => {
    const { page } = browser;
    apiRequests.length = 0;
    await page.goto(server.url + "/events");
    await page.getByRole("heading", { name: "Log in" }).waitFor();
    // Give a late probe time to show up.
    await page.waitForTimeout(300);
    expect(apiRequests.map((r) => new URL(r.url()).pathname)).toEqual(["/v1/auth/methods"]);
    await loginThroughUi(page, browser.guard, server.url, "/events");
    await page.getByRole("heading", { name: "Events", level: 1 }).waitFor();
  });

  it("asks once after the session is gone behind its back, then no more", async () => {
    const { page, guard, context } = browser;
    await context.clearCookies();
    // The browser still thinks it is logged in: one 401, then the login form.
    guard.expectResponse(401, "/v1/auth/me");
    await page.reload();
    await page.getByRole("heading", { name: "Log in" }).waitFor();
    guard.assertClean();
    apiRequests.length = 0;
    await page.reload();
    await page.getByRole("heading", { name: "Log in" }).waitFor();
    await page.waitForTimeout(300);
    expect(apiRequests.map((r) => new URL(r.url()).pathname)).toEqual(["/v1/auth/methods"]);
    await loginThroughUi(page, guard, server.url, "/");
  });
});

describe("setup", () => {
  it("has a GitHub source, a working, a slow-to-retry and a dead destination, each connected", async () => {
    const { source } = await call<{ source: { id: string; ingest_url: string } }>("POST", "/sources", { name: "GitHub", template: "github", verification_secret: SECRET });
    ids.github = source.id;
    ids.ingest = source.ingest_url;
    // Destinations are listed newest first: the dead one comes last, so the DLQ redrive has to look past the others.
    ids.dead = (await call<{ destination: { id: string } }>("POST", "/destinations", { name: "Legacy ERP", url: `${sink.url}/dead`, max_retries: 0 })).destination.id;
    ids.slow = (await call<{ destination: { id: string } }>("POST", "/destinations", { name: "Flaky CRM", url: `${sink.url}/slow`, max_retries: 3, retry_strategy: "linear", retry_interval_seconds: 3600 })).destination.id;
    ids.ok = (await call<{ destination: { id: string } }>("POST", "/destinations", { name: "Billing API", url: `${sink.url}/ok` })).destination.id;
    for (const [name, id] of [["to billing", ids.ok], ["to crm", ids.slow], ["to erp", ids.dead]] as const) {
      await call("POST", "/connections", { name: `GitHub ${name}`, source_id: ids.github, destination_id: id });
    }
    ids.good = await sendGithub(SECRET);
    ids.forged = await sendGithub("not the secret");
    await sink.waitFor(3);
    await waitFor(async () => (await attemptsOf(`event_id=${ids.good}&status=queued`)).length === 1, "the CRM retry to be queued");
    await waitFor(async () => (await attemptsOf("is_dlq=1")).length === 1, "the ERP delivery in the DLQ");
  });
});

describe("form errors", () => {
  it("puts each API message next to its field, in words, not as a path", async () => {
    const { page, guard } = browser;
    await page.goto(`${server.url}/sources/${ids.github}`);
    const settings = page.getByRole("form", { name: "Source settings" });
    guard.expectResponse(400, "/v1/sources/");
    await settings.getByLabel("Allowlist").fill("10.0.0.0/8\nnonsense\n192.0.2.1/99");
    await settings.getByRole("button", { name: "Save settings" }).click();
    const allow = settings.getByLabel("Allowlist");
    await expect.poll(() => allow.getAttribute("aria-invalid")).toBe("true");
    const errorId = (await allow.getAttribute("aria-describedby"))!.split(" ")[0]!;
    const message = (await page.locator(`[id="${errorId}"]`).textContent())!;
    // Both bad lines, each named by its value; no API path anywhere on the form.
    expect(message).toContain('"nonsense" is not');
    expect(message).toContain('"192.0.2.1/99" is not');
    await expect(settings.textContent()).resolves.not.toMatch(/ip_allowlist|Request validation failed/);
    await screenshot(page, "40-source-errors-in-words");

    await page.goto(`${server.url}/destinations/new`);
    const form = page.getByRole("form", { name: "New destination" });
    await form.getByLabel("Name").fill("Broken settings");
    await form.getByLabel("URL").fill(`${sink.url}/x`);
    await form.getByLabel("Extra headers").fill("bad header: 1");
    await form.getByLabel("Timeout (ms)").fill("5");
    guard.expectResponse(400, "/v1/destinations");
    await form.getByRole("button", { name: "Create destination" }).click();
    const timeout = form.getByLabel("Timeout (ms)");
    await expect.poll(() => timeout.getAttribute("aria-invalid")).toBe("true");
    await form.getByText("Must be at least 100").waitFor();
    await form.getByText("“bad header” is not an allowed name").waitFor();
    await expect(form.textContent()).resolves.not.toMatch(/Too small|expected number|Invalid key in record|headers\.bad/);
    await screenshot(page, "41-destination-errors-in-words");
  });
});

describe("the new-connection form", () => {
  it("chooses no source or destination for the user", async () => {
    const { page } = browser;
    await page.goto(`${server.url}/connections/new`);
    const form = page.getByRole("form", { name: "New connection" });
    await expect(form.getByLabel("Source").inputValue()).resolves.toBe("");
    await expect(form.getByLabel("Destination").inputValue()).resolves.toBe("");
    await form.getByLabel("Name").fill("Nowhere yet");
    await form.getByRole("button", { name: "Create connection" }).click();
    await form.getByText("Pick the source whose events to deliver").waitFor();
    await form.getByText("Pick where to deliver them").waitFor();
  });

  it("refuses an empty filter rule next to it instead of dropping it, and puts the API's rule errors on their rule", async () => {
    const { page, guard } = browser;
    const form = page.getByRole("form", { name: "New connection" });
    await form.getByLabel("Source").selectOption({ label: "GitHub" });
    await form.getByLabel("Destination").selectOption({ label: "Billing API" });
    await form.getByRole("button", { name: "Add rule" }).click();
    await form.getByRole("button", { name: "Add rule" }).click();
    const first = form.getByRole("group", { name: "Rule 1" });
    const second = form.getByRole("group", { name: "Rule 2" });
    await first.getByLabel("Field").fill("body.ref");
    await first.getByLabel("Operator").selectOption("regex");
    await first.getByLabel("Value").fill("(unclosed");

    apiRequests.length = 0;
    await form.getByRole("button", { name: "Create connection" }).click();
    await second.getByText("Fill in this rule or remove it").waitFor();
    await expect(second.getByLabel("Field").getAttribute("aria-invalid")).resolves.toBe("true");
    expect(apiRequests.filter((r) => r.method() === "POST")).toEqual([]);
    await screenshot(page, "42-connection-empty-rule");

    // With the empty rule gone, the server's complaint about rule 1's value lands on that value.
    await second.getByRole("button", { name: "Remove rule 2" }).click();
    guard.expectResponse(400, "/v1/connections");
    await form.getByRole("button", { name: "Create connection" }).click();
    const value = first.getByLabel("Value");
    await expect.poll(() => value.getAttribute("aria-invalid")).toBe("true");
    await expect(first.textContent()).resolves.toMatch(/regular expression/i);
    await expect(form.textContent()).resolves.not.toContain("filter_rules");
    await screenshot(page, "43-connection-rule-error");
  });
});

describe("destructive confirmations", () => {
  it("are red alert dialogs that say what is lost", async () => {
    const { page } = browser;
    await page.goto(`${server.url}/destinations/${ids.dead}`);
    await page.getByRole("button", { name: "Delete" }).click();
    const dialog = page.getByRole("alertdialog", { name: "Delete this destination?" });
    await dialog.waitFor();
    await expect(dialog.textContent()).resolves.toMatch(/never sent.*dead-letter queue can no longer be redriven.*cannot be undone/s);
    const confirm = dialog.getByRole("button", { name: "Delete destination" });
    const red = await confirm.evaluate((b) => getComputedStyle(b).backgroundColor);
    const danger = await page.evaluate(() => {
      const probe = document.createElement("span");
      probe.style.color = "var(--danger)";
      document.body.append(probe);
      const c = getComputedStyle(probe).color;
      probe.remove();
      return c;
    });
    expect(red).toBe(danger);
    // Cancel has the focus: Enter does not destroy anything.
    await expect(dialog.getByRole("button", { name: "Cancel" }).evaluate((b) => b === document.activeElement)).resolves.toBe(true);
    await screenshot(page, "44-destination-delete-confirm");
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "hidden" });
  });
});

describe("the DLQ redrive", () => {
  it("starts on a destination that has entries in the DLQ, with the sizes shown", async () => {
    const { page } = browser;
    await page.goto(`${server.url}/attempts?is_dlq=1`);
    const panel = page.getByRole("region", { name: "Redrive" });
    const select = panel.getByLabel("Destination");
    await expect.poll(() => select.inputValue()).toBe(ids.dead);
    await expect(select.locator("option:checked").textContent()).resolves.toBe("Legacy ERP (1 in the DLQ)");
    await expect(select.locator(`option[value="${ids.ok}"]`).textContent()).resolves.toBe("Billing API (empty)");
    await screenshot(page, "45-dlq-redrive-preselected");
  });
});

describe("the dashboard", () => {
  it("charts failed delivery attempts beside received and delivered events", async () => {
    const { page } = browser;
    await page.goto(`${server.url}/`);
    const chart = page.getByRole("region", { name: "Events over 24 hours" });
    await chart.getByText("failed attempts").waitFor();
    // CRM's first try and ERP's only one failed.
    await expect(chart.getByRole("img").getAttribute("aria-label")).resolves.toMatch(/2 failed delivery attempts/);
    await expect(chart.getByTestId("failed-bar").count()).resolves.toBe(1);
    await screenshot(page, "46-dashboard-failures");
  });
});

describe("a rejected event", () => {
  it("says why nothing was delivered: the signature check, not a missing connection", async () => {
    const { page } = browser;
    await page.goto(`${server.url}/events/${ids.forged}`);
    const note = page.getByTestId("rejected-note");
    await note.waitFor();
    await expect(note.textContent()).resolves.toMatch(/signature did not verify \(signature does not match\)/);
    await expect(page.getByText("No deliveries yet").count()).resolves.toBe(0);
    await expect(page.getByText("Connect this source to a destination").count()).resolves.toBe(0);
    await screenshot(page, "47-rejected-event");
  });

  it("shows the server's refusal to retry it, and delivers it only through a red “Deliver anyway”", async () => {
    const { page, guard } = browser;
    await page.goto(`${server.url}/events/${ids.forged}`);
    guard.expectResponse(409, `/v1/events/${ids.forged}/retry`);
    await page.getByRole("button", { name: "Retry", exact: true }).click();
    const refused = page.getByTestId("retry-refused");
    await refused.waitFor();
    // The server's own words, whatever they are, not a generic failure.
    const res = await browser.context.request.fetch(`${server.url}/v1/events/${ids.forged}/retry`, { method: "POST", headers: { origin: server.url }, data: {} });
    expect(res.status()).toBe(409);
    const reason = ((await res.json()) as { error: { message: string } }).error.message;
    await expect(refused.textContent()).resolves.toContain(reason);
    await screenshot(page, "48-rejected-retry-refused");

    await refused.getByRole("button", { name: "Deliver anyway…" }).click();
    const dialog = page.getByRole("alertdialog", { name: "Deliver a rejected event?" });
    await expect(dialog.textContent()).resolves.toMatch(/forged/);
    await screenshot(page, "49-deliver-anyway-confirm");
    const sent = page.waitForRequest((r) => r.url().endsWith(`/v1/events/${ids.forged}/retry`) && r.method() === "POST");
    await dialog.getByRole("button", { name: "Deliver anyway" }).click();
    expect((await sent).postDataJSON()).toEqual({ force: true });
    await page.getByText(/Delivering anyway: queued 3 deliveries/).waitFor();
    const table = page.getByRole("table", { name: "Delivery attempts" });
    await table.locator("tbody tr", { hasText: "forced" }).first().waitFor({ timeout: 15_000 });
    await screenshot(page, "50-rejected-delivered-anyway");
  });
});

describe("Retry all…", () => {
  it("says how many rejected events it skipped", async () => {
    const { page } = browser;
    const forged = await sendGithub("still not the secret");
    await page.goto(`${server.url}/events?status=rejected`);
    await page.locator(`tr[data-row-id="${forged}"]`).waitFor();
    await page.getByRole("button", { name: "Retry matching…" }).click();
    const dialog = page.getByRole("dialog", { name: "Retry these events?" });
    await expect(dialog.textContent()).resolves.toContain("Rejected events");
    const answer = page.waitForResponse((r) => new URL(r.url()).pathname === "/v1/events/retry");
    await dialog.getByRole("button", { name: /^Retry \d+ events?$/ }).click();
    const started = (await (await answer).json()) as { job_id: string | null; total: number; skipped: number };
    // Only rejected events match: nothing may be retried, so no job is created.
    expect(started).toMatchObject({ job_id: null, total: 0 });
    expect(started.skipped).toBeGreaterThanOrEqual(1);
    await page.getByText(new RegExp(`Nothing to retry: ${started.skipped} rejected events? skipped`)).first().waitFor();
    await screenshot(page, "51-bulk-retry-skipped");
    await expect(page.getByRole("region", { name: "Bulk retry" }).count()).resolves.toBe(0);
  });
});

describe("attempt times", () => {
  it("shows an attempt not yet sent as such, not as empty “None.” sections", async () => {
    const { page } = browser;
    await page.goto(`${server.url}/attempts?status=queued`);
    const row = page.locator("tbody tr", { hasText: "Flaky CRM" }).first();
    await row.getByRole("button", { name: /Details of attempt/ }).click();
    const dialog = page.getByRole("dialog", { name: "Delivery attempt" });
    await dialog.getByText("No response yet: the request has not been sent.").waitFor();
    await expect(dialog.getByRole("region", { name: "Request" }).textContent()).resolves.toContain("Not sent yet");
    await expect(dialog.getByText("None.").count()).resolves.toBe(0);
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "hidden" });
  });

  it("shows the sent time, and “scheduled for …” for a queued retry, in the list, the detail and the event", async () => {
    const { page } = browser;
    await page.goto(`${server.url}/attempts?destination_id=${ids.slow}`);
    const queued = page.locator("tbody tr", { hasText: "queued" }).first();
    // Due an hour after the first failure.
    await expect(queued.locator("td").first().textContent()).resolves.toMatch(/^scheduled for .*\(in (59|60) min\)$/);
    const failed = page.locator("tbody tr", { hasText: "failed" }).first();
    await expect(failed.locator("td").first().textContent()).resolves.toMatch(/ago|just now/);
    await screenshot(page, "52-attempts-scheduled");

    await queued.getByRole("button", { name: /Details of attempt/ }).click();
    const dialog = page.getByRole("dialog", { name: "Delivery attempt" });
    await expect(dialog.getByRole("region", { name: "Request" }).textContent()).resolves.toMatch(/Not sent yet: scheduled for .*\(in (59|60) min\)/);
    await screenshot(page, "53-attempt-scheduled-detail");
    await page.keyboard.press("Escape");

    await page.goto(`${server.url}/events/${ids.good}`);
    const table = page.getByRole("table", { name: "Delivery attempts" });
    const row = table.locator("tbody tr", { hasText: "queued" });
    await expect(row.textContent()).resolves.toMatch(/scheduled for/);
    await screenshot(page, "54-event-attempt-scheduled");
  });
});
