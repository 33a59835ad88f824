/**
 * Single sign-on in headless chromium against the compiled binary and a real
 * OpenID Connect provider (`oidc-provider` on 127.0.0.1): the login page's
 * button, the provider's own sign-in page, and the dashboard signed in with
 * the role the provider's groups map to (docs/teams.md, "Single sign-on").
 */
import { afterAll, describe, expect, it } from "vitest";
import { OIDC_CLIENT, reservePort, startOidcProvider, type OidcTestProvider } from "../helpers/oidcProvider";
import { screenshot, sessionCall, type Browser, type Hookrelay } from "./helpers";
import { useBinaryAndBrowser } from "./fixture";

let server: Hookrelay;
let browser: Browser;
let provider: OidcTestProvider | undefined;
let providerPort: number;

useBinaryAndBrowser(
  {
    env: async () => {
      providerPort = await reservePort();
      return {
        HOOKRELAY_OIDC_ISSUER: `http://127.0.0.1:${providerPort}`,
        HOOKRELAY_OIDC_CLIENT_ID: OIDC_CLIENT.id,
        HOOKRELAY_OIDC_CLIENT_SECRET: OIDC_CLIENT.secret,
        HOOKRELAY_OIDC_NAME: "Acme SSO",
        HOOKRELAY_OIDC_SCOPES: "openid email profile groups",
        HOOKRELAY_OIDC_ALLOWED_DOMAINS: "acme.test",
        HOOKRELAY_OIDC_AUTO_PROVISION_ROLE: "viewer",
        HOOKRELAY_OIDC_ROLE_CLAIM: "groups",
        HOOKRELAY_OIDC_ROLE_MAP: "hookrelay-admins:admin,platform:developer",
      };
    },
  },
  (s) => ({ server, browser } = s),
);

afterAll(async () => {
  await provider?.stop();
});

describe("signing in with single sign-on", () => {
  it("clicks Sign in with …, signs in at the provider and lands on the dashboard with the mapped role", async () => {
    provider = await startOidcProvider({
      port: providerPort,
      redirectUri: `${server.url}/v1/auth/oidc/callback`,
      accounts: { "alice.ops": { email: "alice@acme.test", email_verified: true, name: "Alice Ops", groups: ["platform", "hookrelay-admins"] } },
    });
    const { page } = browser;
    // The provider's development login page loads a web font and asks for a favicon: neither is ours to check, nor reachable offline.
    await page.route("https://fonts.googleapis.com/**", (route) => route.fulfill({ status: 200, contentType: "text/css", body: "" }));
    await page.route(`http://127.0.0.1:${providerPort}/favicon.ico`, (route) => route.fulfill({ status: 204, body: "" }));
    await page.goto(server.url + "/");
    const button = page.getByRole("link", { name: "Sign in with Acme SSO" });
    await button.waitFor();
    // Password login is on too: its form is below the button.
    await page.getByLabel("Password").waitFor();
    await screenshot(page, "sso-login-page");

    await button.click();
    // The provider's own page (oidc-provider's development login form).
    await page.waitForURL((url) => url.origin === `http://127.0.0.1:${providerPort}`);
    await page.locator("input[name=login]").fill("alice.ops");
    await page.locator("input[name=password]").fill("anything");
    await screenshot(page, "sso-provider-page");
    // The dashboard asks for the cluster's nodes, which only the instance's owner may see (src/api/middleware/auth.ts, instanceOwnerOnly): a member gets 403 there until the dashboard asks only what the role may read.
    browser.guard.expectResponse(403, "/v1/cluster", 5);
    await page.getByRole("button", { name: "Sign-in" }).click();

    await page.getByRole("navigation", { name: "Main" }).waitFor();
    expect(new URL(page.url()).origin).toBe(server.url);
    const me = await sessionCall<{ user: { email: string; name: string }; role: string }>(browser, server.url, "GET", "/auth/me");
    expect(me.user).toMatchObject({ email: "alice@acme.test", name: "Alice Ops" });
    expect(me.role).toBe("admin");
    await screenshot(page, "sso-signed-in");
  });
});

describe("with password login off", () => {
  let only: Hookrelay;
  let onlyBrowser: Browser;
  useBinaryAndBrowser(
    {
      env: async () => ({
        HOOKRELAY_OIDC_ISSUER: `http://127.0.0.1:${await reservePort()}`,
        HOOKRELAY_OIDC_CLIENT_ID: OIDC_CLIENT.id,
        HOOKRELAY_OIDC_NAME: "Acme SSO",
        HOOKRELAY_PASSWORD_LOGIN: "off",
      }),
    },
    (s) => ({ server: only, browser: onlyBrowser } = s),
  );

  it("shows the provider's button and no password form", async () => {
    const { page } = onlyBrowser;
    await page.goto(only.url + "/");
    await page.getByRole("link", { name: "Sign in with Acme SSO" }).waitFor();
    expect(await page.getByLabel("Password").count()).toBe(0);
    expect(await page.getByRole("button", { name: "Log in" }).count()).toBe(0);
    await screenshot(page, "sso-only-login-page");
  });
});
