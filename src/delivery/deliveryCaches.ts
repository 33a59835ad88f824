import { eq } from "drizzle-orm";
import { connections, sources } from "../db/schema";
import type { Deps } from "../domain/deps";
import { deliveryDestinationFromRow, type DeliveryDestination } from "../domain/destinationDelivery";
import { endpointDeliveryFrom, type EndpointDelivery } from "../domain/endpointDelivery";
import { secretRequestHeaders } from "../contracts/sources";
import { destinationForDelivery } from "./queue";
import { TtlCache } from "./ttlCache";

export type ConnectionTransform = { transformEnabled: number; transformExpression: string | null } | null;
/** A destination, and when an application endpoint delivers through it, the endpoint's own settings, loaded together. */
export type DeliveryTarget = DeliveryDestination & { endpoint: EndpointDelivery | null };
/** A source's own signature header, and the headers holding its secret. */
export type SourceHeaders = { signature: string | null; secret: string[] };
/** Outbound sending can give every delivery its own destination (one per endpoint): room for that many. */
const DESTINATIONS_CACHED = 100_000;

/**
 * What the delivery worker reads about a delivery's destination, connection
 * and source, kept for `ttlMs`: a worker sending thousands of deliveries a
 * second to one destination need not read and decrypt it for each.
 */
export class DeliveryCaches {
  readonly destinations: TtlCache<DeliveryTarget | null>;
  readonly transforms: TtlCache<ConnectionTransform>;
  /**
   * A source's own signature header, dropped from a transformed delivery,
   * and the headers holding its secret (a token source's), never forwarded.
   */
  readonly signatureHeaders: TtlCache<SourceHeaders>;

  constructor(deps: Deps, ttlMs: number) {
    const { db } = deps;
    this.destinations = new TtlCache<DeliveryTarget | null>(
      ttlMs,
      async (id) => {
        const row = await destinationForDelivery(db, id);
        if (!row) return null;
        const endpoint =
          row.applicationId && row.endpointId
            ? endpointDeliveryFrom(
                {
                  applicationId: row.applicationId,
                  expiresAt: row.endpointExpiresAt,
                  previousSecret: row.previousSecret,
                  previousUntil: row.previousUntil,
                  current: row.signingSecret,
                  rateLimit: row.applicationRateLimit,
                  portalHeld: row.portalHeld,
                  allowPrivateEndpoints: row.allowPrivateEndpoints,
                },
                deps.secrets,
                deps.settings.blockPrivateDestinations,
              )
            : null;
        // The current and the previous secret come from one read: a rotation is never seen half done.
        return { ...deliveryDestinationFromRow(row, deps.secrets), endpoint };
      },
      DESTINATIONS_CACHED,
    );
    this.transforms = new TtlCache<ConnectionTransform>(ttlMs, async (id) => {
      const [row] = await db
        .select({ transformEnabled: connections.transformEnabled, transformExpression: connections.transformExpression })
        .from(connections)
        .where(eq(connections.id, id))
        .limit(1);
      return row ?? null;
    });
    this.signatureHeaders = new TtlCache<SourceHeaders>(ttlMs, async (id) => {
      const [row] = await db.select({ header: sources.verificationHeader, type: sources.verificationType }).from(sources).where(eq(sources.id, id)).limit(1);
      return { signature: row?.header ?? null, secret: secretRequestHeaders(row?.type ?? null, row?.header ?? null) };
    });
  }

  /**
   * An edit on any node (the bus carries it across nodes) reaches the next
   * delivery, not one a cache lifetime later. Returns the unsubscribe.
   */
  followEdits(bus: Deps["bus"]): () => void {
    return bus.subscribe((m) => {
      switch (m.type) {
        case "destination.updated":
          this.destinations.forget(m.destinationId);
          break;
        case "connection.updated":
          this.transforms.forget(m.connectionId);
          break;
        case "source.updated":
          this.signatureHeaders.forget(m.sourceId);
          break;
        case "bus.resumed":
          this.destinations.clear();
          this.transforms.clear();
          this.signatureHeaders.clear();
          break;
      }
    });
  }
}
