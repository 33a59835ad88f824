/**
 * One code path for two modes. A command describes an operation once: its
 * remote form (method, path, query, body of the /v1 API) and its local form
 * (the domain call the route makes). Remote mode sends the request; local
 * mode opens the store `serve` would (the data dir's SQLite file, or PostgreSQL
 * with a database URL) and calls the same domain code in the default scope.
 * Both return the object the API returns; errors of either become a CliError with the API's error body and a stable exit code.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { z } from "zod";
import { describeNetworkError } from "../src/outgoing/networkErrors";
import { ConfigError, loadConfig } from "../src/config/config";
import { AppError, type ErrorBody, parseOrThrow } from "../src/contracts/errors";
import type { Deps, Scope } from "../src/domain/deps";
import type { Bus } from "../src/core/bus";
import { CliError, EXIT, usageError } from "./errors";
import { Output } from "./output";
import { profileName, readProfiles, type Profile } from "./profiles";

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
export type QueryValue = string | number | boolean | null | undefined;

export interface Operation<T> {
  method: Method;
  /** Path under /v1, ids already in it (use `path` to encode them). */
  path: string;
  query?: Record<string, QueryValue>;
  body?: unknown;
  /**
   * The top-level key every hookrelay answer to this call has (`sources`,
   * `job_id`, …). A 2xx answer without it comes from some other server.
   */
  expect: string;
  /** The same operation without HTTP: the domain function the route calls. */
  local: (deps: Deps, scope: Scope) => Promise<T>;
}

/** Global flags, from the command or any ancestor (the nearest wins). */
export interface GlobalFlags {
  url?: string;
  apiKey?: string;
  profile?: string;
  dataDir?: string;
  databaseUrl?: string;
  json?: boolean;
}

export interface Context {
  readonly mode: "remote" | "local";
  readonly out: Output;
  readonly json: boolean;
  run<T>(op: Operation<T>): Promise<T>;
  /** Remote mode only: the HTTP client (streams, login). */
  readonly remote?: RemoteClient;
  /** Local mode only: deps and scope for domain calls outside an Operation. */
  readonly local?: LocalStore;
  close(): Promise<void>;
}

/** Builds `/sources/<id>/…` with every id segment URL-encoded. */
export function path(strings: TemplateStringsArray, ...ids: (string | number)[]) {
  return strings.reduce((acc, s, i) => acc + s + (i < ids.length ? encodeURIComponent(String(ids[i])) : ""), "");
}

// ---------------------------------------------------------------- errors

const STATUS_CODE: Record<number, ErrorBody["error"]["code"]> = { 413: "payload_too_large", 429: "rate_limited" };

/** 401/403 → exit 4 (auth), any other API error → exit 1. */
export function exitCodeForStatus(status: number) {
  return status === 401 || status === 403 ? EXIT.auth : EXIT.error;
}

/** An API error body (from HTTP or from an AppError) as a CliError: one line, the code, the body for --json. */
export function apiErrorToCli(status: number, body: ErrorBody, hint?: string) {
  const { code, message, details } = body.error;
  let line = message;
  // Field problems come as a list; a schema_violation's as `{errors: [...]}` beside what was checked.
  const problems: unknown = Array.isArray(details) ? details : (details as { errors?: unknown } | undefined)?.errors;
  if (Array.isArray(problems) && problems.length > 0) {
    // Details that are not field problems (a 409's list of the rules in the way) say nothing here: the command words them.
    const parts = problems
      .slice(0, 5)
      .map((d: { field?: string; path?: string; message?: string }) => [d.field ?? d.path, d.message].filter(Boolean).join(": "))
      .filter(Boolean);
    if (parts.length > 0) line += ` (${parts.join("; ")}${problems.length > 5 ? "; …" : ""})`;
  }
  if (hint) line += `; ${hint}`;
  return new CliError(line, exitCodeForStatus(status), code, body);
}

function appErrorToCli(err: unknown): unknown {
  if (err instanceof AppError) return apiErrorToCli(err.status, err.toBody());
  return err;
}

/**
 * Local mode validates input with the same contracts schema the route uses,
 * and reports problems in the same shape (`details: [{field, message}]`).
 */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, target: "body" | "query" = "body"): z.output<S> {
  return parseOrThrow(schema, value, "Request validation failed", [target]);
}

// ---------------------------------------------------------------- remote

type Auth = { kind: "api_key"; key: string } | { kind: "session"; cookie: string; profile: string } | { kind: "none" };

export class RemoteClient {
  constructor(
    readonly url: string,
    readonly auth: Auth,
  ) {}

  /** Credentials, plus Origin on session mutations (the server's CSRF same-origin check). */
  headers(method: Method | "GET" = "GET"): Record<string, string> {
    const h: Record<string, string> = { accept: "application/json", "user-agent": "hookrelay-cli" };
    if (this.auth.kind === "api_key") h["x-api-key"] = this.auth.key;
    if (this.auth.kind === "session") {
      h.cookie = this.auth.cookie;
      if (method !== "GET") h.origin = new URL(this.url).origin;
    }
    return h;
  }

  endpoint(p: string, query?: Record<string, QueryValue>) {
    const u = new URL(this.url + "/v1" + p);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== null) u.searchParams.set(k, String(v));
    return u.toString();
  }

  async fetch(method: Method, p: string, opts: { query?: Record<string, QueryValue>; body?: unknown; headers?: Record<string, string>; signal?: AbortSignal } = {}) {
    const headers = { ...this.headers(method), ...opts.headers };
    if (opts.body !== undefined) headers["content-type"] = "application/json";
    try {
      return await fetch(this.endpoint(p, opts.query), { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body), signal: opts.signal, redirect: "manual" });
    } catch (err) {
      if ((err as Error)?.name === "AbortError") throw err;
      throw new CliError(`cannot reach ${this.url}: ${describeNetworkError(err)}`, EXIT.error, "connection_failed");
    }
  }

  /**
   * A JSON request whose answer must be hookrelay's: a JSON object with the
   * `expect` key, or hookrelay's error body. Anything else (an HTML page, `{}`,
   * a redirect) means the URL is some other server, whatever its status.
   */
  async request<T>(method: Method, p: string, opts: { query?: Record<string, QueryValue>; body?: unknown; expect: string }): Promise<T> {
    const res = await this.fetch(method, p, opts);
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text === "" ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (res.ok) {
      if (isObject(parsed) && opts.expect in parsed) return parsed as T;
      throw this.notHookrelay(method, p, res, parsed === undefined ? "not JSON" : `JSON without "${opts.expect}"`);
    }
    throw this.failure(method, p, res, parsed);
  }

  /** The CliError for a non-2xx answer: hookrelay's error body, a server error, or some other server. */
  failure(method: Method, p: string, res: Response, parsed: unknown): CliError {
    if (isErrorBody(parsed)) return apiErrorToCli(res.status, parsed, this.hint(res.status, parsed.error.code));
    // What a proxy in front of the server answers on its own (gateway down, body too large, throttled).
    if (res.status >= 500 || res.status === 413 || res.status === 429) {
      const body: ErrorBody = { error: { code: STATUS_CODE[res.status] ?? "internal", message: `HTTP ${res.status} from ${this.url}` } };
      return apiErrorToCli(res.status, body);
    }
    const location = res.headers.get("location");
    return this.notHookrelay(method, p, res, location ? `a redirect to ${location}` : "no hookrelay error body", exitCodeForStatus(res.status));
  }

  notHookrelay(method: Method, p: string, res: Response, what: string, exitCode: number = EXIT.error) {
    const type = res.headers.get("content-type")?.split(";")[0];
    const message = `not a hookrelay server at ${this.url}? (${method} /v1${p} answered HTTP ${res.status}${type ? ` ${type}` : ""}, ${what})`;
    return new CliError(message, exitCode, "bad_response", { error: { code: "bad_response", message } });
  }

  private hint(status: number, code: string) {
    if (status === 401 && this.auth.kind === "session") return `the saved session of profile "${this.auth.profile}" is no longer valid: run \`hookrelay login\``;
    if (status === 401 && this.auth.kind === "none") return "log in with `hookrelay login`, or pass --api-key / HOOKRELAY_API_KEY";
    if (code === "session_required") return "this needs a logged-in session: run `hookrelay login` (an API key cannot manage keys)";
    return undefined;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

const isErrorBody = (v: unknown): v is ErrorBody =>
  typeof v === "object" && v !== null && typeof (v as ErrorBody).error === "object" && typeof (v as ErrorBody).error?.code === "string";

/** Accepts `http://host:8080`, with or without a trailing slash or `/v1`. */
export function normalizeUrl(raw: string) {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw usageError(`--url must be an http(s) URL, got "${raw}"`);
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") throw usageError(`--url must be an http(s) URL, got "${raw}"`);
  return (u.origin + u.pathname).replace(/\/+$/, "").replace(/\/v1$/, "");
}

// ---------------------------------------------------------------- local

export interface LocalStore {
  deps: Deps;
  scope: Scope;
  dataDir: string;
  /** Where the data lives, for messages: the data dir, or the database URL without its password. */
  location: string;
  /** The database file, when the database is one (SQLite): backups copy it. */
  databaseFile: string | null;
}

/** Nothing listens in this process: the running server's workers poll the tables as their safety net. */
const quietBus: Bus = { publish() {}, subscribe: () => () => {} };

/** The same deps `serve` builds (createDeps), on the data dir's SQLite file or the database URL's PostgreSQL. */
async function openLocal(target: { dataDir?: string; databaseUrl?: string }, out: Output): Promise<LocalStore & { close(): Promise<void> }> {
  const config = loadConfig({ dataDir: target.dataDir, databaseUrl: target.databaseUrl });
  const [{ createDeps }, { DatabaseUnavailable }, { databasePath }, { bootstrap, defaultScope }, { systemClock }, { readServerInfo }] = await Promise.all([
    import("../src/boot/deps"),
    import("../src/db/store"),
    import("../src/db/sqlite/open"),
    import("../src/domain/bootstrap"),
    import("../src/core/clock"),
    import("../src/runtime/serverLock"),
  ]);
  if (!config.databaseUrl && !config.secretKey && existsSync(databasePath(config.dataDir)) && !existsSync(join(config.dataDir, "secret.key"))) {
    // The server encrypts secrets with HOOKRELAY_SECRET_KEY: a new key file here would seal them with another key.
    throw new CliError(`${config.dataDir} has no secret.key: its server uses HOOKRELAY_SECRET_KEY; set the same variable for local mode`, EXIT.error, "secret_key_required");
  }
  let opened;
  try {
    opened = await createDeps(config, { bus: quietBus, baseUrl: localBaseUrl(config.baseUrl, config.databaseUrl && !target.dataDir ? undefined : readServerInfo(config.dataDir)?.base_url) });
  } catch (err) {
    if (err instanceof DatabaseUnavailable) throw new CliError(err.message, EXIT.error, "database_unavailable");
    if (err instanceof ConfigError) throw new CliError(err.message, EXIT.error, "config_error");
    if (config.databaseUrl) throw err;
    throw new CliError(`cannot open the database in ${config.dataDir}: ${(err as Error).message}`, EXIT.error, "database_unavailable");
  }
  const { deps, store } = opened;
  try {
    let scope = await defaultScope(store.db);
    if (!scope) {
      // An empty database: the same first-start bootstrap `serve` does.
      const boot = await bootstrap(store.db, systemClock, { email: config.adminEmail, password: config.adminPassword });
      out.note(`initialised ${config.databaseUrl ? `the database ${store.location}` : `a new data dir in ${config.dataDir}`}: org default, env production, admin ${boot.email}`);
      if (boot.generatedPassword) process.stderr.write(`admin password (shown once): ${boot.generatedPassword}\n`);
      scope = await defaultScope(store.db);
    }
    if (!scope) throw new CliError(`no organization in ${store.location}`, EXIT.error);
    return {
      deps,
      scope: { orgId: scope.orgId, envId: scope.envId, userId: null, via: "local", scopes: "*" },
      dataDir: config.dataDir,
      location: config.databaseUrl ? store.location : config.dataDir,
      databaseFile: store.sqlite?.path ?? null,
      close: () => store.close(),
    };
  } catch (err) {
    await store.close();
    throw err;
  }
}

/**
 * Ingest URLs in local mode: HOOKRELAY_BASE_URL when this shell sets it, else
 * the base URL the data dir's `serve` recorded (server.json), else the default.
 */
function localBaseUrl(configured: string, recorded: string | undefined) {
  if (process.env.HOOKRELAY_BASE_URL) return configured;
  return recorded ?? configured;
}

// ---------------------------------------------------------------- choosing the mode

type Env = Record<string, string | undefined>;

/**
 * Flags win over env vars. Local mode: --data-dir / HOOKRELAY_DATA_DIR, or
 * --database-url / HOOKRELAY_DATABASE_URL (PostgreSQL; both may be given).
 * Remote: --url / HOOKRELAY_URL with --api-key / HOOKRELAY_API_KEY, or a
 * saved profile (--profile / HOOKRELAY_PROFILE / the last login).
 */
export function resolveTarget(flags: GlobalFlags, env: Env = process.env):
  | { mode: "local"; dataDir?: string; databaseUrl?: string }
  | { mode: "remote"; url: string; auth: Auth }
  | { mode: "none" } {
  const remoteFlag = flags.url ?? flags.apiKey ?? flags.profile;
  const localFlag = flags.dataDir ?? flags.databaseUrl;
  if (localFlag !== undefined && remoteFlag !== undefined) throw usageError("choose one mode: --data-dir/--database-url (local) or --url/--api-key/--profile (remote), not both");
  let dataDir = flags.dataDir;
  let databaseUrl = flags.databaseUrl;
  if (localFlag === undefined && remoteFlag === undefined) {
    const envRemote = env.HOOKRELAY_URL || env.HOOKRELAY_API_KEY || env.HOOKRELAY_PROFILE;
    const envLocal = env.HOOKRELAY_DATA_DIR || env.HOOKRELAY_DATABASE_URL;
    if (envLocal && envRemote) throw usageError("both HOOKRELAY_DATA_DIR/HOOKRELAY_DATABASE_URL and HOOKRELAY_URL/HOOKRELAY_API_KEY/HOOKRELAY_PROFILE are set: pass --data-dir, --database-url or --url to choose the mode");
  }
  if (remoteFlag === undefined) {
    // A flag for one store still takes the other's variable (--data-dir with HOOKRELAY_DATABASE_URL: PostgreSQL, as serve would).
    dataDir ??= env.HOOKRELAY_DATA_DIR || undefined;
    databaseUrl ??= env.HOOKRELAY_DATABASE_URL || undefined;
  }
  if (dataDir === "") throw usageError("--data-dir needs a directory");
  if (databaseUrl === "") throw usageError("--database-url needs a postgres:// URL");
  if (dataDir !== undefined || databaseUrl !== undefined) return { mode: "local", ...(dataDir !== undefined ? { dataDir } : {}), ...(databaseUrl !== undefined ? { databaseUrl } : {}) };

  const rawUrl = flags.url ?? (env.HOOKRELAY_URL || undefined);
  const apiKey = flags.apiKey ?? (env.HOOKRELAY_API_KEY || undefined);
  const name = profileName(flags.profile, env);
  const profile: Profile | undefined = readProfiles(env).profiles[name];
  if (flags.profile && !profile) throw new CliError(`no saved profile "${flags.profile}": run \`hookrelay login --profile ${flags.profile}\``, EXIT.auth, "unauthorized");
  const url = rawUrl ? normalizeUrl(rawUrl) : profile?.url;
  if (!url && apiKey) throw usageError("--api-key needs a server: pass --url (or HOOKRELAY_URL)");
  if (!url) return { mode: "none" };
  if (apiKey) return { mode: "remote", url, auth: { kind: "api_key", key: apiKey } };
  if (profile && profile.url === url) return { mode: "remote", url, auth: { kind: "session", cookie: profile.cookie, profile: name } };
  return { mode: "remote", url, auth: { kind: "none" } };
}

const NO_TARGET =
  "not logged in and no server chosen: run `hookrelay login --url URL`, pass --url with --api-key (or HOOKRELAY_URL/HOOKRELAY_API_KEY), or work on a local data dir with --data-dir (or a PostgreSQL database with --database-url)";

export async function createContext(flags: GlobalFlags, opts: { out?: Output; env?: Env } = {}): Promise<Context> {
  const json = flags.json === true;
  const out = opts.out ?? new Output(json);
  const target = resolveTarget(flags, opts.env);
  if (target.mode === "none") throw new CliError(NO_TARGET, EXIT.auth, "unauthorized");

  if (target.mode === "remote") {
    const remote = new RemoteClient(target.url, target.auth);
    return {
      mode: "remote",
      out,
      json,
      remote,
      run: (op) => remote.request(op.method, op.path, { query: op.query, body: op.body, expect: op.expect }),
      close: async () => {},
    };
  }

  const local = await openLocal(target, out);
  return {
    mode: "local",
    out,
    json,
    local,
    async run(op) {
      try {
        // Round-trip through JSON so local output is byte-for-byte what the API would send.
        return JSON.parse(JSON.stringify(await op.local(local.deps, local.scope)));
      } catch (err) {
        throw appErrorToCli(err);
      }
    },
    close: () => local.close(),
  };
}
