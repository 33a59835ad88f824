import type { Deps, Scope } from "../domain/deps";
import { listOrderingLines, skipOrderingLine } from "../domain/ordering";
import { findEndpoint } from "./endpoints";

/** An ordered endpoint's lines (docs/delivery.md, "Ordered delivery"): its destination's rows without a connection. */
export async function endpointOrdering(deps: Deps, scope: Scope, appId: string, endpointId: string) {
  const { endpoint } = await findEndpoint(deps, scope, appId, endpointId);
  return { keys: await listOrderingLines(deps.db, { destinationId: endpoint.destinationId }) };
}

export async function skipEndpointKey(deps: Deps, scope: Scope, appId: string, endpointId: string, key: string | null) {
  const { endpoint } = await findEndpoint(deps, scope, appId, endpointId);
  return skipOrderingLine(deps, scope, { destinationId: endpoint.destinationId }, { type: "endpoint", id: endpoint.id }, key);
}
