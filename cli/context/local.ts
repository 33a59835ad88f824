/**
 * Local mode: opens the store `serve` would (the data dir's SQLite file, or
 * PostgreSQL with a database URL) with the same deps, and finds the default
 * scope the commands act in (bootstrapping an empty database as `serve` does).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { ConfigError, loadConfig } from "../../src/config/config";
import type { Deps, Scope } from "../../src/domain/deps";
import type { Bus } from "../../src/core/bus";
import { CliError, EXIT } from "../errors";
import type { Output } from "../output";

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
export async function openLocal(target: { dataDir?: string; databaseUrl?: string; envRef?: string; orgRef?: string }, out: Output): Promise<LocalStore & { close(): Promise<void> }> {
  const config = loadConfig({ dataDir: target.dataDir, databaseUrl: target.databaseUrl });
  const [{ createDeps }, { DatabaseUnavailable }, { databasePath }, { bootstrap, defaultScope }, { systemClock }, { readServerInfo }] = await Promise.all([
    import("../../src/boot/deps"),
    import("../../src/db/store"),
    import("../../src/db/sqlite/open"),
    import("../../src/domain/bootstrap"),
    import("../../src/core/clock"),
    import("../../src/runtime/serverLock"),
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
    // --org: another organization, in its first environment; --env: another environment of the organization.
    if (target.orgRef !== undefined) scope = await localOrganization(deps, target.orgRef);
    const envId = target.envRef === undefined ? scope.envId : await localEnvironment(deps, scope.orgId, target.envRef);
    return {
      deps,
      scope: { orgId: scope.orgId, envId, userId: null, via: "local", scopes: "*", role: "owner" },
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

/** Local mode is the operator on the machine: any organization of the database, by slug or id. */
async function localOrganization(deps: Deps, ref: string): Promise<{ orgId: string; envId: string }> {
  const { organizationByRef } = await import("../../src/domain/organizations");
  const { firstEnvironmentId } = await import("../../src/domain/currentOrganization");
  const org = await organizationByRef(deps, ref);
  const envId = org && (await firstEnvironmentId(deps, org.id));
  if (!org || !envId) throw new CliError(`no organization "${ref}": \`hookrelay orgs list\` shows them`, EXIT.error, "not_found");
  return { orgId: org.id, envId };
}

async function localEnvironment(deps: Deps, orgId: string, ref: string): Promise<string> {
  const { findEnvironment } = await import("../../src/domain/environments");
  const env = await findEnvironment(deps, orgId, ref).catch(() => null);
  if (!env) throw new CliError(`no environment "${ref}" in the organization: \`hookrelay envs list\` shows them`, EXIT.error, "not_found");
  return env.id;
}
