import { deleteCookie } from "hono/cookie";
import { acceptInviteInput } from "../../contracts/account";
import { spendLink } from "../../domain/accountLinks";
import { setSessionCookie } from "../sessionCookie";
import { apiKeyList, createApiKeyInput, createdApiKey, loginInput, meBody, userBody } from "../../contracts/apiKeys";
import { successBody } from "../../contracts/common";
import { createApiKey, listApiKeys, revokeApiKey } from "../../domain/apiKeys";
import { login, loginUnlockedAt, logout, openSession, whoAmI } from "../../domain/sessions";
import { AppError } from "../../contracts/errors";
import { clientAddress } from "../clientAddress";
import { requireSession, SESSION_COOKIE } from "../middleware/auth";
import type { LoginThrottle } from "../middleware/loginThrottle";
import { idParam, jsonBody, operation, responses, type Api } from "../openapi";

/** Login is public; the rest of /auth sits behind authenticate (see v1/index.ts). Login attempts are counted per address and per account before the password is checked (docs/api.md). */
export function registerLoginRoutes(api: Api, throttle: LoginThrottle) {
  operation(
    api,
    { method: "post", path: "/auth/login", tags: ["auth"], summary: "Log in with email and password", request: jsonBody(loginInput), responses: responses({ status: 200, schema: userBody }, [400, 401, 403, 429]) },
    async (c, { body }) => {
      const { passwordLogin, oidc } = c.get("deps").settings;
      // HOOKRELAY_PASSWORD_LOGIN=off: the provider is the only way in (a one-time link from the local CLI still sets a password and signs in).
      if (passwordLogin === false) throw new AppError("forbidden", `Password login is turned off here: sign in with ${oidc?.name ?? "single sign-on"}`);
      const address = clientAddress(c);
      const unlockedAt = await loginUnlockedAt(c.get("deps"), body.email);
      // Counted before the password is checked (and with no await between check and count): parallel guesses cannot all be checked before the first failure is recorded.
      const turn = throttle.begin(address, body.email, unlockedAt);
      if ("retryAfterSeconds" in turn) {
        const wait = turn.retryAfterSeconds;
        c.header("Retry-After", String(wait));
        throw new AppError("rate_limited", `Too many failed logins: try again in ${wait} s`, { retry_after_seconds: wait });
      }
      let session;
      try {
        session = await login(c.get("deps"), body.email, body.password, { ip: address, userAgent: c.req.header("user-agent") ?? null });
      } catch (err) {
        if (err instanceof AppError && err.code === "unauthorized") turn.attempt.failed();
        else turn.attempt.abandoned();
        throw err;
      }
      turn.attempt.succeeded();
      const { token, user } = session;
      setSessionCookie(c, token);
      return c.json({ user: { id: user.id, email: user.email } }, 200);
    },
  );

  operation(
    api,
    {
      method: "post",
      path: "/auth/invites/accept",
      tags: ["auth"],
      // Public: the one-time token in the body is the credential.
      security: [],
      summary: "Spend a one-time link (an invite, or a password reset): set a password and sign in",
      request: jsonBody(acceptInviteInput),
      responses: responses({ status: 200, schema: userBody }, [400]),
    },
    async (c, { body }) => {
      const deps = c.get("deps");
      // The token is 32 random bytes, found by its hash: guessing one is hopeless, so no throttle here.
      const spent = await spendLink(deps, body.token, { password: body.password, name: body.name, ip: clientAddress(c) });
      const token = await openSession(deps, spent.user.id, { method: "password", ip: clientAddress(c), userAgent: c.req.header("user-agent") ?? null });
      setSessionCookie(c, token);
      return c.json({ user: spent.user }, 200);
    },
  );
}

export function registerAuthRoutes(api: Api) {
  operation(api, { method: "post", path: "/auth/logout", tags: ["auth"], summary: "End the session", responses: responses({ status: 200, schema: successBody }, [401]) }, async (c) => {
    const token = c.get("sessionToken");
    if (token) await logout(c.get("deps"), token, c.get("scope"));
    deleteCookie(c, SESSION_COOKIE, { path: "/" });
    return c.json({ success: true }, 200);
  });

  operation(api, { method: "get", path: "/auth/me", tags: ["auth"], summary: "Who is calling", responses: responses({ status: 200, schema: meBody }, [401]) }, async (c) => {
    return c.json(await whoAmI(c.get("deps"), c.get("scope")), 200);
  });

  const keys = { tags: ["api-keys"], middleware: [requireSession] };
  operation(
    api,
    { ...keys, method: "post", path: "/auth/api-keys", summary: "Create an API key (the key is shown once)", request: jsonBody(createApiKeyInput), responses: responses({ status: 201, schema: createdApiKey }, [400, 401, 403, 404]) },
    async (c, { body }) => c.json(await createApiKey(c.get("deps"), c.get("scope"), body), 201),
  );
  operation(api, { ...keys, method: "get", path: "/auth/api-keys", summary: "List API keys, masked", responses: responses({ status: 200, schema: apiKeyList }, [401, 403]) }, async (c) =>
    c.json(await listApiKeys(c.get("deps"), c.get("scope")), 200),
  );
  operation(
    api,
    { ...keys, method: "delete", path: "/auth/api-keys/{id}", summary: "Revoke an API key, at once", request: { params: idParam }, responses: responses({ status: 200, schema: successBody }, [401, 403, 404]) },
    async (c, { params }) => c.json(await revokeApiKey(c.get("deps"), c.get("scope"), params.id), 200),
  );
}
