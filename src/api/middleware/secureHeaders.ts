import type { MiddlewareHandler } from "hono";
import { secureHeaders } from "hono/secure-headers";

/**
 * Security headers on every response, the admin UI's and the API's. The
 * policy fits the embedded UI: its script and stylesheet come from our own
 * origin, React sets styles through the CSSOM (which style-src does not
 * govern), the favicon is a data: URL, and it talks only to /v1.
 */
const policy = {
  defaultSrc: ["'self'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'"],
  imgSrc: ["'self'", "data:"],
  connectSrc: ["'self'"],
  fontSrc: ["'self'"],
  objectSrc: ["'none'"],
  baseUri: ["'none'"],
  formAction: ["'self'"],
};

const common = {
  // Not no-referrer: with it browsers send `Origin: null` on same-origin POSTs, and the CSRF check needs the origin.
  referrerPolicy: "same-origin",
  // HSTS belongs to whoever terminates TLS; sent over plain HTTP it is ignored, and a wrong includeSubDomains outlives a fix.
  strictTransportSecurity: false,
} as const;

const everywhere = secureHeaders({ ...common, contentSecurityPolicy: { ...policy, frameAncestors: ["'none'"] }, xFrameOptions: "DENY" });

/**
 * The consumer portal's page is made to be embedded: a SaaS frames it in its
 * own settings page (as Svix's app portal is). Its only credential is the
 * link's token, which the framing page already has (it put it in the URL), so
 * framing it lends a clickjacker nothing; every other page stays unframeable.
 */
const portalPage = secureHeaders({ ...common, contentSecurityPolicy: { ...policy, frameAncestors: ["*"] }, xFrameOptions: false });

export const securityHeaders: MiddlewareHandler = (c, next) => (isPortalPage(c.req.path) ? portalPage(c, next) : everywhere(c, next));

function isPortalPage(path: string) {
  return path === "/portal" || path.startsWith("/portal/");
}
