/**
 * The retry schedule field of the destination and endpoint forms, in
 * headless chromium against the compiled binary: a bad step is named under
 * the field before anything is sent, a good schedule is saved and shown
 * again when the form is reopened.
 */
import { describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { screenshot, sessionCall, type Browser, type Hookrelay } from "./helpers";
import { useBinaryAndBrowser } from "./fixture";

let server: Hookrelay;
let browser: Browser;

useBinaryAndBrowser({ login: true }, (s) => ({ server, browser } = s));

const call = <T>(method: string, path: string, body?: unknown) => sessionCall<T>(browser, server.url, method, path, body);

/** The message shown under a field (aria-describedby), or "" when it is valid. */
async function messageOf(page: Page, field: ReturnType<Page["getByLabel"]>) {
  if ((await field.getAttribute("aria-invalid")) !== "true") return "";
  const id = (await field.getAttribute("aria-describedby"))!.split(" ")[0]!;
  return (await page.locator(`[id="${id}"]`).textContent()) ?? "";
}

describe("a destination's retry schedule", () => {
  it("names a bad step under the field, then saves the schedule and shows it again", async () => {
    const { page } = browser;
    await page.goto(`${server.url}/destinations/new`);
    const form = page.getByRole("form", { name: "New destination" });
    await form.getByLabel("Name").fill("Scheduled sink");
    await form.getByLabel("URL").fill("https://example.com/hooks");
    const field = form.getByLabel("Retry schedule");
    await field.fill("5s, 5m, abc");
    await form.getByRole("button", { name: "Create destination" }).click();
    await expect.poll(() => messageOf(page, field)).toBe("“abc” is not a duration such as 5s, 5m, 2h or 1d");
    await field.fill("5s, 5m, 30m, 2h, 5h, 10h, 10h");
    await screenshot(page, "retry-schedule-destination-new");
    await form.getByRole("button", { name: "Create destination" }).click();
    await page.getByRole("heading", { name: "Scheduled sink", level: 1 }).waitFor();

    const id = new URL(page.url()).pathname.split("/").pop()!;
    const { destination } = await call<{ destination: { retry_schedule: string | null } }>("GET", `/destinations/${id}`);
    expect(destination.retry_schedule).toBe('["5s","5m","30m","2h","5h","10h","10h"]');
    await page.reload();
    await expect(page.getByLabel("Retry schedule").inputValue()).resolves.toBe("5s, 5m, 30m, 2h, 5h, 10h, 10h");
    await screenshot(page, "retry-schedule-destination-saved");
  });
});

describe("an endpoint's retry schedule", () => {
  it("is saved from the new endpoint form", async () => {
    const { page } = browser;
    const { application } = await call<{ application: { id: string } }>("POST", "/applications", { name: "Scheduled Co", uid: "scheduled" });
    await page.goto(`${server.url}/applications/${application.id}`);
    await page.getByRole("link", { name: "Add your first endpoint" }).click();
    const form = page.getByRole("form", { name: "New endpoint" });
    await form.getByLabel("URL").fill("https://example.com/endpoint");
    const field = form.getByLabel("Retry schedule (optional)");
    await field.fill("10s, 8d");
    await form.getByRole("button", { name: "Add endpoint" }).click();
    await expect.poll(() => messageOf(page, field)).toBe("“8d” is not between 1s and 7d");
    await field.fill("10s, 1h");
    await screenshot(page, "retry-schedule-endpoint-new");
    await form.getByRole("button", { name: "Add endpoint" }).click();
    await page.getByText("Endpoint added.").waitFor();
    const id = new URL(page.url()).pathname.split("/").pop()!;
    const { endpoint } = await call<{ endpoint: { retry_schedule: string | null } }>("GET", `/applications/scheduled/endpoints/${id}`);
    expect(endpoint.retry_schedule).toBe('["10s","1h"]');
  });
});
