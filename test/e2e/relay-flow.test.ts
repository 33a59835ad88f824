/**
 * The whole relay from the admin UI, in headless chromium against the
 * compiled binary: create a source from a template, send it a signed
 * webhook and watch it arrive live, open it, create a destination (a local
 * sink) and a connection with a filter and a previewed transform, retry the
 * event and see the delivery, redrive view, replay to completion, dashboard.
 */
import { createHmac, randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { Sink } from "../helpers/sink";
import { loginThroughUi, screenshot, type Browser, type Hookrelay } from "./helpers";
import { useBinaryAndBrowser } from "./fixture";

let server: Hookrelay;
let browser: Browser;
let sink: Sink;

const SECRET = "gh-webhook-secret";
const PAYLOAD = { ref: "refs/heads/main", repository: { name: "hookrelay", full_name: "acme/hookrelay" }, pusher: { name: "ada" } };
let ingestUrl = "";
let eventId = "";

useBinaryAndBrowser({ sink: true }, (s) => ({ server, browser, sink } = s));

/** Sends a webhook signed as GitHub signs it (X-Hub-Signature-256: sha256=<hex HMAC of the body>). */
async function sendGithub(payload: unknown, secret = SECRET, event = "push") {
  const body = JSON.stringify(payload);
  const res = await fetch(ingestUrl, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-github-event": event,
      "x-github-delivery": randomUUID(),
      "x-hub-signature-256": "sha256=" + createHmac("sha256", secret).update(body).digest("hex"),
    },
    body,
  });
  return { status: res.status, body: (await res.json()) as { event_id?: string; error?: { details?: { event_id?: string } } } };
}

describe("first visit", () => {
  it("logs in to a dashboard that says how to get started", async () => {
    const { page, guard } = browser;
    await loginThroughUi(page, guard, server.url, "/");
    await page.getByRole("heading", { name: "Dashboard", level: 1 }).waitFor();
    await page.getByRole("region", { name: "Getting started" }).waitFor();
    await page.getByRole("img", { name: /Events per hour/ }).waitFor();
    await screenshot(page, "10-dashboard-empty");
  });
});

describe("sources", () => {
  it("creates a source from a template with only the secret to fill", async () => {
    const { page } = browser;
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Sources" }).click();
    await page.getByText("No sources yet").waitFor();
    await screenshot(page, "11-sources-empty");
    await page.getByRole("link", { name: "Create your first source" }).click();

    const form = page.getByRole("form", { name: "New source" });
    await form.getByRole("radio", { name: /GitHub/ }).check();
    await form.getByLabel("Name").fill("GitHub production");
    // The secret is required with a template: the message sits next to the field.
    await form.getByRole("button", { name: "Create source" }).click();
    await form.getByText("Paste the signing secret you set in GitHub").waitFor();
    await form.getByLabel("GitHub signing secret").fill(SECRET);
    await screenshot(page, "12-source-new");
    await form.getByRole("button", { name: "Create source" }).click();

    await page.getByRole("heading", { name: /GitHub production/, level: 1 }).waitFor();
    ingestUrl = await page.getByRole("textbox", { name: "Ingest URL" }).inputValue();
    expect(ingestUrl).toMatch(new RegExp(`^${server.url}/v1/ingest/src_[0-9a-f]{32}$`));
    await page.getByRole("region", { name: "Ingest URL" }).getByRole("button", { name: "Copy" }).click();
    await page.getByRole("region", { name: "Ingest URL" }).getByRole("button", { name: "Copied" }).waitFor();
    await screenshot(page, "13-source-detail");
  });

  it("shows a bad setting's error next to its field, and pauses and resumes", async () => {
    const { page, guard } = browser;
    const settings = page.getByRole("form", { name: "Source settings" });
    guard.expectResponse(400, "/v1/sources/");
    await settings.getByLabel("Allowlist").fill("not-an-ip");
    await settings.getByRole("button", { name: "Save settings" }).click();
    const allow = settings.getByLabel("Allowlist");
    await expect.poll(() => allow.getAttribute("aria-invalid")).toBe("true");
    const describedBy = (await allow.getAttribute("aria-describedby"))!.split(" ")[0]!;
    await expect(page.locator(`[id="${describedBy}"]`).textContent()).resolves.toMatch(/not-an-ip|CIDR|address/i);
    await screenshot(page, "14-source-field-error");
    await allow.fill("");

    await page.getByRole("button", { name: "Pause" }).click();
    await page.getByText("Paused: requests are stored but held").waitFor();
    await page.getByRole("button", { name: "Resume" }).click();
    await page.getByRole("button", { name: "Pause" }).waitFor();
  });

  it("lists the source with its status and event count", async () => {
    const { page } = browser;
    await page.getByRole("link", { name: "← All sources" }).click();
    const row = page.locator("tbody tr", { hasText: "GitHub production" });
    await row.waitFor();
    await expect(row.textContent()).resolves.toContain("active");
    await row.getByRole("button", { name: "Copy ingest URL" }).click();
    await row.getByRole("button", { name: "Copied" }).waitFor();
    await screenshot(page, "15-sources-list");
  });
});

describe("events", () => {
  it("shows a signed webhook the moment it arrives, without a reload", async () => {
    const { page } = browser;
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Events" }).click();
    await page.getByText("Waiting for the first event").waitFor();
    await page.getByText("Live: new events appear as they arrive").waitFor();
    await screenshot(page, "16-events-waiting");

    const ok = await sendGithub(PAYLOAD);
    expect(ok.status).toBe(200);
    eventId = ok.body.event_id!;
    await page.locator(`tr[data-row-id="${eventId}"]`).waitFor();
    await expect(page.locator(`tr[data-row-id="${eventId}"]`).textContent()).resolves.toContain("verified");

    // A forged one is stored too, as failed verification, and shows up live as well.
    const bad = await sendGithub({ forged: true }, "wrong-secret");
    expect(bad.status).toBe(401);
    await expect.poll(() => page.locator("tbody tr").count()).toBe(2);
    await page.locator("tbody tr", { hasText: "failed" }).first().waitFor();
    await screenshot(page, "17-events-live");
  });

  it("filters by verification status", async () => {
    const { page } = browser;
    await page.getByLabel("Verification").selectOption("verified");
    await expect.poll(() => page.locator("tbody tr").count()).toBe(1);
    expect(new URL(page.url()).searchParams.get("verification_status")).toBe("verified");
    await page.getByRole("button", { name: "Clear filters" }).click();
    await expect.poll(() => page.locator("tbody tr").count()).toBe(2);
  });

  it("opens the detail: headers, pretty body, verification, no deliveries yet", async () => {
    const { page } = browser;
    await page.locator(`tr[data-row-id="${eventId}"]`).getByRole("link").click();
    await page.getByRole("heading", { name: eventId }).waitFor();
    const body = await page.getByTestId("event-body").textContent();
    expect(JSON.parse(body!)).toEqual(PAYLOAD);
    expect(body).toContain('\n  "ref"'); // pretty-printed
    await page.getByRole("region", { name: "Headers" }).getByText("x-github-event").waitFor();
    await expect(page.getByRole("region", { name: "Summary" }).textContent()).resolves.toContain("verified");
    await page.getByText("No deliveries yet").waitFor();
    await screenshot(page, "18-event-detail");
  });
});

describe("destinations and connections", () => {
  it("creates a destination pointing at a local sink", async () => {
    const { page } = browser;
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Destinations" }).click();
    await page.getByText("No destinations yet").waitFor();
    await page.getByRole("link", { name: "Create your first destination" }).click();
    const form = page.getByRole("form", { name: "New destination" });
    await form.getByLabel("Name").fill("Local sink");
    await form.getByLabel("URL").fill(`${sink.url}/hooks/github`);
    await form.getByLabel("Extra headers").fill("X-Team: platform");
    await screenshot(page, "19-destination-new");
    await form.getByRole("button", { name: "Create destination" }).click();
    await page.getByRole("heading", { name: "Local sink", level: 1 }).waitFor();
    await page.getByRole("button", { name: "Reveal secret" }).click();
    await expect(page.getByRole("textbox", { name: "Signing secret" }).inputValue()).resolves.toMatch(/^whsec_/);
    await screenshot(page, "20-destination-detail");
  });

  it("creates a connection with a filter and a transform previewed on the stored event", async () => {
    const { page, guard } = browser;
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Connections" }).click();
    await page.getByRole("link", { name: "Create your first connection" }).click();
    const form = page.getByRole("form", { name: "New connection" });
    await form.getByLabel("Name").fill("GitHub pushes to sink");
    // Nothing is chosen for the user.
    await expect(form.getByLabel("Source").inputValue()).resolves.toBe("");
    await expect(form.getByLabel("Destination").inputValue()).resolves.toBe("");
    await form.getByLabel("Source").selectOption({ label: "GitHub production" });
    await form.getByLabel("Destination").selectOption({ label: "Local sink" });

    await form.getByRole("button", { name: "Add rule" }).click();
    const rule = form.getByRole("group", { name: "Rule 1" });
    await rule.getByLabel("Field").fill("headers.x-github-event");
    await rule.getByLabel("Operator").selectOption("eq");
    await rule.getByLabel("Value").fill("push");

    await form.getByLabel("Reshape the body with JSONata before delivery").check();
    const expr = form.getByLabel("JSONata expression");
    // A broken expression: JSONata's message appears next to the field.
    guard.expectResponse(400, "/v1/connections/test-transform");
    await expr.fill('{"repo": repository.name');
    await form.getByRole("button", { name: "Preview transform" }).click();
    await expect.poll(() => expr.getAttribute("aria-invalid")).toBe("true");
    await screenshot(page, "21-connection-transform-error");

    await expr.fill('{"kind": $headers."x-github-event", "repo": repository.full_name, "by": pusher.name}');
    // The newest event that passed verification is picked, not the forged one.
    await expect(form.getByLabel("Preview on event").inputValue()).resolves.toBe(eventId);
    await form.getByRole("button", { name: "Preview transform" }).click();
    const result = form.getByTestId("transform-result");
    await result.waitFor();
    expect(JSON.parse((await result.textContent())!)).toEqual({ kind: "push", repo: "acme/hookrelay", by: "ada" });
    await screenshot(page, "22-connection-new");

    await form.getByRole("button", { name: "Create connection" }).click();
    await page.getByRole("form", { name: "Connection settings" }).waitFor();
    await page.getByRole("link", { name: "← All connections" }).click();
    const row = page.locator("tbody tr", { hasText: "GitHub pushes to sink" });
    await row.waitFor();
    await expect(row.textContent()).resolves.toContain("JSONata");
    await screenshot(page, "23-connections-list");
  });
});

describe("delivery", () => {
  it("retries the event and shows the delivery, transformed, at the sink", async () => {
    const { page } = browser;
    await page.goto(`${server.url}/events/${eventId}`);
    await page.getByRole("heading", { name: eventId }).waitFor();
    await page.getByRole("button", { name: "Retry", exact: true }).click();
    await page.getByText("Queued 1 delivery").waitFor();
    const attempts = page.getByRole("table", { name: "Delivery attempts" });
    await attempts.locator("tbody tr", { hasText: "success" }).waitFor({ timeout: 15_000 });
    await expect(attempts.textContent()).resolves.toContain("200");
    await expect(attempts.textContent()).resolves.toContain("manual");

    const [req] = await sink.waitFor(1);
    expect(JSON.parse(req!.body)).toEqual({ kind: "push", repo: "acme/hookrelay", by: "ada" });
    expect(req!.path).toBe("/hooks/github");
    expect(req!.headers["x-team"]).toBe("platform");
    expect(req!.headers["webhook-signature"]).toMatch(/^v1,/);
    await page.getByRole("heading", { name: eventId }).locator(".badge", { hasText: "delivered" }).waitFor();
    await screenshot(page, "24-event-delivered");
  });

  it("lists the attempt with its request and response", async () => {
    const { page } = browser;
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Delivery attempts" }).click();
    const row = page.locator("tbody tr", { hasText: "success" });
    await row.waitFor();
    await screenshot(page, "25-attempts");
    await row.getByRole("button", { name: /Details of attempt/ }).click();
    const dialog = page.getByRole("dialog", { name: "Delivery attempt" });
    await dialog.waitFor();
    await expect(dialog.textContent()).resolves.toContain(`${sink.url}/hooks/github`);
    await expect(dialog.getByLabel("Request headers").textContent()).resolves.toContain("x-hookrelay-event-id");
    await expect(dialog.getByLabel("Response body").textContent()).resolves.toContain("ok");
    await screenshot(page, "26-attempt-detail");
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "hidden" });

    await page.getByRole("tab", { name: "Dead-letter queue" }).click();
    await page.getByText("The dead-letter queue is empty").waitFor();
    await page.getByRole("region", { name: "Redrive" }).waitFor();
    await screenshot(page, "27-dlq");
  });
});

describe("replay", () => {
  it("replays a time range to the destination and shows the progress until done", async () => {
    const { page } = browser;
    const before = sink.requests.length;
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Replay" }).click();
    const form = page.getByRole("form", { name: "Start a replay" });
    await form.getByLabel("Only events from").selectOption({ label: "GitHub production" });
    await form.getByRole("button", { name: "Start replay" }).click();
    const job = page.getByRole("group", { name: "Replay to Local sink" });
    await job.waitFor();
    await job.getByText("completed").waitFor({ timeout: 20_000 });
    await expect(job.getByRole("progressbar").getAttribute("aria-valuenow")).resolves.toBe("100");
    await screenshot(page, "28-replay-done");
    await sink.waitFor(before + 1);
  });

  it("replays from a connection's page: through the connection, its filter and transform", async () => {
    const { page } = browser;
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Connections" }).click();
    await page.getByRole("link", { name: "GitHub pushes to sink" }).click();
    await page.getByRole("form", { name: "Connection settings" }).waitFor();
    await page.getByRole("main").getByRole("link", { name: "Replay", exact: true }).click();
    const form = page.getByRole("form", { name: "Start a replay" });
    await form.getByRole("note", { name: "Replay through a connection" }).getByRole("link", { name: "GitHub pushes to sink" }).waitFor();
    // The connection names the source and destination: no choice of them is offered.
    await expect(form.getByLabel("Only events from").count()).resolves.toBe(0);
    await screenshot(page, "28b-replay-connection");
    const before = sink.requests.length;
    await form.getByRole("button", { name: "Start replay" }).click();
    const job = page.getByRole("group", { name: "Replay to Local sink" }).first();
    await job.getByText("completed").waitFor({ timeout: 20_000 });
    const [delivered] = await sink.waitFor(before + 1).then((r) => r.slice(before));
    // Shaped by the connection's transform.
    expect(JSON.parse(delivered!.body)).toEqual({ kind: "push", repo: "acme/hookrelay", by: "ada" });
  });
});

describe("dashboard", () => {
  it("shows the day's traffic as a chart with the headline numbers", async () => {
    const { page } = browser;
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Dashboard" }).click();
    const received = page.getByRole("link", { name: /^Events received: / });
    await received.waitFor();
    await expect(received.getAttribute("aria-label")).resolves.toMatch(/^Events received: 2,/);
    await page.getByRole("img", { name: /2 received, 1 delivered/ }).waitFor();
    await page.getByRole("table", { name: "Slowest destinations" }).getByText("Local sink").waitFor();
    await screenshot(page, "29-dashboard");
    await page.emulateMedia({ colorScheme: "dark" });
    await screenshot(page, "30-dashboard-dark");
    await page.emulateMedia({ colorScheme: "light" });
  });

  it("stays readable at phone width", async () => {
    const { page } = browser;
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      await page.waitForTimeout(100);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await screenshot(page, "31-dashboard-phone");
      await page.getByRole("button", { name: "Open menu" }).click();
      await page.locator("#sidebar").getByRole("link", { name: "Events" }).click();
      await page.locator(`tr[data-row-id="${eventId}"]`).waitFor();
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await screenshot(page, "32-events-phone");
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });
});
