import type { Config } from "../config/config";
import type { Db } from "../db/open";
import type { ThisNode } from "../cluster/nodes";
import type { Clock } from "./clock";
import type { SecretBox } from "./secrets";

/**
 * What arrives on the bus (src/live implements it): in process, and on
 * PostgreSQL from every node of the database (src/live/clusterBus.ts).
 * Published after the write's commit.
 */
export type BusMessage =
  | { type: "event.created"; orgId: string; envId: string; eventId: string; sourceId: string }
  | { type: "event.updated"; orgId: string; envId: string; eventId: string; sourceId: string }
  | { type: "delivery.queued" }
  /** A replay, bulk retry or redrive job was created: the job runner starts it. */
  | { type: "job.created"; jobId: string }
  | { type: "source.updated"; sourceId: string }
  /** A destination (or the endpoint or application settings a delivery through it reads) was edited or deleted: cached copies are dropped. */
  | { type: "destination.updated"; destinationId: string }
  /** A connection was edited or deleted: cached copies (its transform) are dropped. */
  | { type: "connection.updated"; connectionId: string }
  /** A collection was created, rebuilt or deleted: the collection builder runs. */
  | { type: "collection.updated"; collectionId: string }
  /** Recorded delivery outcomes opened (or reopened) an issue: issue_opened rules fire. */
  | { type: "issue.opened"; orgId: string; envId: string; issueId: string }
  /** A delivery landed in the DLQ: the environment's dlq rules are checked at once. */
  | { type: "delivery.dlq"; orgId: string; envId: string }
  /** Alert rules changed (or a test moved the clock): every rule is evaluated now instead of at the next interval. */
  | { type: "alerts.evaluate" }
  /** Every enabled periodic rule was evaluated at `at` (the clock's time): what fired has claimed its trigger. */
  | { type: "alerts.evaluated"; at: string }
  /** An API key was revoked or a session logged out (`api_key:<id>` / `session:<id>`): streams held open with it end at once, on every node. */
  | { type: "credential.revoked"; credential: string }
  /**
   * This node listens to the others again after its listening connection
   * dropped: what they announced meanwhile was lost, so every listener
   * re-reads what it watches (workers claim, caches empty, streams reconnect).
   */
  | { type: "bus.resumed" };

export interface Bus {
  publish(message: BusMessage): void;
  subscribe(listener: (message: BusMessage) => void): () => void;
}

/** Settings the domain reads; a subset of the server config so local CLI mode can fill it too. */
export interface DomainSettings {
  baseUrl: string;
  retentionDays: number;
  maxBodyBytes: number;
  blockPrivateDestinations: boolean;
  /** HOOKRELAY_TRUST_PROXY: whose X-Forwarded-For ingest believes ("" none, "true" any, or CIDRs). */
  trustProxy: string;
  /** HOOKRELAY_SMTP_URL: email channels send through it unless their config names another. */
  smtpUrl?: string;
  /** HOOKRELAY_ENDPOINT_DISABLE_AFTER: an application endpoint failing this long without a success is disabled; undefined: never. */
  endpointDisableAfterMs?: number;
  /** HOOKRELAY_PORTAL_LINK_TTL: how long a portal link lasts unless its request says otherwise. */
  portalLinkTtlMs?: number;
  /** HOOKRELAY_MAX_ENDPOINTS_PER_APP: endpoints an application may have; undefined: 20. */
  maxEndpointsPerApp?: number;
  /** HOOKRELAY_PORTAL_RESENDS_PER_MINUTE: resends a portal link may ask for per application and minute; undefined: 10. */
  portalResendsPerMinute?: number;
  /** HOOKRELAY_REJECTED_STORE_PER_MINUTE: rejected ingest requests stored per source and minute on this node (src/ingest/rejectedBudget.ts); undefined: the default. */
  rejectedStorePerMinute?: number;
}

/** Everything a use-case needs, passed explicitly. */
export interface Deps {
  db: Db;
  clock: Clock;
  secrets: SecretBox;
  bus: Bus;
  settings: DomainSettings;
  /**
   * This process among the nodes sharing the database (src/cluster/nodes.ts):
   * `serve` registers it and keeps its heartbeat; a local-mode CLI has an id
   * (claims it makes are marked with it) but is no member of the cluster.
   */
  node: ThisNode;
}

/** Who is asking, and where their data lives. Every query is bounded by org and env. */
export interface Scope {
  orgId: string;
  envId: string;
  userId: string | null;
  via: "session" | "api_key" | "local" | "portal";
  /** `*` or `read`. */
  scopes: string;
  apiKeyId?: string;
  /** A portal link's scope: only this application exists for it (any other answers 404). */
  portal?: { applicationId: string; expiresAt: string };
}

/** The settings the domain reads, from the one config: serve and the CLI's local mode build them alike. */
export function domainSettings(config: Config, baseUrl: string = config.baseUrl): DomainSettings {
  return {
    baseUrl,
    retentionDays: config.retentionDays,
    maxBodyBytes: config.maxBodyBytes,
    blockPrivateDestinations: config.blockPrivateDestinations,
    trustProxy: config.trustProxy,
    smtpUrl: config.smtpUrl,
    endpointDisableAfterMs: config.endpointDisableAfter,
    portalLinkTtlMs: config.portalLinkTtl,
    maxEndpointsPerApp: config.maxEndpointsPerApp,
    portalResendsPerMinute: config.portalResendsPerMinute,
    rejectedStorePerMinute: config.rejectedStorePerMinute,
  };
}
