/**
 * Organizations in the admin UI, in headless chromium against the compiled
 * binary: the instance's owner makes a second organization, switches to it
 * in the sidebar and back, and sees each one's own sources (docs/teams.md,
 * "Organizations").
 */
import { describe, expect, it } from "vitest";
import { screenshot, type Browser, type Hookrelay } from "./helpers";
import { useBinaryAndBrowser } from "./fixture";

let server: Hookrelay;
let browser: Browser;

useBinaryAndBrowser({ login: true }, (s) => ({ server, browser } = s));

async function createSource(name: string) {
  const { page } = browser;
  await page.goto(server.url + "/sources/new");
  await page.getByLabel("Name").first().fill(name);
  await page.getByRole("button", { name: /create source/i }).click();
  await page.getByRole("heading", { name, level: 1 }).waitFor();
}

describe("the organization switcher", () => {
  it("switches to another organization and back, showing each one's own sources", async () => {
    const { page } = browser;
    await createSource("Default team source");
    // Made through the API with the browser's session (the UI has no page for it yet).
    const status = await page.evaluate(async () => {
      const res = await fetch("/v1/organizations", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "Second Team" }) });
      await res.text();
      return res.status;
    });
    expect(status).toBe(201);

    await page.goto(server.url + "/sources");
    const switcher = page.getByTestId("organization-switcher");
    await switcher.waitFor();
    await page.getByText("Default team source").waitFor();
    await Promise.all([page.waitForEvent("load"), switcher.selectOption({ label: "Second Team" })]);
    await expect.poll(async () => page.getByTestId("organization-switcher").evaluate((el) => (el as HTMLSelectElement).selectedOptions[0]?.text)).toBe("Second Team");
    await screenshot(page, "organizations-switched");

    await createSource("Second team source");
    await page.goto(server.url + "/sources");
    await page.getByText("Second team source").waitFor();
    expect(await page.getByText("Default team source").count()).toBe(0);

    await Promise.all([page.waitForEvent("load"), page.getByTestId("organization-switcher").selectOption({ label: "default" })]);
    await page.getByText("Default team source").waitFor();
    expect(await page.getByText("Second team source").count()).toBe(0);
  });
});
