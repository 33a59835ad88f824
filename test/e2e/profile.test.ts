/**
 * The profile page in headless chromium against the compiled binary: the
 * user opens it from their email in the sidebar, sees their sessions, signs
 * one out, and changes their password (docs/teams.md, "Accounts").
 */
import { describe, expect, it } from "vitest";
import { ADMIN, screenshot, type Browser, type Hookrelay } from "./helpers";
import { useBinaryAndBrowser } from "./fixture";

let server: Hookrelay;
let browser: Browser;

useBinaryAndBrowser({ login: true }, (s) => ({ server, browser } = s));

/** A session of the same user from somewhere else: another machine's curl. */
async function signInElsewhere(password: string) {
  const res = await fetch(server.url + "/v1/auth/login", { method: "POST", headers: { "content-type": "application/json", "user-agent": "curl/8.5.0" }, body: JSON.stringify({ email: ADMIN.email, password }) });
  expect(res.status).toBe(200);
  return res.headers.getSetCookie()[0]!.split(";")[0]!;
}
const meWith = (cookie: string) => fetch(server.url + "/v1/auth/me", { headers: { cookie } }).then((r) => r.status);
const loginStatus = (password: string) =>
  fetch(server.url + "/v1/auth/login", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: ADMIN.email, password }) }).then((r) => r.status);

describe("the profile page", () => {
  it("signs out another session, then changes the password, ending the rest but not this one", async () => {
    const { page, guard } = browser;
    const curl = await signInElsewhere(ADMIN.password);

    await page.getByRole("link", { name: ADMIN.email }).click();
    await page.getByRole("heading", { name: "Profile", level: 1 }).waitFor();
    const table = page.getByRole("table", { name: "Sessions" });
    await table.getByText("curl").waitFor();
    await expect.poll(() => table.getByRole("row").count()).toBe(3);
    await table.getByText("this session").waitFor();
    await screenshot(page, "profile-sessions");

    await page.getByRole("button", { name: /^Sign out curl/ }).click();
    await table.getByText("curl").waitFor({ state: "detached" });
    expect(await meWith(curl)).toBe(401);

    // Two more elsewhere, for the password change to end.
    const other = await signInElsewhere(ADMIN.password);
    await page.reload();
    await table.getByText("curl").waitFor();

    // A wrong current password is shown at its field, and changes nothing.
    guard.expectResponse(400, "/v1/auth/password");
    await page.getByLabel("Current password").fill("not the password at all");
    await page.getByLabel("New password", { exact: true }).fill("the profile page's new password");
    await page.getByLabel("New password again").fill("the profile page's new password");
    await page.getByRole("button", { name: "Change password" }).click();
    await page.getByRole("alert").filter({ hasText: "does not match" }).waitFor();
    await screenshot(page, "profile-wrong-password");
    expect(await meWith(other)).toBe(200);

    await page.getByLabel("Current password").fill(ADMIN.password);
    await page.getByRole("button", { name: "Change password" }).click();
    await page.getByText("Password changed; 1 other session signed out").waitFor();
    await table.getByText("curl").waitFor({ state: "detached" });
    await expect.poll(() => table.getByRole("row").count()).toBe(2);
    await screenshot(page, "profile-password-changed");

    expect(await meWith(other)).toBe(401);
    expect(await loginStatus(ADMIN.password)).toBe(401);
    expect(await loginStatus("the profile page's new password")).toBe(200);
    // The browser that changed it is still signed in.
    await page.reload();
    await page.getByRole("heading", { name: "Profile", level: 1 }).waitFor();
  });

  it("signs out everywhere else at once", async () => {
    const { page } = browser;
    const password = "the profile page's new password";
    const elsewhere = [await signInElsewhere(password), await signInElsewhere(password)];
    await page.goto(server.url + "/profile");
    const table = page.getByRole("table", { name: "Sessions" });
    await expect.poll(() => table.getByText("curl").count()).toBeGreaterThanOrEqual(2);

    await page.getByRole("button", { name: "Sign out everywhere else" }).click();
    await expect.poll(() => table.getByRole("row").count()).toBe(2);
    await table.getByText("this session").waitFor();
    for (const cookie of elsewhere) expect(await meWith(cookie)).toBe(401);
    expect(await page.getByRole("button", { name: "Sign out everywhere else" }).count()).toBe(0);

    // At phone width the table stacks and the form takes one column.
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, "profile-phone");
    await page.setViewportSize({ width: 1280, height: 800 });
  });
});
