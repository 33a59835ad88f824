import type { RouteConfig } from "@hono/zod-openapi";
import { AppError } from "../../contracts/errors";
import { PORTAL_TOKEN_PREFIX } from "../../contracts/portal";
import { checkPortalLink, PORTAL_KEY_PURPOSE } from "../../outbound/portalLinks";
import type { Deps, Scope } from "../../domain/deps";
import { verifyPortalToken } from "../../rules/portalTokens";
import { operation, type Api, type ApiContext, type Validated } from "../openapi";

/**
 * The consumer portal's access (docs/outbound.md, "The portal"). A portal
 * link's token is a bearer credential for one application: routes declare
 * that they take it by registering through `portalOperation`, which also
 * lists `portal` among their security schemes in /v1/openapi.json. Every
 * other route refuses the token (403) before its handler runs, and the
 * domain answers any application but the token's as absent (404).
 */
export const PORTAL_SECURITY = "portal";
const STANDARD_SECURITY = [{ apiKey: [] }, { bearer: [] }, { session: [] }];

const portalRoutes: { method: string; path: RegExp }[] = [];

/** The route patterns a portal token may call: `/applications/{appId}/…` → a regex over the full /v1 path. */
function allow(method: string, path: string) {
  const pattern = new RegExp(`^/v1${path.replace(/\{[^}]+\}/g, "[^/]+")}/?$`);
  if (!portalRoutes.some((r) => r.method === method && r.path.source === pattern.source)) portalRoutes.push({ method, path: pattern });
}

/** Registers an operation that a portal token may call (besides API keys and sessions). */
export function portalOperation<R extends RouteConfig>(api: Api, route: R, handler: (c: ApiContext, input: Validated<R>) => Response | Promise<Response>) {
  allow(route.method.toUpperCase(), route.path);
  operation(api, { ...route, security: [...STANDARD_SECURITY, { [PORTAL_SECURITY]: [] }] }, handler);
}

export function isPortalToken(credential: string): boolean {
  return credential.startsWith(PORTAL_TOKEN_PREFIX);
}

/** Whether a portal token may call this method and path (GET also covers HEAD). */
export function portalMayCall(method: string, path: string): boolean {
  const m = method === "HEAD" ? "GET" : method;
  return portalRoutes.some((r) => r.method === m && r.path.test(path));
}

/**
 * The scope a portal token grants: its application only, with every right
 * over it that the portal routes offer. A revoked link, or one of a disabled
 * application, is refused here (401), on every request.
 */
export async function portalScope(deps: Pick<Deps, "secrets" | "clock" | "db">, token: string): Promise<Scope> {
  const claims = verifyPortalToken(deps.secrets.deriveKey(PORTAL_KEY_PURPOSE), token, deps.clock.now());
  if (!claims) throw new AppError("unauthorized", "This portal link is invalid or has expired: ask for a new one");
  await checkPortalLink(deps, claims);
  return {
    orgId: claims.org,
    envId: claims.env,
    userId: null,
    via: "portal",
    scopes: "*",
    // Within its one application a portal link writes endpoints and resends: what a developer may.
    role: "developer",
    portal: { applicationId: claims.app, expiresAt: new Date(claims.exp * 1000).toISOString() },
  };
}
