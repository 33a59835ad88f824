import { existsSync } from "node:fs";
import type { Config } from "../config/config";
import { databasePath } from "../db/sqlite/path";
import { hashAdminPassword, type AdminPassword } from "../domain/adminPassword";

/**
 * On a data dir without its database file (a first start on SQLite), the
 * admin bootstrap will need the password's argon2id hash: started here, before
 * the server's modules load, it is made on another thread meanwhile instead
 * of after the migrations (docs/performance.md, "Start-up"). Anywhere else
 * (an existing file, PostgreSQL, where only a query can tell) nothing is
 * started and bootstrap hashes when it finds no admin, as before.
 */
export function firstStartAdmin(config: Pick<Config, "databaseUrl" | "dataDir" | "adminPassword">): AdminPassword | undefined {
  if (config.databaseUrl || existsSync(databasePath(config.dataDir))) return undefined;
  return hashAdminPassword(config.adminPassword);
}
