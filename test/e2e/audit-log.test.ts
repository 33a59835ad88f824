/**
 * The Audit log page in headless chromium against the compiled binary: the
 * sidebar links it for the owner, it lists the changes made, filters them
 * by resource type and action, and shows a change as before → after with
 * secrets masked (docs/audit.md).
 */
import { describe, expect, it } from "vitest";
import { screenshot, sessionCall, type Browser, type Hookrelay } from "./helpers";
import { useBinaryAndBrowser } from "./fixture";

let server: Hookrelay;
let browser: Browser;

useBinaryAndBrowser({ login: true }, (s) => ({ server, browser } = s));

describe("the Audit log page", () => {
  it("lists who changed what, filters by resource type and action, and shows the fields before and after", async () => {
    const { page } = browser;
    const made = await sessionCall<{ destination: { id: string } }>(browser, server.url, "POST", "/destinations", {
      name: "Billing hooks",
      url: "https://billing.example.com/hooks",
      headers: { Authorization: "Bearer never-shown-e2e" },
    });
    await sessionCall(browser, server.url, "PATCH", `/destinations/${made.destination.id}`, { name: "Billing webhooks", timeout_ms: 5000 });
    await sessionCall(browser, server.url, "POST", "/sources", { name: "Orders" });

    await page.goto(server.url + "/");
    await page.getByRole("link", { name: "Audit log" }).click();
    await page.getByRole("heading", { name: "Audit log", level: 1 }).waitFor();
    const table = page.getByRole("table", { name: "Audit entries" });
    await table.getByText("Orders").first().waitFor();
    expect(await table.getByText("admin@e2e.local").count()).toBeGreaterThanOrEqual(3);

    await page.getByLabel("Resource type").selectOption("destination");
    await page.getByLabel("Action").selectOption("update");
    await expect.poll(async () => page.getByRole("row").count()).toBe(2);
    const row = page.getByRole("row").nth(1);
    expect(await row.textContent()).toContain("name: Billing hooks → Billing webhooks");
    expect(await row.textContent()).toContain("timeout_ms: 30000 → 5000");
    expect(await page.content()).not.toContain("never-shown-e2e");
    expect(page.url()).toContain("resource_type=destination");
    await screenshot(page, "audit-log");
  });
});
