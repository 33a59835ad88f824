import type { MiddlewareHandler } from "hono";
import { getCookie } from "hono/cookie";
import { AppError } from "../../contracts/errors";
import { authenticateApiKey } from "../../domain/apiKeys";
import { chooseSessionEnvironment, findEnvironment } from "../../domain/environments";
import { isInstanceOwner } from "../../domain/instanceOwner";
import { sessionScope, userForSession } from "../../domain/sessions";
import type { ApiEnv } from "../openapi";
import { isPortalToken, portalMayCall, portalScope } from "./portal";

export const SESSION_COOKIE = "hookrelay_session";
export const ENV_HEADER = "x-hookrelay-env";

function presentedKey(header: (name: string) => string | undefined) {
  const direct = header("x-api-key");
  if (direct) return direct.trim();
  const authz = header("authorization");
  const m = authz && /^Bearer\s+(.+)$/i.exec(authz);
  return m?.[1]?.trim();
}

/** API key (X-API-Key or Bearer), a portal link's token (Bearer hrp_…) or session cookie; sets the caller's scope. */
export const authenticate: MiddlewareHandler<ApiEnv> = async (c, next) => {
  const deps = c.get("deps");
  const key = presentedKey((n) => c.req.header(n));
  if (key && isPortalToken(key)) {
    const scope = await portalScope(deps, key);
    if (!portalMayCall(c.req.method, c.req.path)) {
      throw new AppError("forbidden", "A portal link grants only its application's endpoints, messages and attempts");
    }
    c.set("scope", scope);
    return next();
  }
  if (key) {
    const scope = await authenticateApiKey(deps, key);
    if (scope.scopes === "read" && !["GET", "HEAD", "OPTIONS"].includes(c.req.method)) {
      throw new AppError("forbidden", "This API key has the read scope: only GET requests are allowed");
    }
    const named = c.req.header(ENV_HEADER)?.trim();
    // A key's environment is fixed: naming another is refused rather than silently ignored.
    if (named && (await findEnvironment(deps, scope.orgId, named)).id !== scope.envId) {
      throw new AppError("forbidden", "This API key belongs to another environment: a key acts only in its own (log in to switch environments)");
    }
    c.set("scope", scope);
    return next();
  }
  const token = getCookie(c, SESSION_COOKIE);
  if (token) {
    const user = await userForSession(deps, token);
    if (user) {
      // The environment a session acts in: env_id in the query, else X-Hookrelay-Env, else the user's last used (docs/decisions.md D19).
      // Only the header is remembered: a cross-site link can carry a query, never a header, so it cannot move the user elsewhere.
      const inQuery = c.req.query("env_id")?.trim();
      const inHeader = c.req.header(ENV_HEADER)?.trim();
      if (inQuery) user.envId = await chooseSessionEnvironment(deps, user, inQuery, { remember: false });
      else if (inHeader) user.envId = await chooseSessionEnvironment(deps, user, inHeader, { remember: true });
      c.set("scope", sessionScope(user));
      c.set("sessionToken", token);
      return next();
    }
  }
  throw new AppError("unauthorized", "Authentication required: send an API key (X-API-Key) or log in");
};

/** Key management needs a logged-in session: a key cannot create or revoke keys. */
export const requireSession: MiddlewareHandler<ApiEnv> = async (c, next) => {
  if (c.get("scope").via !== "session") {
    throw new AppError("session_required", "API keys are managed from a logged-in session");
  }
  return next();
};

/**
 * A route that answers a secret in full (a verification or signing secret)
 * declares this: with a secret a read-only key could sign forged webhooks,
 * so only scope `*` (and sessions) may read one.
 */
export const revealsSecret: MiddlewareHandler<ApiEnv> = async (c, next) => {
  if (c.get("scope").scopes !== "*") {
    throw new AppError("forbidden", "This route reveals a secret: it needs an API key with scope *, and this key has scope read");
  }
  return next();
};

/**
 * A whole-instance operation (a backup holds every organization's data; the
 * cluster listing names the hosts) declares this: only the instance's owner
 * may call it, the admin created on first start or a key that admin
 * created (src/domain/instanceOwner.ts). Every other key, of any
 * organization, gets 403.
 */
export const instanceOwnerOnly: MiddlewareHandler<ApiEnv> = async (c, next) => {
  if (!(await isInstanceOwner(c.get("deps"), c.get("scope")))) {
    throw new AppError("forbidden", "Only the instance's owner may do this (the admin user created on first start, or an API key that user created): it concerns the whole installation, not one organization");
  }
  return next();
};
