/**
 * Environments in the admin UI, in headless chromium against the compiled
 * binary: create one on the Environments page, switch to it in the sidebar,
 * and see each environment's own sources (docs/decisions.md D19).
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

describe("the environment switcher", () => {
  it("creates an environment, switches to it, and shows only its sources", async () => {
    const { page } = browser;
    await createSource("Production orders");

    await page.goto(server.url + "/environments");
    await page.getByRole("button", { name: "Create environment" }).first().click();
    await page.getByRole("textbox", { name: "Name" }).fill("Staging");
    await page.getByRole("button", { name: "Create environment" }).last().click();
    await page.getByRole("cell", { name: "Staging", exact: true }).waitFor();

    // The switcher lists both once the page loads again; choosing one reloads the page in it.
    await page.goto(server.url + "/sources");
    const switcher = page.getByTestId("environment-switcher");
    await switcher.waitFor();
    await page.getByText("Production orders").waitFor();
    await Promise.all([page.waitForEvent("load"), switcher.selectOption({ label: "Staging" })]);
    const badge = page.getByTestId("environment");
    await expect.poll(async () => badge.textContent()).toContain("Staging");
    // The badge above the switcher keeps its height when the sidebar's links outgrow the window.
    expect((await badge.boundingBox())!.height).toBeGreaterThan(20);
    await screenshot(page, "environments-switched");

    await createSource("Staging orders");
    await page.goto(server.url + "/sources");
    await page.getByText("Staging orders").waitFor();
    expect(await page.getByText("Production orders").count()).toBe(0);

    // And back: production's source, not staging's.
    await Promise.all([page.waitForEvent("load"), page.getByTestId("environment-switcher").selectOption({ label: "production" })]);
    await page.getByText("Production orders").waitFor();
    expect(await page.getByText("Staging orders").count()).toBe(0);
  });
});
