import { and, eq, type AnyColumn, type SQL } from "drizzle-orm";
import { notFound } from "../contracts/errors";
import type { Scope } from "./deps";

/**
 * Where a new resource lives. org_id / env_id in a create body may only name
 * the caller's own scope: data is bound to it (docs/decisions.md D1), so any other
 * value is answered as if that environment did not exist.
 */
export function createScope(scope: Scope, input: { org_id?: string; env_id?: string }): { orgId: string; envId: string } {
  if ((input.org_id !== undefined && input.org_id !== scope.orgId) || (input.env_id !== undefined && input.env_id !== scope.envId)) {
    throw notFound("Environment");
  }
  return { orgId: scope.orgId, envId: scope.envId };
}

/**
 * The one tenant condition: a row of `table` belongs to the caller's
 * organization and environment (docs/decisions.md D1). Every scoped query goes
 * through it, with any further conditions.
 */
export function inScope(table: { orgId: AnyColumn; envId: AnyColumn }, scope: Pick<Scope, "orgId" | "envId">, ...more: (SQL | undefined)[]): SQL {
  return and(eq(table.orgId, scope.orgId), eq(table.envId, scope.envId), ...more)!;
}
