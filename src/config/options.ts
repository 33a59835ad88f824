/**
 * Every server option, once: its flag, its HOOKRELAY_* variable, its default
 * and how to parse it. `serve --help`, docs/configuration.md and loadConfig
 * all read this table.
 */
export interface OptionSpec<T> {
  key: string;
  flag: string;
  env: string;
  description: string;
  default: T;
  /** Shown in help instead of the default value (e.g. for derived defaults). */
  defaultLabel?: string;
  /** Never printed (`config print` redacts it). */
  secret?: boolean;
  parse(raw: string): T;
}

import { ConfigError } from "./errors";
import type { Role } from "../contracts/roles";
import { domainsOption, issuerOption, provisionRoleOption, roleMapOption, scopesOption } from "./oidc";

export { ConfigError };

const int = (name: string, min: number, max: number) => (raw: string) => {
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`);
  return n;
};
const bool = (name: string) => (raw: string) => {
  const v = raw.trim().toLowerCase();
  if (["1", "true", "yes", "on"].includes(v)) return true;
  if (["0", "false", "no", "off", ""].includes(v)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
};
const oneOf =
  <T extends string>(name: string, values: readonly T[]) =>
  (raw: string) => {
    const v = raw.trim().toLowerCase() as T;
    if (!values.includes(v)) throw new ConfigError(`${name} must be one of ${values.join(", ")}, got "${raw}"`);
    return v;
  };
/** OTEL_TRACES_SAMPLER's values this server knows (the specification's, without the Jaeger ones). */
export const SAMPLERS = ["always_on", "always_off", "traceidratio", "parentbased_always_on", "parentbased_always_off", "parentbased_traceidratio"] as const;
export type SamplerName = (typeof SAMPLERS)[number];
const str = (raw: string) => raw;
const ratio = (name: string) => (raw: string) => {
  const n = Number(raw.trim());
  if (raw.trim() === "" || !Number.isFinite(n) || n < 0 || n > 1) throw new ConfigError(`${name} must be a number from 0 to 1, got "${raw}"`);
  return n;
};
const optStr = (raw: string): string | undefined => (raw === "" ? undefined : raw);
/** A whole number, or unset when empty (an env file's `NAME=`). */
const optInt = (name: string, min: number, max: number) => (raw: string) => (raw.trim() === "" ? undefined : int(name, min, max)(raw));
const url = (name: string) => (raw: string) => {
  if (raw === "") return undefined;
  try {
    const u = new URL(raw);
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error();
    return raw.replace(/\/+$/, "");
  } catch {
    throw new ConfigError(`${name} must be an http(s) URL, got "${raw}"`);
  }
};

/**
 * HOOKRELAY_SMTP_URL: smtp:// or smtps://, with at most the query options the
 * email notifier maps to explicit settings (requireTLS, tls.rejectUnauthorized):
 * any other (a proxy) would take mail past the address guard.
 */
const smtpUrlOption = (raw: string): string | undefined => {
  if (raw.trim() === "") return undefined;
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    throw new ConfigError("SMTP URL must look like smtp://user:pass@host:587 or smtps://user:pass@host:465");
  }
  if (u.protocol !== "smtp:" && u.protocol !== "smtps:") throw new ConfigError("SMTP URL must use smtp:// or smtps://");
  for (const k of u.searchParams.keys()) {
    if (k !== "requireTLS" && k !== "tls.rejectUnauthorized") throw new ConfigError(`SMTP URL option "${k}" is not supported: only requireTLS and tls.rejectUnauthorized are`);
  }
  return raw.trim();
};

const databaseUrl = (raw: string): string | undefined => {
  if (raw.trim() === "") return undefined;
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    throw new ConfigError(`database URL must look like postgres://user:password@host:5432/database`);
  }
  if (u.protocol !== "postgres:" && u.protocol !== "postgresql:") throw new ConfigError(`database URL must start with postgres:// (hookrelay stores in PostgreSQL or, without a URL, in SQLite), got ${u.protocol}//…`);
  return raw.trim();
};

/** `90s`, `30m`, `24h`, `7d` → milliseconds; `off`, `0` or empty → undefined. */
const duration = (name: string) => (raw: string): number | undefined => {
  const v = raw.trim().toLowerCase();
  if (v === "" || v === "off" || v === "0") return undefined;
  const m = /^(\d+)(s|m|h|d)$/.exec(v);
  if (!m || Number(m[1]) === 0) throw new ConfigError(`${name} must be a duration such as 90s, 30m, 24h or 7d (or off), got "${raw}"`);
  return Number(m[1]) * { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as "s" | "m" | "h" | "d"];
};

const human = (ms: number) => (ms % 86_400_000 === 0 ? `${ms / 86_400_000}d` : ms % 3_600_000 === 0 ? `${ms / 3_600_000}h` : ms % 60_000 === 0 ? `${ms / 60_000}m` : `${ms / 1000}s`);

/** A duration that must be given (no `off`), within [min, max] milliseconds. */
const boundedDuration = (name: string, minMs: number, maxMs: number) => (raw: string): number => {
  const ms = duration(name)(raw);
  if (ms === undefined || ms < minMs || ms > maxMs) throw new ConfigError(`${name} must be a duration between ${human(minMs)} and ${human(maxMs)}, got "${raw}"`);
  return ms;
};

function opt<T>(spec: OptionSpec<T>) {
  return spec;
}

export const serverOptions = {
  port: opt({ key: "port", flag: "--port <port>", env: "HOOKRELAY_PORT", description: "TCP port to listen on (0 picks a free one)", default: 8080, parse: int("port", 0, 65535) }),
  host: opt({ key: "host", flag: "--host <host>", env: "HOOKRELAY_HOST", description: "Address to bind", default: "0.0.0.0", parse: str }),
  dataDir: opt({ key: "dataDir", flag: "--data-dir <dir>", env: "HOOKRELAY_DATA_DIR", description: "Directory holding the SQLite database and key file", default: "./data", parse: str }),
  databaseUrl: opt<string | undefined>({ key: "databaseUrl", flag: "--database-url <url>", env: "HOOKRELAY_DATABASE_URL", description: "PostgreSQL 15+ to store everything in (postgres://user:pass@host:5432/db) instead of the data dir's SQLite file; needs HOOKRELAY_SECRET_KEY", default: undefined, defaultLabel: "SQLite in the data dir", secret: true, parse: databaseUrl }),
  baseUrl: opt<string | undefined>({ key: "baseUrl", flag: "--base-url <url>", env: "HOOKRELAY_BASE_URL", description: "Public URL used to build ingest URLs", default: undefined, defaultLabel: "http://localhost:<port>", parse: url("base URL") }),
  adminEmail: opt({ key: "adminEmail", flag: "--admin-email <email>", env: "HOOKRELAY_ADMIN_EMAIL", description: "Email of the admin user created on first start", default: "admin@localhost", parse: str }),
  adminPassword: opt<string | undefined>({ key: "adminPassword", flag: "--admin-password <password>", env: "HOOKRELAY_ADMIN_PASSWORD", description: "Password of the admin user created on first start", default: undefined, defaultLabel: "generated and printed once", secret: true, parse: optStr }),
  adminPasswordFile: opt<string | undefined>({ key: "adminPasswordFile", flag: "--admin-password-file <path>", env: "HOOKRELAY_ADMIN_PASSWORD_FILE", description: "Read the first start's admin password from this file instead (a trailing newline is dropped), so it is in no environment or unit file", default: undefined, defaultLabel: "none", parse: optStr }),
  secretKey: opt<string | undefined>({ key: "secretKey", flag: "--secret-key <key>", env: "HOOKRELAY_SECRET_KEY", description: "Key that encrypts stored secrets (required with a database URL: every node must decrypt them)", default: undefined, defaultLabel: "<data-dir>/secret.key, created on first start", secret: true, parse: optStr }),
  trustProxy: opt({ key: "trustProxy", flag: "--trust-proxy <cidrs>", env: "HOOKRELAY_TRUST_PROXY", description: "Proxies whose X-Forwarded-For is believed: comma list of CIDRs, or true for any", default: "", defaultLabel: "none", parse: str }),
  maxBodyBytes: opt({ key: "maxBodyBytes", flag: "--max-body-bytes <bytes>", env: "HOOKRELAY_MAX_BODY_BYTES", description: "Largest request body accepted", default: 5 * 1024 * 1024, parse: int("max body bytes", 1, 1024 * 1024 * 1024) }),
  rejectedStorePerMinute: opt({ key: "rejectedStorePerMinute", flag: "--rejected-store-per-minute <n>", env: "HOOKRELAY_REJECTED_STORE_PER_MINUTE", description: "Rejected ingest requests (bad signature, schema reject) stored per source and minute, on each node; past it they are answered the same and counted, not stored (0: store none)", default: 60, parse: int("rejected store per minute", 0, 1_000_000) }),
  metricsToken: opt<string | undefined>({ key: "metricsToken", flag: "--metrics-token <token>", env: "HOOKRELAY_METRICS_TOKEN", description: "Bearer token GET /metrics requires (Authorization: Bearer <token>); unset: /metrics answers anyone", default: undefined, defaultLabel: "none (public)", secret: true, parse: optStr }),
  streamsPerCredential: opt({ key: "streamsPerCredential", flag: "--streams-per-credential <n>", env: "HOOKRELAY_STREAMS_PER_CREDENTIAL", description: "Live event streams (GET /v1/events/stream) one API key or session may hold open on a node; past it 429", default: 10, parse: int("streams per credential", 1, 10000) }),
  requestBodyTimeout: opt({ key: "requestBodyTimeout", flag: "--request-body-timeout <duration>", env: "HOOKRELAY_REQUEST_BODY_TIMEOUT", description: "A request whose body stops arriving for this long (no byte at all) is answered 408 and closed: 1s to 4m", default: 10_000, defaultLabel: "10s", parse: boundedDuration("request body timeout", 1000, 240_000) }),
  databaseWait: opt<number | undefined>({ key: "databaseWait", flag: "--database-wait <duration>", env: "HOOKRELAY_DATABASE_WAIT", description: "How long serve waits at start-up for a PostgreSQL that cannot be reached yet, trying again with backoff and logging each try, before it gives up: 90s, 30m, 24h, or off to wait as long as it takes", default: undefined, defaultLabel: "off (waits until it answers)", parse: duration("database wait") }),
  logLevel: opt({ key: "logLevel", flag: "--log-level <level>", env: "HOOKRELAY_LOG_LEVEL", description: "debug, info, warn or error", default: "info" as "debug" | "info" | "warn" | "error", parse: oneOf("log level", ["debug", "info", "warn", "error"] as const) }),
  logFormat: opt({ key: "logFormat", flag: "--log-format <format>", env: "HOOKRELAY_LOG_FORMAT", description: "auto (text on a TTY, JSON lines otherwise), text or json", default: "auto" as "auto" | "text" | "json", parse: oneOf("log format", ["auto", "text", "json"] as const) }),
  retentionDays: opt({ key: "retentionDays", flag: "--retention-days <days>", env: "HOOKRELAY_RETENTION_DAYS", description: "Events older than this are pruned with their attempts, and collection changelog entries older than this too", default: 30, parse: int("retention days", 1, 36500) }),
  auditRetentionDays: opt({ key: "auditRetentionDays", flag: "--audit-retention-days <days>", env: "HOOKRELAY_AUDIT_RETENTION_DAYS", description: "Audit log entries older than this are pruned (docs/audit.md)", default: 365, parse: int("audit retention days", 1, 36500) }),
  sync: opt({ key: "sync", flag: "--sync <mode>", env: "HOOKRELAY_SYNC", description: "SQLite synchronous mode: normal (safe against process crash) or full (against power loss)", default: "normal" as "normal" | "full", parse: oneOf("sync", ["normal", "full"] as const) }),
  deliveryConcurrency: opt({ key: "deliveryConcurrency", flag: "--delivery-concurrency <n>", env: "HOOKRELAY_DELIVERY_CONCURRENCY", description: "Deliveries in flight at once", default: 32, parse: int("delivery concurrency", 1, 1024) }),
  blockPrivateDestinations: opt({ key: "blockPrivateDestinations", flag: "--block-private-destinations <bool>", env: "HOOKRELAY_BLOCK_PRIVATE_DESTINATIONS", description: "Refuse deliveries to loopback and private addresses too", default: false, parse: bool("block private destinations") }),
  alertIntervalSeconds: opt({ key: "alertIntervalSeconds", flag: "--alert-interval-seconds <s>", env: "HOOKRELAY_ALERT_INTERVAL_SECONDS", description: "How often failure_rate, latency, dlq and volume_drop rules are evaluated (issue_opened and dlq also fire at once)", default: 30, parse: int("alert interval", 1, 86400) }),
  smtpUrl: opt<string | undefined>({ key: "smtpUrl", flag: "--smtp-url <url>", env: "HOOKRELAY_SMTP_URL", description: "SMTP server for email channels: smtp:// (STARTTLS when offered; ?requireTLS=true insists) or smtps:// (implicit TLS), e.g. smtp://user:pass@host:587; no other query option", default: undefined, defaultLabel: "none", secret: true, parse: smtpUrlOption }),
  backupInterval: opt<number | undefined>({ key: "backupInterval", flag: "--backup-interval <duration>", env: "HOOKRELAY_BACKUP_INTERVAL", description: "Back up the database into the backup dir this often: 90s, 30m, 24h, 7d (SQLite: a copy of the file; PostgreSQL: a portable archive made by the scheduler node, and HOOKRELAY_BACKUP_DIR must be set)", default: undefined, defaultLabel: "off", parse: duration("backup interval") }),
  backupDir: opt<string | undefined>({ key: "backupDir", flag: "--backup-dir <dir>", env: "HOOKRELAY_BACKUP_DIR", description: "Where backups are written and listed (a directory on the server's machine); required for scheduled backups with a database URL", default: undefined, defaultLabel: "<data-dir>/backups (SQLite); none with a database URL", parse: optStr }),
  backupKeep: opt({ key: "backupKeep", flag: "--backup-keep <count>", env: "HOOKRELAY_BACKUP_KEEP", description: "Scheduled backups kept; older ones are deleted", default: 7, parse: int("backup keep", 1, 10000) }),
  endpointDisableAfter: opt<number | undefined>({ key: "endpointDisableAfter", flag: "--endpoint-disable-after <duration>", env: "HOOKRELAY_ENDPOINT_DISABLE_AFTER", description: "An application endpoint whose deliveries fail this long without a single success is disabled (an issue opens): 90s, 30m, 24h, 5d, or off", default: 5 * 86_400_000, defaultLabel: "5d", parse: duration("endpoint disable after") }),
  maxEndpointsPerApp: opt({ key: "maxEndpointsPerApp", flag: "--max-endpoints-per-app <n>", env: "HOOKRELAY_MAX_ENDPOINTS_PER_APP", description: "Endpoints an application may have (a portal link cannot add more)", default: 20, parse: int("max endpoints per application", 1, 100000) }),
  portalResendsPerMinute: opt({ key: "portalResendsPerMinute", flag: "--portal-resends-per-minute <n>", env: "HOOKRELAY_PORTAL_RESENDS_PER_MINUTE", description: "Message resends a portal link may ask for per application and minute (more answer 429)", default: 10, parse: int("portal resends per minute", 1, 100000) }),
  portalLinkTtl: opt({ key: "portalLinkTtl", flag: "--portal-link-ttl <duration>", env: "HOOKRELAY_PORTAL_LINK_TTL", description: "How long a consumer portal link lasts unless its request sets expires_in: 60s to 7d", default: 3_600_000, defaultLabel: "1h", parse: boundedDuration("portal link TTL", 60_000, 7 * 86_400_000) }),
  oidcIssuer: opt<string | undefined>({ key: "oidcIssuer", flag: "--oidc-issuer <url>", env: "HOOKRELAY_OIDC_ISSUER", description: "Single sign-on: the OpenID Connect provider's issuer URL, exactly as its discovery document states it (docs/teams.md, \"Single sign-on\"); the redirect URI to register there is the base URL + /v1/auth/oidc/callback", default: undefined, defaultLabel: "none (no single sign-on)", parse: issuerOption }),
  oidcClientId: opt<string | undefined>({ key: "oidcClientId", flag: "--oidc-client-id <id>", env: "HOOKRELAY_OIDC_CLIENT_ID", description: "Single sign-on: the client id registered at the provider", default: undefined, defaultLabel: "none", parse: optStr }),
  oidcClientSecret: opt<string | undefined>({ key: "oidcClientSecret", flag: "--oidc-client-secret <secret>", env: "HOOKRELAY_OIDC_CLIENT_SECRET", description: "Single sign-on: the client's secret (unset: a public client, PKCE alone)", default: undefined, defaultLabel: "none", secret: true, parse: optStr }),
  oidcName: opt({ key: "oidcName", flag: "--oidc-name <label>", env: "HOOKRELAY_OIDC_NAME", description: "Single sign-on: the login page's button says \"Sign in with <label>\"", default: "SSO", parse: str }),
  oidcScopes: opt({ key: "oidcScopes", flag: "--oidc-scopes <scopes>", env: "HOOKRELAY_OIDC_SCOPES", description: "Single sign-on: scopes asked for, space or comma separated (openid and email required; add groups when the role claim needs it)", default: "openid email profile", parse: scopesOption }),
  oidcAllowedDomains: opt<string[] | undefined>({ key: "oidcAllowedDomains", flag: "--oidc-allowed-domains <domains>", env: "HOOKRELAY_OIDC_ALLOWED_DOMAINS", description: "Single sign-on: only verified emails of these domains sign in (comma list)", default: undefined, defaultLabel: "any domain", parse: domainsOption }),
  oidcAutoProvisionRole: opt<Role | undefined>({ key: "oidcAutoProvisionRole", flag: "--oidc-auto-provision-role <role>", env: "HOOKRELAY_OIDC_AUTO_PROVISION_ROLE", description: "Single sign-on: an unknown user with a verified email of an allowed domain becomes a member of the instance's first organization with this role (viewer, developer or admin); off: unknown users are refused", default: undefined, defaultLabel: "off", parse: provisionRoleOption }),
  oidcRoleClaim: opt<string | undefined>({ key: "oidcRoleClaim", flag: "--oidc-role-claim <claim>", env: "HOOKRELAY_OIDC_ROLE_CLAIM", description: "Single sign-on: the claim the role map reads (e.g. groups)", default: undefined, defaultLabel: "none", parse: optStr }),
  oidcRoleMap: opt<string | undefined>({ key: "oidcRoleMap", flag: "--oidc-role-map <map>", env: "HOOKRELAY_OIDC_ROLE_MAP", description: "Single sign-on: claim values to roles, e.g. hookrelay-admins:admin,platform:developer; applied at each login to the membership in the instance's first organization, the strongest mapped role winning (none mapped: the role stays)", default: undefined, defaultLabel: "none", parse: roleMapOption }),
  passwordLogin: opt({ key: "passwordLogin", flag: "--password-login <on|off>", env: "HOOKRELAY_PASSWORD_LOGIN", description: "off: POST /v1/auth/login is refused and single sign-on is the only way in (needs it configured; hookrelay users reset-password in local mode still works)", default: true, defaultLabel: "on", parse: bool("password login") }),
  // OpenTelemetry: the standard OTEL_* variables as the specification names them, and hookrelay's own (docs/observability.md).
  otelEndpoint: opt<string | undefined>({ key: "otelEndpoint", flag: "--otel-endpoint <url>", env: "OTEL_EXPORTER_OTLP_ENDPOINT", description: "OTLP/HTTP collector base URL: traces are sent to <url>/v1/traces; unset (with no traces endpoint): tracing is off", default: undefined, defaultLabel: "off", parse: url("OTLP endpoint") }),
  otelTracesEndpoint: opt<string | undefined>({ key: "otelTracesEndpoint", flag: "--otel-traces-endpoint <url>", env: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", description: "OTLP/HTTP traces URL used as it is (wins over the base endpoint)", default: undefined, defaultLabel: "<endpoint>/v1/traces", parse: url("OTLP traces endpoint") }),
  otelHeaders: opt<string | undefined>({ key: "otelHeaders", flag: "--otel-headers <list>", env: "OTEL_EXPORTER_OTLP_HEADERS", description: "Headers sent with every export: name=value pairs, comma separated, values URL-encoded (e.g. x-honeycomb-team=KEY)", default: undefined, defaultLabel: "none", secret: true, parse: optStr }),
  otelTimeout: opt({ key: "otelTimeout", flag: "--otel-timeout <ms>", env: "OTEL_EXPORTER_OTLP_TIMEOUT", description: "How long one export request may take, in milliseconds; past it the batch counts as dropped", default: 10_000, parse: int("OTLP timeout", 1, 600_000) }),
  otelTracesTimeout: opt<number | undefined>({ key: "otelTracesTimeout", flag: "--otel-traces-timeout <ms>", env: "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", description: "The timeout of trace exports (wins over the general one)", default: undefined, defaultLabel: "OTEL_EXPORTER_OTLP_TIMEOUT", parse: optInt("OTLP traces timeout", 1, 600_000) }),
  otelServiceName: opt({ key: "otelServiceName", flag: "--otel-service-name <name>", env: "OTEL_SERVICE_NAME", description: "service.name of the exported spans", default: "hookrelay", parse: str }),
  otelTracesSampler: opt({ key: "otelTracesSampler", flag: "--otel-traces-sampler <sampler>", env: "OTEL_TRACES_SAMPLER", description: "always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off or parentbased_traceidratio", default: "parentbased_always_on" as SamplerName, parse: oneOf("traces sampler", SAMPLERS) }),
  otelTracesSamplerArg: opt({ key: "otelTracesSamplerArg", flag: "--otel-traces-sampler-arg <ratio>", env: "OTEL_TRACES_SAMPLER_ARG", description: "The ratio of traces the traceidratio samplers keep, 0 to 1", default: 1, parse: ratio("traces sampler arg") }),
  otelPropagate: opt({ key: "otelPropagate", flag: "--otel-propagate <bool>", env: "HOOKRELAY_OTEL_PROPAGATE", description: "Send each delivery attempt's traceparent to its destination (a destination's own traceparent header wins; set it empty to send none)", default: true, parse: bool("otel propagate") }),
  otelQueueSize: opt({ key: "otelQueueSize", flag: "--otel-queue-size <spans>", env: "HOOKRELAY_OTEL_QUEUE_SIZE", description: "Spans waiting for export at most; past it they are dropped and counted (hookrelay_otel_spans_dropped_total)", default: 2048, parse: int("otel queue size", 1, 1_000_000) }),
  shutdownTimeoutMs: opt({ key: "shutdownTimeoutMs", flag: "--shutdown-timeout-ms <ms>", env: "HOOKRELAY_SHUTDOWN_TIMEOUT_MS", description: "How long SIGTERM waits for in-flight work", default: 10000, parse: int("shutdown timeout", 0, 600000) }),
} as const;

export type ServerOptionKey = keyof typeof serverOptions;
