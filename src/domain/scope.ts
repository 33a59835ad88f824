import { notFound } from "../contracts/errors";
import type { Scope } from "./deps";

/**
 * Where a new resource lives. org_id / env_id in a create body may only name
 * the caller's own scope: data is bound to it (contract §2), so any other
 * value is answered as if that environment did not exist.
 */
export function createScope(scope: Scope, input: { org_id?: string; env_id?: string }): { orgId: string; envId: string } {
  if ((input.org_id !== undefined && input.org_id !== scope.orgId) || (input.env_id !== undefined && input.env_id !== scope.envId)) {
    throw notFound("Environment");
  }
  return { orgId: scope.orgId, envId: scope.envId };
}
