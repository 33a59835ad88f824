/**
 * Invites in the admin UI, in headless chromium against the compiled binary
 * (docs/teams.md, "Members and invites"): the owner invites an admin on the
 * Members page, who opens the link in a browser of their own, sets a name
 * and password and lands signed in with that role; the admin invites a
 * viewer the same way, who sees the members but no button to change them;
 * the spent link, opened again, shows the refusal.
 */
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { launchBrowser, screenshot, type Browser, type Hookrelay } from "./helpers";
import { useBinaryAndBrowser } from "./fixture";

let server: Hookrelay;
let owner: Browser;
const invitees: Browser[] = [];

useBinaryAndBrowser({ login: true }, (s) => ({ server, browser: owner } = s));
afterEach(() => invitees.forEach((b) => b.guard.assertClean()));
afterAll(async () => {
  await Promise.all(invitees.map((b) => b.close()));
});

/** On the Members page of `by`: invites `email` as `role`; returns the link the page shows once. */
async function inviteThroughUi(by: Browser, email: string, role: string, shot?: string): Promise<string> {
  const { page } = by;
  await page.goto(server.url + "/members");
  await page.getByRole("button", { name: "Invite member" }).click();
  const form = page.getByRole("form", { name: "Invite member" });
  await form.getByLabel("Email").fill(email);
  await form.getByLabel("Role").selectOption(role);
  await form.getByRole("button", { name: "Invite" }).click();
  const box = page.getByRole("region", { name: "Invite link" });
  await box.waitFor();
  const url = await box.getByLabel("Invite link").inputValue();
  expect(url).toMatch(/\/accept#token=[A-Za-z0-9_-]{20,}$/);
  if (shot) await screenshot(page, shot);
  await box.getByRole("button", { name: "Done" }).click();
  await page.getByRole("cell", { name: new RegExp(email) }).first().waitFor();
  return url;
}

/** Opens the link in a fresh browser (no session), sets name and password; resolves once the app shows. */
async function acceptInFreshBrowser(url: string, name: string, shot?: string): Promise<Browser> {
  const b = await launchBrowser();
  invitees.push(b);
  await b.page.goto(url);
  const form = b.page.getByRole("form", { name: "Accept invite" });
  await form.getByLabel("Your name").fill(name);
  await form.getByLabel("Password", { exact: true }).fill("a long invitee password");
  await form.getByLabel("Password again").fill("a long invitee password");
  if (shot) await screenshot(b.page, shot);
  await form.getByRole("button", { name: "Set password and sign in" }).click();
  await b.page.getByRole("navigation", { name: "Main" }).waitFor();
  // On the dashboard, the token gone from the address bar.
  expect(new URL(b.page.url()).pathname).toBe("/");
  expect(b.page.url()).not.toContain("token=");
  return b;
}

describe("inviting through the Members page", () => {
  let adminLink: string;
  let admin: Browser;

  it("the owner invites an admin, who accepts in their own browser and is signed in as admin", async () => {
    adminLink = await inviteThroughUi(owner, "ada@e2e.local", "admin", "members-invite-link");
    await owner.page.getByRole("cell", { name: "invited" }).first().waitFor();

    admin = await acceptInFreshBrowser(adminLink, "Ada Lovelace", "accept-invite");
    await admin.page.goto(server.url + "/members");
    await admin.page.getByText("Your role here: admin").waitFor();
    await admin.page.getByRole("button", { name: "Invite member" }).waitFor();
    // An admin manages those below owner: the owner's row has no buttons for them, nor their own.
    expect(await admin.page.getByRole("button", { name: "Remove admin@e2e.local" }).count()).toBe(0);
    expect(await admin.page.getByRole("button", { name: "Remove ada@e2e.local" }).count()).toBe(0);
    await screenshot(admin.page, "members-as-admin");

    await owner.page.reload();
    await owner.page.getByRole("cell", { name: /Ada Lovelace/ }).first().waitFor();
    await expect.poll(async () => owner.page.getByRole("row", { name: /Ada Lovelace/ }).getByRole("cell", { name: "active" }).count()).toBe(1);
  });

  it("the admin invites a viewer, who sees the members and no button to change them", async () => {
    const viewerLink = await inviteThroughUi(admin, "vic@e2e.local", "viewer");
    const viewer = await acceptInFreshBrowser(viewerLink, "Vic Viewer");
    await viewer.page.goto(server.url + "/members");
    await viewer.page.getByText("Your role here: viewer").waitFor();
    await viewer.page.getByRole("cell", { name: /Ada Lovelace/ }).first().waitFor();
    expect(await viewer.page.getByRole("button", { name: "Invite member" }).count()).toBe(0);
    expect(await viewer.page.getByRole("button", { name: /^(Remove|Disable|Enable) / }).count()).toBe(0);
    expect(await viewer.page.getByRole("combobox", { name: /^Role of / }).count()).toBe(0);
    await screenshot(viewer.page, "members-as-viewer");
  });

  it("a link used once, opened again, shows the refusal and signs nobody in", async () => {
    const again = await launchBrowser();
    invitees.push(again);
    again.guard.expectResponse(400, "/v1/auth/invites/accept");
    await again.page.goto(adminLink);
    const form = again.page.getByRole("form", { name: "Accept invite" });
    await form.getByLabel("Password", { exact: true }).fill("someone else's password");
    await form.getByLabel("Password again").fill("someone else's password");
    await form.getByRole("button", { name: "Set password and sign in" }).click();
    const refusal = again.page.getByRole("region", { name: "Link refused" });
    await refusal.waitFor();
    expect(await refusal.getByRole("alert").textContent()).toContain("invalid, already used or expired");
    await screenshot(again.page, "accept-invite-spent");
    expect(await again.page.getByRole("navigation", { name: "Main" }).count()).toBe(0);
  });
});
