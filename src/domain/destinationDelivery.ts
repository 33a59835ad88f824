import { eq } from "drizzle-orm";
import type { DestinationAuth, DestinationStatus, RetryStrategy } from "../contracts/destinations";
import { retryScheduleSeconds } from "../contracts/retrySchedule";
import { destinations } from "../db/schema";
import type { Deps } from "./deps";
import { openAuthConfig, openHeaders } from "./destinationSecrets";
import type { SecretBox } from "./secrets";

type DestinationRow = typeof destinations.$inferSelect;

/** Everything a worker needs to send to a destination, secrets opened. */
export interface DeliveryDestination {
  id: string;
  orgId: string;
  envId: string;
  name: string;
  url: string;
  httpMethod: string;
  /** Extra headers configured on the destination. */
  headers: Record<string, string>;
  auth: DestinationAuth;
  timeoutMs: number;
  /** null: no limit. */
  rateLimitPerSecond: number | null;
  /** Retries after the first attempt: at most 1 + maxRetries attempts in all. */
  maxRetries: number;
  retryStrategy: RetryStrategy;
  retryIntervalSeconds: number;
  /** Seconds before each retry (replaces the three above when set). */
  retrySchedule: number[] | null;
  /** `whsec_<base64>`, for the Standard Webhooks signature. */
  signingSecret: string;
  status: DestinationStatus;
  updatedAt: string;
  /** Set when an application endpoint delivers through this destination (src/outbound/endpoints.ts). */
  applicationId: string | null;
}

/**
 * Loads a destination for delivery by its stored id (`dst_…`), across
 * scopes: the caller is a worker holding a job, not a user. null when it was
 * deleted meanwhile.
 */
export async function loadDestinationForDelivery({ db, secrets }: Deps, destinationId: string): Promise<DeliveryDestination | null> {
  const [row] = await db.select().from(destinations).where(eq(destinations.id, destinationId)).limit(1);
  return row ? deliveryDestinationFromRow(row, secrets) : null;
}

/** A stored destination row as a worker sends with it (the worker also reads whole batches of them at once). */
export function deliveryDestinationFromRow(row: DestinationRow, secrets: SecretBox): DeliveryDestination {
  const config = openAuthConfig(row, secrets, { lenient: false });
  return {
    id: row.id,
    orgId: row.orgId,
    envId: row.envId,
    name: row.name,
    url: row.url,
    httpMethod: row.httpMethod,
    headers: openHeaders(row, secrets, { lenient: false }) ?? {},
    auth: (config ? { type: row.authType, ...config } : { type: "none" }) as DestinationAuth,
    timeoutMs: row.timeoutMs,
    rateLimitPerSecond: row.rateLimitPerSecond,
    maxRetries: row.maxRetries,
    retryStrategy: row.retryStrategy as RetryStrategy,
    retryIntervalSeconds: row.retryIntervalSeconds,
    retrySchedule: retryScheduleSeconds(row.retrySchedule),
    signingSecret: secrets.open(row.signingSecret),
    status: row.status as DestinationStatus,
    updatedAt: row.updatedAt,
    applicationId: row.applicationId,
  };
}
