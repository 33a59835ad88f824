import { AppError } from "../contracts/errors";
import type { StateEntry } from "./configStateParts";
import { RELAY_KINDS, type RelayKind } from "../contracts/relayFile";
import { readAlertState } from "./configStateAlerts";
import { readCatalogState } from "./configStateCatalog";
import { readDeliveryState } from "./configStateDelivery";
import type { Deps, Scope } from "./deps";

/**
 * An environment's configuration as relay-file entries (docs/config-as-code.md):
 * what export writes and what a plan compares a file with. Secrets are in
 * the clear here, opened inside the domain; they leave it only as
 * references, or in full when an admin asks for them. One reader per area
 * (configStateDelivery.ts, configStateAlerts.ts, configStateCatalog.ts).
 */

export type { Names, StateEntry } from "./configStateParts";
export { canonical, sortKeys } from "./configStateParts";

export type ConfigState = Record<RelayKind, StateEntry[]> & {
  /** Every source of the environment by slug, topic and outbound ones too: what an entry may name. */
  sourceIds: Map<string, string>;
};

function uniqueKeys(kind: RelayKind, list: StateEntry[]) {
  const seen = new Set<string>();
  for (const e of list) {
    if (seen.has(e.key)) throw new AppError("conflict", `Two ${kind.replace("_", " ")} are named "${e.key}": a relay file names each once; rename one first`);
    seen.add(e.key);
  }
}

/** The environment's configuration, every kind a relay file holds, secrets opened. */
export async function readConfigState(deps: Deps, scope: Scope): Promise<ConfigState> {
  const delivery = await readDeliveryState(deps, scope);
  const alerts = await readAlertState(deps, scope, delivery.names);
  const catalog = await readCatalogState(deps, scope, delivery.names);
  const state: ConfigState = {
    sources: delivery.sources,
    destinations: delivery.destinations,
    connections: delivery.connections,
    notification_channels: alerts.channels,
    alert_rules: alerts.rules,
    topics: catalog.topics,
    event_types: catalog.eventTypes,
    collections: catalog.collections,
    sourceIds: delivery.sourceIds,
  };
  for (const kind of RELAY_KINDS) uniqueKeys(kind, state[kind]);
  return state;
}

