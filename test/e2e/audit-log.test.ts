/**
 * The Audit log page in headless chromium against the compiled binary: the
 * sidebar links it for the owner, it lists the changes made, filters them
 * by resource type and action, and shows a change as before → after with
 * secrets masked (docs/audit.md).
 */
import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { memberships, users } from "../../src/db/schema";
import { hex32 } from "../../src/contracts/ids";
import { openStoreOf } from "../helpers/database";
import { ADMIN, screenshot, sessionCall, type Browser, type Hookrelay } from "./helpers";
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

  it("is not linked for a viewer", async () => {
    const { page } = browser;
    // A viewer of the admin's organization, written to the server's store (members are managed elsewhere).
    const store = await openStoreOf(server.dataDir);
    const email = "viewer@e2e.local";
    const password = "a viewer's long password";
    try {
      const [admin] = await store.db.select().from(users).where(eq(users.email, ADMIN.email));
      const now = new Date().toISOString();
      const id = hex32();
      await store.db.insert(users).values({ id, email, passwordHash: await Bun.password.hash(password), orgId: admin!.orgId, envId: admin!.envId, createdAt: now });
      await store.db.insert(memberships).values({ id: hex32(), orgId: admin!.orgId, userId: id, role: "viewer", status: "active", envId: admin!.envId, createdAt: now, updatedAt: now });
    } finally {
      await store.close();
    }
    // The dashboard's first reads answered before the logout: one still in flight would end in a 401 (a console error).
    const loaded = ["/v1/stats", "/v1/cluster"].map((path) => page.waitForResponse((r) => new URL(r.url()).pathname === path));
    await page.goto(server.url + "/");
    await Promise.all(loaded);
    await page.getByRole("button", { name: "Log out" }).click();
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(password);
    await page.getByRole("button", { name: "Log in" }).click();
    const nav = page.getByRole("navigation", { name: "Main" });
    await nav.getByRole("link", { name: "Sources" }).waitFor();
    expect(await nav.getByRole("link", { name: "Audit log" }).count()).toBe(0);
  });
});
