import { createConnectionInput, updateConnectionInput } from "../contracts/connections";
import { createDestinationInput, updateDestinationInput } from "../contracts/destinations";
import { AppError, parseOrThrow } from "../contracts/errors";
import { fileProblems, filePath, relayFile, resolveSecretRefs, type ApplyConfigResult, type RelayFile } from "../contracts/relayFile";
import { transaction } from "../db/transaction";
import { createConnection, deleteConnection, updateConnection } from "./connections";
import { planConfig, type PlanStep } from "./configPlan";
import type { Deps, Scope } from "./deps";
import { createDestination, deleteDestination, updateDestination } from "./destinations";
import type { CreateSourceInput } from "../contracts/sources";
import { createSource, deleteSource, updateSource } from "./sources";

/**
 * Makes the caller's environment match a relay file (docs/config-as-code.md),
 * all or nothing: the plan is made and carried out in one transaction, each
 * change through the resource's own use-case (validated and audited as a
 * request would be, the use-case's transaction a savepoint of this one), so
 * a change that fails part-way rolls back every change before it.
 */
export async function applyConfig(deps: Deps, scope: Scope, raw: unknown, opts: { dryRun?: boolean; prune?: boolean } = {}): Promise<ApplyConfigResult> {
  const file = parseRelayFile(raw);
  if (opts.dryRun) {
    const plan = await planConfig(deps, scope, file, opts);
    return { changes: plan.changes, applied: false };
  }
  return transaction(deps.db, async () => {
    const plan = await planConfig(deps, scope, file, opts);
    if (plan.steps.length === 0) return { changes: [], applied: false };
    const ids = {
      sources: new Map(plan.state.sourceIds),
      destinations: new Map(plan.state.destinations.map((d) => [d.key, d.id])),
    };
    for (const step of plan.steps) {
      try {
        await carryOut(deps, scope, step, ids);
      } catch (err) {
        throw inFile(err, step);
      }
    }
    return { changes: plan.changes, applied: true };
  });
}

/**
 * The file as the contract reads it; a problem anywhere is a validation_error
 * naming each bad field by its place in the file. A secret reference left
 * unresolved is one too: the server never reads the operator's environment
 * (the CLI resolves references before it sends the file).
 */
export function parseRelayFile(raw: unknown): RelayFile {
  // Before the schema: a `${NAME}` left in a signing key would otherwise read as a malformed key.
  const unresolved = resolveSecretRefs(raw, () => undefined).problems;
  if (unresolved.length > 0) {
    throw new AppError(
      "validation_error",
      "Invalid relay file",
      unresolved.map((p) => ({ field: p.field, message: "an unresolved secret reference: `hookrelay apply` resolves ${NAME} and file: references, the API takes values" })),
    );
  }
  const parsed = relayFile.safeParse(raw);
  if (!parsed.success) throw new AppError("validation_error", "Invalid relay file", fileProblems(parsed.error));
  return parsed.data;
}

type Ids = { sources: Map<string, string>; destinations: Map<string, string> };

async function carryOut(deps: Deps, scope: Scope, step: PlanStep, ids: Ids) {
  const entry = step.entry ?? {};
  switch (step.kind) {
    case "sources": {
      if (step.action === "create") ids.sources.set(step.key, (await createSource(deps, scope, entry as CreateSourceInput)).source.id);
      else if (step.action === "update") await updateSource(deps, scope, step.id!, entry);
      else await deleteSource(deps, scope, step.id!);
      return;
    }
    case "destinations": {
      if (step.action === "create") ids.destinations.set(step.key, (await createDestination(deps, scope, parseOrThrow(createDestinationInput, entry))).destination.id);
      else if (step.action === "update") await updateDestination(deps, scope, step.id!, parseOrThrow(updateDestinationInput, entry));
      else await deleteDestination(deps, scope, step.id!);
      return;
    }
    case "connections": {
      if (step.action === "delete") return void (await deleteConnection(deps, scope, step.id!));
      const { source, destination, ...rest } = entry;
      const refs = { source_id: ids.sources.get(String(source)), destination_id: ids.destinations.get(String(destination)) };
      if (step.action === "create") await createConnection(deps, scope, parseOrThrow(createConnectionInput, { ...rest, ...refs }));
      else await updateConnection(deps, scope, step.id!, parseOrThrow(updateConnectionInput, { ...rest, ...refs }));
      return;
    }
  }
}

/** A use-case's error, its fields named by their place in the file (`destinations[1].auth_config.password`). */
function inFile(err: unknown, step: PlanStep): unknown {
  if (!(err instanceof AppError)) return err;
  const where = step.path.length > 0 ? filePath(step.path) : `${step.kind} "${step.key}"`;
  const details = Array.isArray(err.details)
    ? err.details.map((d: { field?: string }) => (typeof d?.field === "string" ? { ...d, field: `${where}.${d.field.replace(/^body\.?/, "")}`.replace(/\.$/, "") } : d))
    : err.details;
  return new AppError(err.code, `${where} (${step.action} ${step.kind.slice(0, -1)} "${step.key}"): ${err.message}`, details);
}
