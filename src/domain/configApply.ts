import { AppError } from "../contracts/errors";
import { fileProblems, filePath, relayFile, resolveSecretRefs, SINGULAR, type ApplyConfigResult, type RelayFile } from "../contracts/relayFile";
import { transaction } from "../db/transaction";
import { planConfig, type PlanStep } from "./configPlan";
import type { ConfigSection } from "./configSection";
import { carryOut, type Ids } from "./configSteps";
import type { Deps, Scope } from "./deps";

/**
 * Makes the caller's environment match a relay file (docs/config-as-code.md),
 * all or nothing: the plan is made and carried out in one transaction, each
 * change through the resource's own use-case (validated and audited as a
 * request would be, the use-case's transaction a savepoint of this one), so
 * a change that fails part-way rolls back every change before it.
 */
export async function applyConfig(deps: Deps, scope: Scope, raw: unknown, opts: { dryRun?: boolean; prune?: boolean } = {}, sections: ConfigSection[] = []): Promise<ApplyConfigResult> {
  const file = parseRelayFile(raw);
  const prune = opts.prune === true;
  const planAll = async () => {
    const plan = await planConfig(deps, scope, file, { prune });
    const parts = [];
    for (const section of sections) parts.push(await section.plan(deps, scope, file[section.key], { prune }));
    return { plan, parts, changes: [...plan.changes, ...parts.flatMap((p) => p.changes)] };
  };
  if (opts.dryRun) return { changes: (await planAll()).changes, applied: false };
  return transaction(deps.db, async () => {
    const { plan, parts, changes } = await planAll();
    if (changes.length === 0) return { changes: [], applied: false };
    const ids: Ids = {
      sources: new Map(plan.state.sourceIds),
      destinations: new Map(plan.state.destinations.map((d) => [d.key, d.id])),
      notification_channels: new Map(plan.state.notification_channels.map((c) => [c.key, c.id])),
    };
    for (const step of plan.steps) {
      try {
        await carryOut(deps, scope, step, ids);
      } catch (err) {
        throw inFile(err, step);
      }
    }
    for (const part of parts) await part.carryOut();
    return { changes, applied: true };
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

/** A use-case's error, its fields named by their place in the file (`destinations[1].auth_config.password`). */
function inFile(err: unknown, step: PlanStep): unknown {
  const where = step.path.length > 0 ? filePath(step.path) : `${step.kind} "${step.key}"`;
  return errorAt(err, where, `${step.action} ${SINGULAR[step.kind].replace("_", " ")} "${step.key}"`);
}

/** An AppError of the step at `where` in the file: its message says which, its fields are named from there. */
export function errorAt(err: unknown, where: string, what: string): unknown {
  if (!(err instanceof AppError)) return err;
  const details = Array.isArray(err.details)
    ? err.details.map((d: { field?: string }) => (typeof d?.field === "string" ? { ...d, field: `${where}.${d.field.replace(/^body\.?/, "")}`.replace(/\.$/, "") } : d))
    : err.details;
  return new AppError(err.code, `${where} (${what}): ${err.message}`, details);
}
