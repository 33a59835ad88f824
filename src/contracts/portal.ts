import { z } from "zod";
import { application } from "./applications";

/**
 * The consumer portal (docs/outbound.md, "The portal"): a short-lived signed
 * link that lets the people behind one application manage its endpoints and
 * see its messages, without an admin login.
 */

/** Portal tokens begin with this, so the auth middleware tells them from API keys at a glance. */
export const PORTAL_TOKEN_PREFIX = "hrp_";

/** Bounds of a link's lifetime: at least a minute, at most seven days. */
export const PORTAL_TTL_MIN_SECONDS = 60;
export const PORTAL_TTL_MAX_SECONDS = 7 * 24 * 3600;

export const createPortalLinkInput = z.object({
  /** Lifetime in seconds; default HOOKRELAY_PORTAL_LINK_TTL (1 hour). */
  expires_in: z.int().min(PORTAL_TTL_MIN_SECONDS).max(PORTAL_TTL_MAX_SECONDS).optional(),
});
export type CreatePortalLinkInput = z.input<typeof createPortalLinkInput>;

export const portalLink = z.object({
  url: z.string().describe("Open in a browser: {base_url}/portal#token=<token>; the page sends the token as Authorization: Bearer <token>"),
  expires_at: z.string(),
});
export type PortalLinkDto = z.infer<typeof portalLink>;

/** GET /v1/portal/session: what the portal page needs to start (its application and when the link ends). */
export const portalSession = z.object({ application, expires_at: z.string() });
export type PortalSessionDto = z.infer<typeof portalSession>;
