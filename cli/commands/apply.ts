import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { AppError, type ErrorBody } from "../../src/contracts/errors";
import { fileProblems, relayFile, resolveSecretRefs, type ApplyConfigResult, type RelayFile } from "../../src/contracts/relayFile";
import { act, verb, type Opts } from "../command";
import type { Context } from "../context";
import { CliError, EXIT } from "../errors";
import { planText } from "../planOutput";
import { readSecretRef } from "../secretRefs";

/** `--dry-run --exit-code` with changes pending: CI can tell "in sync" (0) from "would change" (3) and "failed" (1, 2, 4). */
export const EXIT_CHANGES_PENDING = 3;

/** `hookrelay apply -f relay.yaml`: make the environment match a relay file (docs/config-as-code.md). */
export function registerApply(program: Command) {
  const cmd = verb(program, "apply", "Make the environment match a relay file: print the plan (create, update, delete only with --prune), then apply it all or nothing", [
    "hookrelay apply -f relay.yaml --dry-run",
    "hookrelay apply -f relay.yaml",
    "hookrelay apply -f relay.yaml --prune",
    "# in CI: exit 3 when the environment differs from the file",
    "hookrelay --env production apply -f relay.yaml --dry-run --exit-code",
  ])
    .requiredOption("-f, --file <file>", "the relay file, YAML or JSON; - reads standard input")
    .option("--dry-run", "print the plan and change nothing")
    .option("--prune", "delete what the file does not name (of the kinds a relay file holds)")
    .option("--exit-code", "with --dry-run: exit 3 when changes are pending, 0 when none");
  act(cmd, (ctx, o) => runApply(ctx, o));
}

async function runApply(ctx: Context, o: Opts) {
  const file = await readRelayFile(o.file);
  const prune = o.prune === true;
  const send = (dryRun: boolean) =>
    ctx
      .run<ApplyConfigResult>({
        method: "POST",
        path: "/config/apply",
        body: { document: file, dry_run: dryRun, prune },
        expect: "changes",
        local: async (deps, scope) => {
          const [{ applyConfig }, { applicationsSection }] = await Promise.all([import("../../src/domain/configApply"), import("../../src/outbound/configApplications")]);
          return applyConfig(deps, scope, file, { dryRun, prune }, [applicationsSection]);
        },
      })
      .catch((err: unknown) => {
        throw fileError(err);
      });

  // Without --prune what the file does not name is left alone, so "matches" would overstate it.
  const noChanges = prune ? "No changes: the environment matches the file.\n" : "No changes: everything the file names matches (what it does not name is left alone without --prune).\n";
  const plan = await send(true);
  const pending = plan.changes.length > 0;
  if (!pending || o.dryRun) {
    if (ctx.json) ctx.out.printJson(plan);
    else process.stdout.write(pending ? planText(plan.changes, ctx.out.c) : noChanges);
    if (pending && o.dryRun && o.exitCode) process.exitCode = EXIT_CHANGES_PENDING;
    return;
  }
  if (!ctx.json) process.stdout.write(planText(plan.changes, ctx.out.c));
  const result = await send(false);
  if (ctx.json) return ctx.out.printJson(result);
  process.stdout.write(result.applied ? `Applied ${result.changes.length} change${result.changes.length === 1 ? "" : "s"} to ${ctx.where}.\n` : noChanges);
}

/** The file read, parsed and checked against the contract, its secret references resolved here; any problem is a usage error (exit 2) before anything is sent. */
async function readRelayFile(path: string): Promise<RelayFile> {
  let text: string;
  try {
    text = readFileSync(path === "-" ? 0 : path, "utf8");
  } catch (err) {
    throw new CliError(`-f ${path}: cannot read the file (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, EXIT.usage, "usage");
  }
  const { parseRelayText } = await import("../../src/domain/configText");
  let raw: unknown;
  try {
    raw = parseRelayText(text);
  } catch (err) {
    throw fileError(err);
  }
  const { file, problems } = resolveSecretRefs(raw, (ref) => readSecretRef(ref));
  if (problems.length > 0) throw fileError(new AppError("validation_error", "Unresolved secret references: nothing was changed", problems));
  const parsed = relayFile.safeParse(file);
  if (!parsed.success) throw fileError(new AppError("validation_error", "Invalid relay file", fileProblems(parsed.error)));
  return parsed.data;
}

/** A problem with the file, each bad field on its own line by its place in the file; exit 2, as for any bad input the command was given. */
function fileError(err: unknown): unknown {
  let body: ErrorBody | undefined;
  if (err instanceof AppError) body = err.toBody();
  else if (err instanceof CliError && err.code === "validation_error") body = err.body as ErrorBody;
  if (!body) return err;
  const details = Array.isArray(body.error.details) ? (body.error.details as { field?: string; message?: string }[]) : [];
  const lines = details.slice(0, 50).map((d) => `  ${d.field ? `${d.field}: ` : ""}${d.message ?? ""}`);
  if (details.length > 50) lines.push(`  … and ${details.length - 50} more`);
  return new CliError([body.error.message, ...lines].join("\n"), EXIT.usage, body.error.code, body);
}
