import type { MiddlewareHandler } from "hono";
import { getCookie } from "hono/cookie";
import { AppError } from "../../contracts/errors";
import { authenticateApiKey } from "../../domain/apiKeys";
import { chooseSessionEnvironment, findEnvironment } from "../../domain/environments";
import { chooseSessionOrganization } from "../../domain/currentOrganization";
import { organizationNamed } from "../../domain/organizations";
import { isInstanceOwner } from "../../domain/instanceOwner";
import { sessionScope, userForSession } from "../../domain/sessions";
import type { ApiEnv } from "../openapi";
import { clientAddress } from "../clientAddress";
import type { Scope } from "../../domain/deps";
import { can, needs, type Permission } from "../../contracts/roles";
import { isPortalToken, portalMayCall, portalScope } from "./portal";

export const SESSION_COOKIE = "hookrelay_session";
export const ENV_HEADER = "x-hookrelay-env";
export const ORG_HEADER = "x-hookrelay-org";

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
    c.set("scope", { ...scope, ip: clientAddress(c) });
    return next();
  }
  if (key) {
    const scope = await authenticateApiKey(deps, key);
    if (scope.scopes === "read" && !READS.includes(c.req.method)) {
      throw new AppError("forbidden", "This API key has the read scope: only GET requests are allowed");
    }
    mayWrite(scope, c.req.method, c.req.path);
    // A key's organization is fixed too; whether the one named exists elsewhere is not told.
    const org = c.req.header(ORG_HEADER)?.trim();
    if (org && !(await organizationNamed(deps, scope.orgId, org))) {
      throw new AppError("forbidden", "This API key belongs to another organization: a key acts only in its own (log in to switch organizations)");
    }
    const named = c.req.header(ENV_HEADER)?.trim();
    // A key's environment is fixed: naming another is refused rather than silently ignored.
    if (named && (await findEnvironment(deps, scope.orgId, named)).id !== scope.envId) {
      throw new AppError("forbidden", "This API key belongs to another environment: a key acts only in its own (log in to switch environments)");
    }
    c.set("scope", { ...scope, ip: clientAddress(c) });
    return next();
  }
  const token = getCookie(c, SESSION_COOKIE);
  if (token) {
    let user = await userForSession(deps, token);
    if (user) {
      // X-Hookrelay-Org first: the environment is then chosen inside the organization it names (docs/teams.md, "Organizations").
      const inOrgHeader = c.req.header(ORG_HEADER)?.trim();
      if (inOrgHeader) user = await chooseSessionOrganization(deps, user, inOrgHeader);
      // The environment a session acts in: env_id in the query, else X-Hookrelay-Env, else the user's last used (docs/decisions.md D19).
      // Only the header is remembered: a cross-site link can carry a query, never a header, so it cannot move the user elsewhere.
      const inQuery = c.req.query("env_id")?.trim();
      const inHeader = c.req.header(ENV_HEADER)?.trim();
      if (inQuery) user.envId = await chooseSessionEnvironment(deps, user, inQuery, { remember: false });
      else if (inHeader) user.envId = await chooseSessionEnvironment(deps, user, inHeader, { remember: true });
      const scope = sessionScope(user);
      mayWrite(scope, c.req.method, c.req.path);
      c.set("scope", { ...scope, ip: clientAddress(c) });
      c.set("sessionToken", token);
      return next();
    }
  }
  throw new AppError("unauthorized", "Authentication required: send an API key (X-API-Key) or log in");
};

const READS = ["GET", "HEAD", "OPTIONS"];

/** What anyone signed in may do to their own account, whatever their role: sign out, change their password, end their sessions. */
const OWN_ACCOUNT = /^\/v1\/auth\/(logout|password|sessions(\/[^/]+)?)$/;

/** A viewer reads and changes nothing but their own account (docs/teams.md): the same 403 as a `read` key. */
function mayWrite(scope: Scope, method: string, path: string) {
  if (READS.includes(method) || can(scope.role, "write") || OWN_ACCOUNT.test(path)) return;
  throw new AppError("forbidden", `Your role (${scope.role}) may only read: ask an admin of the organization for the developer role`);
}

/**
 * A route that needs more than a developer's rights declares it: managing
 * members, every API key and environments needs `administer` (admin), owners
 * and deleting the organization `own` (owner). src/contracts/roles.ts.
 */
export const requires =
  (permission: Permission): MiddlewareHandler<ApiEnv> =>
  async (c, next) => {
    const { role } = c.get("scope");
    if (!can(role, permission)) throw new AppError("forbidden", `This needs the ${needs[permission]} role or higher; yours here is ${role}`);
    return next();
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
  const scope = c.get("scope");
  if (scope.scopes !== "*") {
    throw new AppError("forbidden", "This route reveals a secret: it needs an API key with scope *, and this key has scope read");
  }
  if (!can(scope.role, "readSecrets")) throw new AppError("forbidden", `This route reveals a secret: your role (${scope.role}) sees secrets masked`);
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
