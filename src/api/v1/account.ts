import { deleteCookie } from "hono/cookie";
import { accountSessionList, changePasswordInput, passwordChanged } from "../../contracts/account";
import { successBody } from "../../contracts/common";
import { AppError } from "../../contracts/errors";
import { accountEmail, changeOwnPassword, endOwnSession, listOwnSessions } from "../../domain/account";
import { loginUnlockedAt } from "../../domain/sessions";
import { clientAddress } from "../clientAddress";
import { requireSession, SESSION_COOKIE } from "../middleware/auth";
import type { LoginThrottle } from "../middleware/loginThrottle";
import { idParam, jsonBody, operation, responses, type Api } from "../openapi";

/**
 * The caller's own account (docs/teams.md, "Accounts"): open to every role,
 * a viewer included (src/api/middleware/auth.ts lets these writes through),
 * and to sessions only: an API key has no password and no sessions.
 */
export function registerAccountRoutes(api: Api, throttle: LoginThrottle) {
  const own = { tags: ["auth"], middleware: [requireSession] };

  operation(
    api,
    {
      ...own,
      method: "post",
      path: "/auth/password",
      summary: "Change your password (the current one proves it is you); your other sessions end",
      request: jsonBody(changePasswordInput),
      responses: responses({ status: 200, schema: passwordChanged }, [400, 401, 403, 429]),
    },
    async (c, { body }) => {
      const deps = c.get("deps");
      const scope = c.get("scope");
      const email = await accountEmail(deps, scope.userId!);
      // A stolen session must not become a way to guess the password: each try counts as a login attempt of the account and the address.
      const turn = throttle.begin(clientAddress(c), email, await loginUnlockedAt(deps, email));
      if ("retryAfterSeconds" in turn) {
        const wait = turn.retryAfterSeconds;
        c.header("Retry-After", String(wait));
        throw new AppError("rate_limited", `Too many wrong passwords: try again in ${wait} s`, { retry_after_seconds: wait });
      }
      let result;
      try {
        result = await changeOwnPassword(deps, scope, c.get("sessionToken"), body);
      } catch (err) {
        if (err instanceof AppError && err.code === "validation_error") turn.attempt.failed();
        else turn.attempt.abandoned();
        throw err;
      }
      turn.attempt.succeeded();
      return c.json({ success: true as const, ...result }, 200);
    },
  );

  operation(
    api,
    { ...own, method: "get", path: "/auth/sessions", summary: "Your sessions, newest first (`current`: this one)", responses: responses({ status: 200, schema: accountSessionList }, [401, 403]) },
    async (c) => c.json(await listOwnSessions(c.get("deps"), c.get("scope").userId!, c.get("sessionToken")), 200),
  );

  operation(
    api,
    {
      ...own,
      method: "delete",
      path: "/auth/sessions/{id}",
      summary: "Sign out one of your sessions (this one too: then you are signed out)",
      request: { params: idParam },
      responses: responses({ status: 200, schema: successBody }, [401, 403, 404]),
    },
    async (c, { params }) => {
      const { current } = await endOwnSession(c.get("deps"), c.get("scope"), params.id, c.get("sessionToken"));
      if (current) deleteCookie(c, SESSION_COOKIE, { path: "/" });
      return c.json({ success: true as const }, 200);
    },
  );
}
