/**
 * The admin UI in headless chromium against the compiled binary: log in
 * through the real form, create an API key (shown once), use it, revoke it.
 */
import { describe, expect, it } from "vitest";
import { ADMIN, screenshot, type Browser, type Hookrelay } from "./helpers";
import { useBinaryAndBrowser } from "./fixture";

let server: Hookrelay;
let browser: Browser;

useBinaryAndBrowser({}, (s) => ({ server, browser } = s));

describe("login", () => {
  it("refuses a wrong password with a readable message, then logs in", async () => {
    const { page, guard } = browser;
    await page.goto(server.url + "/api-keys");
    await page.getByRole("heading", { name: "Log in" }).waitFor();
    await screenshot(page, "01-login");

    // Empty form: messages next to the fields, no request.
    await page.getByRole("button", { name: "Log in" }).click();
    await page.getByText("Enter your email").waitFor();
    await page.getByText("Enter your password").waitFor();

    guard.expectResponse(401, "/v1/auth/login");
    await page.getByLabel("Email").fill(ADMIN.email);
    await page.getByLabel("Password").fill("wrong password");
    await page.getByRole("button", { name: "Log in" }).click();
    await page.getByRole("alert").filter({ hasText: "Invalid email or password" }).waitFor();
    await screenshot(page, "02-login-error");

    await page.getByLabel("Password").fill(ADMIN.password);
    await page.getByRole("button", { name: "Log in" }).click();
    // The deep link survives the login.
    await page.getByRole("heading", { name: "API keys", level: 1 }).waitFor();
    expect(new URL(page.url()).pathname).toBe("/api-keys");
  });

  it("shows the shell: every area in the sidebar and the current environment", async () => {
    const { page } = browser;
    const nav = page.getByRole("navigation", { name: "Main" });
    for (const area of ["Dashboard", "Sources", "Events", "Destinations", "Connections", "Delivery attempts", "Replay", "API keys"]) {
      await nav.getByRole("link", { name: area }).waitFor();
    }
    await expect(nav.getByRole("link", { name: "API keys" }).getAttribute("aria-current")).resolves.toBe("page");
    const me = await (await fetch(server.url + "/v1/auth/me", { headers: { cookie: await sessionCookie() } })).json();
    const env = await page.getByTestId("environment").textContent();
    expect(env).toContain("Environment");
    // The environment's name when the API gives one, else its id (in full on hover).
    expect(me.env_name ? env?.includes(me.env_name) : env?.includes(me.env_id.slice(-8))).toBe(true);
    await expect(page.getByTestId("environment").getAttribute("title")).resolves.toContain(me.env_id);
    await page.getByText(ADMIN.email).waitFor();
  });
});

describe("API keys", () => {
  let plaintext = "";

  it("starts empty and says what to do", async () => {
    const { page } = browser;
    await page.getByText("No API keys yet").waitFor();
    await screenshot(page, "03-api-keys-empty");
  });

  it("creates a key and shows it once with a copy button", async () => {
    const { page } = browser;
    await page.getByRole("button", { name: "Create your first key" }).click();
    const form = page.getByRole("form", { name: "Create API key" });
    // The name field has focus, so the keyboard alone can fill and submit.
    await expect(form.getByLabel("Name").evaluate((el) => el === document.activeElement)).resolves.toBe(true);
    await form.getByRole("button", { name: "Create key" }).click();
    await form.getByText("Give the key a name").waitFor();
    // The message sits next to the field, and focus goes back to it.
    await expect(form.getByLabel("Name").getAttribute("aria-invalid")).resolves.toBe("true");

    await page.keyboard.type("deploy script");
    await page.keyboard.press("Enter");
    const box = page.getByRole("region", { name: "New API key" });
    await box.waitFor();
    plaintext = await box.getByLabel("New API key").inputValue();
    expect(plaintext).toMatch(/^hr_/);
    await box.getByRole("button", { name: "Copy", exact: true }).click();
    await box.getByRole("button", { name: "Copied", exact: true }).waitFor();

    const row = page.locator("tbody tr", { hasText: "deploy script" });
    await row.waitFor();
    await expect(row.textContent()).resolves.toContain(plaintext.slice(0, 12));
    await expect(row.textContent()).resolves.toContain("active");
    await screenshot(page, "04-api-key-created");

    // The key works against the API.
    const res = await fetch(server.url + "/v1/auth/me", { headers: { "x-api-key": plaintext } });
    expect(res.status).toBe(200);
  });

  it("never shows the key again", async () => {
    const { page } = browser;
    await page.getByRole("button", { name: "I have copied it" }).click();
    await page.getByRole("region", { name: "New API key" }).waitFor({ state: "detached" });
    expect(await page.content()).not.toContain(plaintext);
    await page.reload();
    await page.locator("tbody tr", { hasText: "deploy script" }).waitFor();
    expect(await page.content()).not.toContain(plaintext);
    // Usage is counted: the request above shows up after a reload.
    await expect(page.locator("tbody tr", { hasText: "deploy script" }).locator("td.num").textContent()).resolves.toBe("1");
  });

  it("revokes a key after confirmation; it stops working at once", async () => {
    const { page } = browser;
    await page.getByRole("button", { name: "Revoke key deploy script" }).click();
    const dialog = page.getByRole("alertdialog", { name: "Revoke this key?" });
    await dialog.waitFor();
    await screenshot(page, "05-api-key-revoke-confirm");
    // Escape cancels.
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "hidden" });
    await expect(page.locator("tbody tr", { hasText: "deploy script" }).textContent()).resolves.toContain("active");

    await page.getByRole("button", { name: "Revoke key deploy script" }).click();
    await dialog.getByRole("button", { name: "Revoke key" }).click();
    await dialog.waitFor({ state: "hidden" });
    await page.locator("tbody tr", { hasText: "deploy script" }).getByText("revoked").waitFor();
    await expect(page.getByRole("button", { name: "Revoke key deploy script" }).count()).resolves.toBe(0);
    await screenshot(page, "06-api-key-revoked");

    const res = await fetch(server.url + "/v1/auth/me", { headers: { "x-api-key": plaintext } });
    expect(res.status).toBe(401);
  });
});

describe("layout", () => {
  it("is readable at phone width, with the menu behind a button", async () => {
    const { page } = browser;
    await page.setViewportSize({ width: 390, height: 844 });
    try {
    const sidebar = page.locator("#sidebar");
    await page.getByRole("button", { name: "Open menu" }).waitFor();
    // No horizontal scrolling of the whole page.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await screenshot(page, "07-api-keys-phone");
    await page.getByRole("button", { name: "Open menu" }).click();
    await expect.poll(() => sidebar.evaluate((el) => el.getBoundingClientRect().left)).toBe(0);
    await screenshot(page, "08-menu-phone");
    await sidebar.getByRole("link", { name: "API keys" }).click();
    // Choosing a page closes the menu.
    await expect.poll(() => sidebar.evaluate((el) => el.getBoundingClientRect().right)).toBeLessThanOrEqual(0);
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  it("follows a dark system theme", async () => {
    const { page } = browser;
    await page.emulateMedia({ colorScheme: "dark" });
    const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    expect(bg).toBe("rgb(17, 20, 24)");
    await screenshot(page, "09-api-keys-dark");
    await page.emulateMedia({ colorScheme: "light" });
  });
});

describe("keyboard", () => {
  it("reaches the content and every area without a mouse", async () => {
    const { page } = browser;
    await page.goto(server.url + "/api-keys");
    await page.getByRole("heading", { name: "API keys", level: 1 }).waitFor();
    // The first Tab offers a skip link straight to the content.
    await page.keyboard.press("Tab");
    await expect(page.evaluate(() => document.activeElement?.textContent)).resolves.toBe("Skip to content");
    // Tab on to the Sources link and open it with Enter.
    for (let i = 0; i < 10; i++) {
      await page.keyboard.press("Tab");
      if ((await page.evaluate(() => document.activeElement?.textContent)) === "Sources") break;
    }
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "Sources", level: 1 }).waitFor();
    // Focus moved to the page, so the next Tab is inside the content, not back in the sidebar.
    // The page moves focus once it has rendered, which may be just after its heading shows: waited for.
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe("main");
    await page.keyboard.press("Tab");
    await expect(page.evaluate(() => !!document.activeElement?.closest("#main"))).resolves.toBe(true);
    // Focus is visible.
    const outline = await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle);
    expect(outline).not.toBe("none");
    await page.goto(server.url + "/api-keys");
    await page.getByRole("heading", { name: "API keys", level: 1 }).waitFor();
  });
});

describe("logout", () => {
  it("ends the session", async () => {
    const { page } = browser;
    await page.getByRole("button", { name: "Log out" }).click();
    await page.getByRole("heading", { name: "Log in" }).waitFor();
    // Logged out, the app does not ask for a session it knows is gone (no 401 logged).
    await page.reload();
    await page.getByRole("heading", { name: "Log in" }).waitFor();
  });
});

async function sessionCookie() {
  const cookies = await browser.context.cookies(server.url);
  return cookies.map((c) => `${c.name}=${c.value}`).join("; ");
}
