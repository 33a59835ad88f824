import { getConnInfo } from "hono/bun";
import { clientIp } from "../ingest/clientIp";
import type { ApiContext } from "./openapi";

/** The socket peer; unknown when the app runs without Bun.serve (app.request in tests). */
export function peerAddress(c: ApiContext): string | null {
  try {
    return getConnInfo(c).remote.address ?? null;
  } catch {
    return null;
  }
}

/** The client's address as ingest sees it: the peer, or X-Forwarded-For behind a trusted proxy. */
export function clientAddress(c: ApiContext): string | null {
  return clientIp(peerAddress(c), c.req.header("x-forwarded-for"), c.get("deps").settings.trustProxy);
}
