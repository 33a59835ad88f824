import { z } from "zod";
import { loginMethods } from "../../contracts/account";
import { signInWithOidc, SignInRefused } from "../../domain/oidcSignIn";
import type { Logger } from "../../observability/logger";
import { ProviderUnavailable, SignInRejected, type OidcClient } from "../../outgoing/oidcClient";
import { stringEquals } from "../../rules/verify/compare";
import { clientAddress } from "../clientAddress";
import { signInFailedPage } from "../oidcPage";
import { clearStateCookie, readStateCookie, setStateCookie, stateCookieKey } from "../oidcStateCookie";
import { setSessionCookie } from "../sessionCookie";
import { operation, responses, type Api, type ApiContext } from "../openapi";

/** The path the provider sends the browser back to: register the base URL plus this at the provider. */
export const OIDC_CALLBACK_PATH = "/v1/auth/oidc/callback";

const page = (description: string) => ({ description, content: { "text/html": { schema: z.string() } } });

/**
 * The public sign-in routes of single sign-on (docs/teams.md, "Single
 * sign-on"): what the login page offers, the start of an OpenID Connect
 * sign-in and the provider's redirect back. The last two answer browsers:
 * a redirect, or a small HTML page saying what went wrong.
 */
export function registerOidcRoutes(api: Api, client: OidcClient | undefined, logger: Logger) {
  operation(api, { method: "get", path: "/auth/methods", tags: ["auth"], security: [], summary: "How one may sign in here (public)", responses: responses({ status: 200, schema: loginMethods }) }, async (c) => {
    const { oidc, passwordLogin } = c.get("deps").settings;
    return c.json({ password: passwordLogin !== false, oidc: oidc ? { name: oidc.name, login_url: "/v1/auth/oidc/login" } : null }, 200);
  });

  operation(
    api,
    {
      method: "get",
      path: "/auth/oidc/login",
      tags: ["auth"],
      security: [],
      summary: "Start single sign-on: redirects to the OpenID Connect provider (authorization code, PKCE S256, state, nonce)",
      responses: { 302: { description: "To the provider" }, 404: page("Single sign-on is not configured"), 502: page("The provider is misconfigured"), 503: page("The provider cannot be reached") },
    },
    async (c) => {
      if (!client) return signInFailedPage(c, 404, "Single sign-on is not configured", "This hookrelay instance has no single sign-on provider: sign in with your email and password.");
      const deps = c.get("deps");
      try {
        const { url, pending } = await client.start(redirectUri(c));
        setStateCookie(c, stateCookieKey(deps.secrets.deriveKey), pending, deps.clock.now());
        c.header("cache-control", "no-store");
        return c.redirect(url, 302);
      } catch (err) {
        if (!(err instanceof ProviderUnavailable)) throw err;
        logger.warn("single sign-on: cannot start", { reason: err.message, issuer: deps.settings.oidc?.issuer });
        return signInFailedPage(c, err.status, "Single sign-on is unavailable", "The sign-in provider cannot be reached or is misconfigured. Try again in a moment; if it lasts, tell your administrator.");
      }
    },
  );

  operation(
    api,
    {
      method: "get",
      path: "/auth/oidc/callback",
      tags: ["auth"],
      security: [],
      summary: "The provider's redirect back: checks state, exchanges the code, checks the ID token, signs in and redirects to the UI",
      responses: { 302: { description: "Signed in: to the UI" }, 400: page("A bad or expired sign-in"), 403: page("The identity may not sign in here"), 404: page("Single sign-on is not configured"), 502: page("The provider is misconfigured"), 503: page("The provider cannot be reached") },
    },
    async (c) => {
      if (!client) return signInFailedPage(c, 404, "Single sign-on is not configured", "This hookrelay instance has no single sign-on provider.");
      const deps = c.get("deps");
      const refused = (status: 400 | 403 | 502 | 503, title: string, message: string, reason: string) => {
        logger.warn("single sign-on refused", { reason, ip: clientAddress(c) });
        return signInFailedPage(c, status, title, message);
      };
      const pending = readStateCookie(c, stateCookieKey(deps.secrets.deriveKey), deps.clock.now());
      // Spent whatever happens next: a callback URL replayed later finds no state to match.
      clearStateCookie(c);
      const query = new URL(c.req.url).searchParams;
      const again = "Start again from the login page.";
      if (!pending) return refused(400, "Sign-in expired", `This sign-in was not started in this browser, or took longer than ten minutes. ${again}`, "no valid state cookie");
      const state = query.get("state") ?? "";
      if (!stringEquals(state, pending.state)) return refused(400, "Sign-in could not be verified", `The answer from the sign-in provider does not belong to the sign-in this browser started. ${again}`, "state does not match the cookie");
      const error = query.get("error");
      if (error) {
        const description = query.get("error_description");
        return refused(400, "The provider did not sign you in", `The sign-in provider answered: ${description || error}. ${again}`, `provider error ${error}${description ? `: ${description}` : ""}`);
      }

      let claims;
      try {
        const callback = new URL(redirectUri(c));
        callback.search = new URL(c.req.url).search;
        claims = await client.finish(callback, pending);
      } catch (err) {
        if (err instanceof ProviderUnavailable) return refused(err.status, "Single sign-on is unavailable", "The sign-in provider cannot be reached or is misconfigured. Try again in a moment; if it lasts, tell your administrator.", err.message);
        if (err instanceof SignInRejected) return refused(400, "Sign-in could not be verified", `The answer from the sign-in provider did not pass hookrelay's checks. ${again}`, err.message);
        throw err;
      }

      try {
        const { token } = await signInWithOidc(deps, deps.settings.oidc!, claims, { ip: clientAddress(c), userAgent: c.req.header("user-agent") ?? null });
        setSessionCookie(c, token);
      } catch (err) {
        if (err instanceof SignInRefused) return refused(403, "You cannot sign in here", err.message, err.reason);
        throw err;
      }
      c.header("cache-control", "no-store");
      return c.redirect("/", 302);
    },
  );
}

/** The base URL's, not the request's: behind a proxy the request URL is the proxy's upstream, and the provider compares the redirect URI exactly. */
function redirectUri(c: ApiContext) {
  return c.get("deps").settings.baseUrl.replace(/\/+$/, "") + OIDC_CALLBACK_PATH;
}
