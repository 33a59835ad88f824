import { AppError } from "../contracts/errors";
import { portalHeldBlocksPrivate } from "../domain/endpointDelivery";
import type { Deps } from "../domain/deps";
import { refusalReason } from "../outgoing/ssrf";

/**
 * A portal link may not point an endpoint at an address the block refuses.
 * Checked here on what the URL itself names (an IP literal in any spelling,
 * `localhost`); names are resolved and checked at each delivery instead, so
 * that no answer here tells a portal user what the operator's DNS knows.
 */
export function checkPortalUrl(deps: Deps, app: { allowPrivateEndpoints: number }, url: string) {
  const blockPrivate = portalHeldBlocksPrivate(1, app.allowPrivateEndpoints, deps.settings.blockPrivateDestinations);
  // A trailing dot names the same host ("localhost." is localhost).
  const host = new URL(url).hostname.replace(/^\[(.*)\]$/, "$1").replace(/\.$/, "").toLowerCase();
  const literal = /^[\d.]+$/.test(host) || host.includes(":");
  const reason = literal ? refusalReason(host, blockPrivate) : host === "localhost" || host.endsWith(".localhost") ? (blockPrivate ? "a loopback name" : null) : null;
  if (reason) {
    throw new AppError("validation_error", `A portal link may not point an endpoint at ${host}: it is ${reason}`, [
      { field: "body.url", message: "must point at a public address: a portal link cannot reach loopback, private, link-local or other non-global addresses" },
    ]);
  }
}
