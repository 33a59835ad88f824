import type { Config } from "../config/config";
import { oidcSettings, type OidcSettings } from "../config/oidc";
import type { Db } from "../db/db";
import type { Store } from "../db/store";
import type { Bus } from "../core/bus";
import type { ThisNode } from "../core/node";
import type { Clock } from "../core/clock";
import type { Role } from "../contracts/roles";
import type { SecretBox } from "./secrets";

/** Settings the domain reads; a subset of the server config so local CLI mode can fill it too. */
export interface DomainSettings {
  baseUrl: string;
  retentionDays: number;
  /** HOOKRELAY_AUDIT_RETENTION_DAYS: audit entries older than this are pruned; undefined: 365. */
  auditRetentionDays?: number;
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
  /** Single sign-on (HOOKRELAY_OIDC_*), when configured (docs/teams.md, "Single sign-on"). */
  oidc?: OidcSettings;
  /** HOOKRELAY_PASSWORD_LOGIN: false refuses email and password sign-in; undefined: allowed. */
  passwordLogin?: boolean;
  /** HOOKRELAY_BACKUP_DIR: where backups go; undefined: <data-dir>/backups on a store that is a file, none otherwise (src/domain/backups.ts). */
  backupDir?: string;
}

/** Everything a use-case needs, passed explicitly. */
export interface Deps {
  /** The handle use-cases query with (on PostgreSQL it follows the current transaction). */
  db: Db;
  /**
   * The store `db` belongs to, chosen once (src/db/openStore.ts): what differs
   * when several nodes share it is asked of it (`store.shared`), never its dialect.
   */
  store: Store;
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
  /**
   * What the caller may do here (src/contracts/roles.ts): a session's member
   * role; a key's is at most its member's current role, and `viewer` for a
   * `read` key; local CLI mode is the operator on the machine (`owner`).
   */
  role: Role;
  apiKeyId?: string;
  /** Who the audit trail names (docs/audit.md): a user's email, a key's name; local mode: "local CLI". */
  actorName?: string | null;
  /** The caller's address, as the audit trail records it (src/api/clientAddress.ts). */
  ip?: string | null;
  /** A portal link's scope: only this application exists for it (any other answers 404). */
  portal?: { applicationId: string; expiresAt: string };
}

/** The settings the domain reads, from the one config: serve and the CLI's local mode build them alike. */
export function domainSettings(config: Config, baseUrl: string = config.baseUrl): DomainSettings {
  return {
    baseUrl,
    retentionDays: config.retentionDays,
    auditRetentionDays: config.auditRetentionDays,
    maxBodyBytes: config.maxBodyBytes,
    blockPrivateDestinations: config.blockPrivateDestinations,
    trustProxy: config.trustProxy,
    smtpUrl: config.smtpUrl,
    endpointDisableAfterMs: config.endpointDisableAfter,
    portalLinkTtlMs: config.portalLinkTtl,
    maxEndpointsPerApp: config.maxEndpointsPerApp,
    portalResendsPerMinute: config.portalResendsPerMinute,
    rejectedStorePerMinute: config.rejectedStorePerMinute,
    oidc: oidcSettings(config),
    passwordLogin: config.passwordLogin,
    backupDir: config.backupDir,
  };
}
