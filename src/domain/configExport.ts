import { AppError } from "../contracts/errors";
import { KEY_FIELD, RELAY_KINDS, secretPaths, secretRefName, setAt, type RelayFile } from "../contracts/relayFile";
import { can } from "../contracts/roles";
import { readConfigState, sortKeys } from "./configState";
import type { ConfigSection } from "./configSection";
import type { Deps, Scope } from "./deps";

/**
 * An environment's configuration as one relay file (docs/config-as-code.md):
 * keys sorted, lists sorted by their key, so two exports of one state are
 * the same bytes. Secrets are written as `${NAME}` references unless
 * `includeSecrets`, which needs the admin role and a key of scope `*`.
 */
export async function exportConfig(deps: Deps, scope: Scope, opts: { includeSecrets?: boolean } = {}, sections: ConfigSection[] = []): Promise<RelayFile> {
  if (!can(scope.role, "readSecrets")) throw new AppError("forbidden", `Exporting the configuration needs the developer role or higher; yours here is ${scope.role}`);
  if (opts.includeSecrets) {
    if (scope.scopes !== "*") throw new AppError("forbidden", "include_secrets reveals every secret: it needs an API key with scope *");
    if (!can(scope.role, "administer")) throw new AppError("forbidden", `include_secrets reveals every secret: it needs the admin role or higher; yours here is ${scope.role}`);
  }
  const state = await readConfigState(deps, scope);
  const doc: Record<string, unknown> = { version: 1 };
  for (const kind of RELAY_KINDS) {
    const key = KEY_FIELD[kind];
    const entries = state[kind]
      .map(({ entry }) => {
        const out = structuredClone(entry);
        if (!opts.includeSecrets) for (const path of secretPaths(kind, out)) setAt(out, path, `\${${secretRefName(kind, String(out[key]), path)}}`);
        return out;
      })
      .sort((a, b) => compareText(String(a[key]), String(b[key])));
    doc[kind] = entries;
  }
  for (const section of sections) doc[section.key] = await section.export(deps, scope, { includeSecrets: opts.includeSecrets === true });
  return sortKeys(doc) as RelayFile;
}

/** Code-point order: the same on every machine and locale. */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
