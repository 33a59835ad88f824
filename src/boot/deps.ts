import { newThisNode } from "../cluster/identity";
import { ConfigError, type Config } from "../config/config";
import { type Store } from "../db/store";
import { publishAfterCommit } from "../db/committedBus";
import { openStore } from "../db/openStore";
import { systemClock, type Clock } from "../core/clock";
import { domainSettings, type Deps } from "../domain/deps";
import { type Bus } from "../core/bus";
import { loadSecretBox } from "../domain/secrets";

export interface OpenedDeps {
  deps: Deps;
  store: Store;
}

/**
 * What `serve` and the CLI's local mode both build from the one config: the
 * store (SQLite in the data dir, or PostgreSQL with a database URL), the
 * secret box, the clock, the bus and the domain's settings.
 */
export async function createDeps(config: Config, opts: { clock?: Clock; bus: Bus; baseUrl?: string }): Promise<OpenedDeps> {
  // Every node of one database must decrypt the same secrets: no key file per data dir.
  if (config.databaseUrl && !config.secretKey) throw new ConfigError("HOOKRELAY_SECRET_KEY is required with a database URL (every node must decrypt the same secrets)");
  // Scheduled backups on PostgreSQL are portable archives written by the scheduler node: into a directory the operator names (docs/postgres.md).
  if (config.databaseUrl && config.backupInterval !== undefined && !config.backupDir) throw new ConfigError("HOOKRELAY_BACKUP_INTERVAL with a database URL needs HOOKRELAY_BACKUP_DIR: the directory the scheduler node writes its portable backups into");
  const store = await openStore({ dataDir: config.dataDir, databaseUrl: config.databaseUrl, sync: config.sync });
  try {
    const deps: Deps = {
      db: store.db,
      store,
      clock: opts.clock ?? systemClock,
      secrets: loadSecretBox(config.dataDir, config.secretKey),
      // What a use-case publishes inside a transaction is delivered after its commit (committedBus.ts).
      bus: publishAfterCommit(store.db, opts.bus),
      settings: domainSettings(config, opts.baseUrl),
      // serve replaces the address once its port is known; a local-mode CLI keeps this one.
      node: newThisNode(opts.baseUrl ?? config.baseUrl),
    };
    return { deps, store };
  } catch (error) {
    await store.close();
    throw error;
  }
}
