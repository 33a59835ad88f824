import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { and, gte, isNull } from "drizzle-orm";
import { AppError, validation } from "../contracts/errors";
import { iso } from "../core/clock";
import { NODE_TIMEOUT_MS } from "../core/node";
import { openStore } from "../db/openStore";
import { nodes } from "../db/schema";
import { databasePath } from "../db/sqlite/open";
import { redactedUrl, type Store } from "../db/store";
import { dataDirInUse } from "./backups";

/**
 * Where a store is, as an operator names it on the command line of
 * `migrate` and `backup restore`: a `postgres://` URL, or a data dir.
 */
export interface StoreLocation {
  /** What messages call it (a URL without its password, or the data dir's path). */
  label: string;
  dataDir: string;
  databaseUrl?: string;
}

export function parseStoreLocation(spec: string, field: string): StoreLocation {
  const trimmed = spec.trim();
  if (trimmed === "") throw validation(`${field}: name a data dir or a postgres:// URL`, [{ field, message: "empty" }]);
  if (/^postgres(ql)?:\/\//i.test(trimmed)) {
    try {
      new URL(trimmed);
    } catch {
      throw validation(`${field}: not a valid URL`, [{ field, message: "invalid URL" }]);
    }
    return { label: redactedUrl(trimmed), dataDir: process.cwd(), databaseUrl: trimmed };
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed)) throw validation(`${field}: only postgres:// URLs or data dir paths are stores`, [{ field, message: "unsupported URL scheme" }]);
  const dataDir = resolve(trimmed);
  return { label: dataDir, dataDir };
}

/** Whether the location is a data dir that holds a database file already. */
export function hasDatabaseFile(loc: StoreLocation): boolean {
  return loc.databaseUrl === undefined && existsSync(databasePath(loc.dataDir));
}

/** A data dir some process has open (a serve, or a local-mode command) is refused before it is opened here. */
export function refuseOpenDataDir(loc: StoreLocation, role: string): void {
  if (loc.databaseUrl === undefined && dataDirInUse(loc.dataDir)) {
    throw new AppError("conflict", `${role} ${loc.label} is open in another hookrelay process (a running server, or a command in local mode): stop it first`);
  }
}

/** Opens (and migrates to this binary's schema) the store at a location. */
export async function openLocation(loc: StoreLocation): Promise<Store> {
  return openStore({ dataDir: loc.dataDir, databaseUrl: loc.databaseUrl });
}

/**
 * Refuses a store some `serve` is running on: a node whose heartbeat is
 * fresh and that has not stopped (src/cluster/nodes.ts). A node killed
 * without a clean stop counts as running until its heartbeat is
 * NODE_TIMEOUT_MS old: waiting that long is the cure.
 */
export async function refuseServedStore(store: Store, loc: StoreLocation, role: string, now: Date): Promise<void> {
  const live = await store.db
    .select({ id: nodes.id, address: nodes.address, lastHeartbeatAt: nodes.lastHeartbeatAt })
    .from(nodes)
    .where(and(gte(nodes.lastHeartbeatAt, iso(new Date(now.getTime() - NODE_TIMEOUT_MS))), isNull(nodes.stoppedAt)));
  if (live.length > 0) {
    const who = live.map((n) => `${n.address} (heartbeat ${n.lastHeartbeatAt})`).join(", ");
    throw new AppError("conflict", `${role} ${loc.label} is being served by ${live.length === 1 ? "a hookrelay node" : `${live.length} hookrelay nodes`}: ${who}; stop every serve on it first (a node killed without a clean stop counts as running for ${NODE_TIMEOUT_MS / 1000} s)`);
  }
}
