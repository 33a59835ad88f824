/**
 * Which instance a command works on: a local data dir or database, or a
 * server with its credentials, from the global flags, the environment and
 * the saved login profiles.
 */
import { CliError, EXIT, usageError } from "../errors";
import { profileName, readProfiles, type Profile } from "../profiles";
import type { Auth } from "./remote";

/** Global flags, from the command or any ancestor (the nearest wins). */
export interface GlobalFlags {
  url?: string;
  apiKey?: string;
  profile?: string;
  dataDir?: string;
  databaseUrl?: string;
  /** The organization to act in, by slug or id (docs/cli.md, Organizations). */
  org?: string;
  /** The environment to act in, by slug or id (docs/cli.md, Environments). */
  env?: string;
  json?: boolean;
}

export type Env = Record<string, string | undefined>;

/**
 * Flags win over env vars. Local mode: --data-dir / HOOKRELAY_DATA_DIR, or
 * --database-url / HOOKRELAY_DATABASE_URL (PostgreSQL; both may be given).
 * Remote: --url / HOOKRELAY_URL with --api-key / HOOKRELAY_API_KEY, or a
 * saved profile (--profile / HOOKRELAY_PROFILE / the last login).
 */
export function resolveTarget(flags: GlobalFlags, env: Env = process.env):
  | { mode: "local"; dataDir?: string; databaseUrl?: string; envRef?: string; orgRef?: string }
  | { mode: "remote"; url: string; auth: Auth; envRef?: string; orgRef?: string }
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
  const named = flags.env ?? (env.HOOKRELAY_ENV || undefined);
  if (named === "") throw usageError("--env needs an environment's slug or id");
  const namedOrg = flags.org ?? (env.HOOKRELAY_ORG || undefined);
  if (namedOrg === "") throw usageError("--org needs an organization's slug or id");
  const envRef = { ...(named !== undefined ? { envRef: named } : {}), ...(namedOrg !== undefined ? { orgRef: namedOrg } : {}) };
  if (dataDir !== undefined || databaseUrl !== undefined) return { mode: "local", ...(dataDir !== undefined ? { dataDir } : {}), ...(databaseUrl !== undefined ? { databaseUrl } : {}), ...envRef };

  const rawUrl = flags.url ?? (env.HOOKRELAY_URL || undefined);
  const apiKey = flags.apiKey ?? (env.HOOKRELAY_API_KEY || undefined);
  const name = profileName(flags.profile, env);
  const profile: Profile | undefined = readProfiles(env).profiles[name];
  if (flags.profile && !profile) throw new CliError(`no saved profile "${flags.profile}": run \`hookrelay login --profile ${flags.profile}\``, EXIT.auth, "unauthorized");
  const url = rawUrl ? normalizeUrl(rawUrl) : profile?.url;
  if (!url && apiKey) throw usageError("--api-key needs a server: pass --url (or HOOKRELAY_URL)");
  if (!url) return { mode: "none" };
  // A key's environment is its own: --env is sent anyway, so the server refuses one naming another rather than the CLI acting elsewhere unawares.
  if (apiKey) return { mode: "remote", url, auth: { kind: "api_key", key: apiKey }, ...envRef };
  if (profile && profile.url === url) {
    const orgRef = namedOrg ?? profile.org;
    // The profile's environment belongs to the profile's organization: another organization named here starts from its own last used one.
    const envRefHere = named ?? (namedOrg === undefined || namedOrg === profile.org ? profile.env : undefined);
    return { mode: "remote", url, auth: { kind: "session", cookie: profile.cookie, profile: name }, ...(envRefHere ? { envRef: envRefHere } : {}), ...(orgRef ? { orgRef } : {}) };
  }
  return { mode: "remote", url, auth: { kind: "none" }, ...envRef };
}

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
