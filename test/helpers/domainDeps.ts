import { rmSync } from "node:fs";
import { newThisNode } from "../../src/cluster/identity";
import type { Bus, BusMessage } from "../../src/core/bus";
import { systemClock } from "../../src/core/clock";
import { publishAfterCommit } from "../../src/db/committedBus";
import type { Store } from "../../src/db/store";
import { bootstrap, defaultScope } from "../../src/domain/bootstrap";
import type { Deps, DomainSettings, Scope } from "../../src/domain/deps";
import { secretBoxFromKey } from "../../src/domain/secrets";
import { dropStore, openStoreOf, TEST_SECRET_KEY } from "./database";
import { ADMIN, tempDir } from "./server";

/** Real Deps on a real store of the run (SQLite in a fresh data dir, or a fresh PostgreSQL database), with no server: use-cases are called directly. */
export interface DomainHarness {
  deps: Deps;
  /** The bootstrapped org and environment, as local CLI mode acts in it. */
  scope: Scope;
  /** Every bus message published so far, in order. */
  published: BusMessage[];
  close(): Promise<void>;
}

const SETTINGS: DomainSettings = { baseUrl: "http://hookrelay.test", retentionDays: 30, maxBodyBytes: 1024 * 1024, blockPrivateDestinations: false, trustProxy: "" };

export async function openDomain(settings: Partial<DomainSettings> = {}): Promise<DomainHarness> {
  const dataDir = tempDir("hookrelay-domain-");
  const store: Store = await openStoreOf(dataDir);
  const published: BusMessage[] = [];
  const bus: Bus = { publish: (m) => void published.push(m), subscribe: () => () => {} };
  const deps: Deps = {
    db: store.db,
    store,
    clock: systemClock,
    secrets: secretBoxFromKey(TEST_SECRET_KEY),
    // As serve builds it (src/boot/deps.ts): what a use-case publishes inside a transaction goes out at its commit.
    bus: publishAfterCommit(store.db, bus),
    settings: { ...SETTINGS, ...settings },
    node: newThisNode(SETTINGS.baseUrl),
  };
  await bootstrap(store.db, systemClock, ADMIN);
  const env = await defaultScope(store.db);
  if (!env) throw new Error("bootstrap made no environment");
  const scope: Scope = { orgId: env.orgId, envId: env.envId, userId: null, via: "local", scopes: "*", role: "owner" };
  return {
    deps,
    scope,
    published,
    async close() {
      await store.close();
      await dropStore(dataDir);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
