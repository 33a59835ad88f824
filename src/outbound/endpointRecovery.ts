import type { RecoverInput, RecoverStarted } from "../contracts/recover";
import type { Deps, Scope } from "../domain/deps";
import { startRecovery } from "../domain/recovery";
import { findEndpoint } from "./endpoints";

/** Recovery by time for an application endpoint (docs/outbound.md): the messages whose latest attempt there failed in the window. Operators only: the portal has no route to it. */
export async function recoverEndpoint(deps: Deps, scope: Scope, appId: string, endpointId: string, input: RecoverInput): Promise<RecoverStarted> {
  const { destination, endpoint } = await findEndpoint(deps, scope, appId, endpointId);
  return startRecovery(deps, scope, { destination, resourceType: "endpoint", resourceId: endpoint.id }, input);
}
