import type { Deps } from "./deps";

/**
 * What sending to an application endpoint (src/outbound/endpoints.ts) needs
 * beyond its destination row. The delivery worker reads the columns with the
 * destination (src/db/deliverySql.ts); the portal's guard on endpoint URLs
 * (src/outbound/endpointGuard.ts) asks the same question of the block.
 */

/**
 * What marks an endpoint as portal-held (docs/outbound.md, "What a portal
 * link can reach"): its URL was set through a portal link. Such an endpoint,
 * and every delivery to it, is held to the private-address block unless its
 * application is opted in (allow_private_endpoints), whatever the server's
 * default. An operator (API key, session, CLI) setting the URL releases it.
 */
export function portalHeldBlocksPrivate(held: number, appOptedIn: number, serverBlocksPrivate: boolean): boolean {
  return held === 1 && appOptedIn !== 1 ? true : serverBlocksPrivate;
}

/** What sending to an endpoint needs beyond its destination row. */
export interface EndpointDelivery {
  applicationId: string;
  /** The secrets that sign a request at `now`: the current one, and a rotated-out one during its overlap. */
  signingSecrets(now: Date): string[];
  expiresAt: string | null;
  /** The application's rate_limit (deliveries per second across its endpoints); null: none. */
  applicationRateLimit: number | null;
  /** Whether the private-address block holds for deliveries to it (portalHeldBlocksPrivate). */
  blockPrivate: boolean;
}

/** The columns an endpoint's delivery settings are made from (the worker reads them with its destination, src/db/deliverySql.ts). */
export interface EndpointDeliveryColumns {
  applicationId: string;
  expiresAt: string | null;
  /** Sealed. */
  previousSecret: string | null;
  previousUntil: string | null;
  /** The destination's signing secret, sealed. */
  current: string;
  rateLimit: number | null;
  portalHeld: number | null;
  allowPrivateEndpoints: number | null;
}

export function endpointDeliveryFrom(row: EndpointDeliveryColumns, secrets: Pick<Deps["secrets"], "open">, serverBlocksPrivate: boolean): EndpointDelivery {
  const current = secrets.open(row.current);
  const previous = row.previousSecret && row.previousUntil ? { secret: secrets.open(row.previousSecret), until: Date.parse(row.previousUntil) } : null;
  return {
    applicationId: row.applicationId,
    expiresAt: row.expiresAt,
    applicationRateLimit: row.rateLimit,
    blockPrivate: portalHeldBlocksPrivate(row.portalHeld ?? 0, row.allowPrivateEndpoints ?? 0, serverBlocksPrivate),
    signingSecrets: (now) => (previous && now.getTime() < previous.until && previous.secret !== current ? [current, previous.secret] : [current]),
  };
}
