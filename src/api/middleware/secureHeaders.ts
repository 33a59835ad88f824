import { secureHeaders } from "hono/secure-headers";

/**
 * Security headers on every response, the admin UI's and the API's. The
 * policy fits the embedded UI: its script and stylesheet come from our own
 * origin, React sets styles through the CSSOM (which style-src does not
 * govern), the favicon is a data: URL, and it talks only to /v1.
 */
export const securityHeaders = secureHeaders({
  contentSecurityPolicy: {
    defaultSrc: ["'self'"],
    scriptSrc: ["'self'"],
    styleSrc: ["'self'"],
    imgSrc: ["'self'", "data:"],
    connectSrc: ["'self'"],
    fontSrc: ["'self'"],
    objectSrc: ["'none'"],
    baseUri: ["'none'"],
    formAction: ["'self'"],
    frameAncestors: ["'none'"],
  },
  xFrameOptions: "DENY",
  // Not no-referrer: with it browsers send `Origin: null` on same-origin POSTs, and the CSRF check needs the origin.
  referrerPolicy: "same-origin",
  // HSTS belongs to whoever terminates TLS; sent over plain HTTP it is ignored, and a wrong includeSubDomains outlives a fix.
  strictTransportSecurity: false,
});
