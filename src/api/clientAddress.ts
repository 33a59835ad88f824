import { getConnInfo } from "hono/bun";
import { clientIp } from "../ingest/clientIp";
import type { ApiContext } from "./openapi";

/** The socket peer; unknown when the app runs without Bun.serve (app.request in tests). */
export function peerAddress(c: ApiContext): string | null {
  const remembered = c.get("peer");
  if (remembered !== undefined) return remembered;
  try {
    return getConnInfo(c).remote.address ?? null;
  } catch {
    return null;
  }
}

/**
 * Bun tells the peer of the request object it handed in only: middleware that
 * wraps the body in a new Request (the body timeout, the body limit) would
 * lose it. Taken first, before any of them.
 */
export const rememberPeer = async (c: ApiContext, next: () => Promise<void>) => {
  c.set("peer", peerAddress(c));
  await next();
};

/** The client's address as ingest sees it: the peer, or X-Forwarded-For behind a trusted proxy. */
export function clientAddress(c: ApiContext): string | null {
  return clientIp(peerAddress(c), c.req.header("x-forwarded-for"), c.get("deps").settings.trustProxy);
}
