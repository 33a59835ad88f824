import { AppError } from "../contracts/errors";
import { filePath, KEY_FIELD, RELAY_KINDS, secretPaths, type ConfigChange, type FieldChange, type RelayFile, type RelayKind } from "../contracts/relayFile";
import { canonical, readConfigState, type ConfigState } from "./configState";
import type { Deps, Scope } from "./deps";

/**
 * What applying a relay file would change (docs/config-as-code.md): a create
 * for each entry the environment lacks, an update with the fields that differ
 * for each it has, and, only with `prune`, a delete for each managed
 * resource the file no longer names. A field the file leaves out is not
 * managed: created with the API's default, left as it is on update.
 * Secrets are compared in the clear here and never shown: `secret: true`.
 */

export interface PlanStep {
  action: ConfigChange["action"];
  kind: RelayKind;
  key: string;
  /** Where the entry is in the file (creates and updates). */
  path: (string | number)[];
  /** The resource's id (updates and deletes). */
  id?: string;
  /** The file's entry (creates and updates). */
  entry?: Record<string, unknown>;
}

export interface Plan {
  changes: ConfigChange[];
  steps: PlanStep[];
  state: ConfigState;
}

const SINGULAR: Record<RelayKind, ConfigChange["kind"]> = { sources: "source", destinations: "destination", connections: "connection" };

/** Fields given as a JSON object or its JSON text: compared as objects. */
const JSON_FIELDS = new Set(["verification_config", "source_config", "json_schema"]);
const IP_FIELDS = new Set(["ip_allowlist", "ip_denylist"]);

/** A file's value as the domain would store it, so that what is equal compares equal. */
function normalized(field: string, value: unknown): unknown {
  if (value === undefined || value === null) return value;
  if (JSON_FIELDS.has(field) && typeof value === "string") {
    try {
      return JSON.parse(value);
    } catch {
      return value;
    }
  }
  if (IP_FIELDS.has(field) && Array.isArray(value)) return value.map((e) => String(e).trim()).filter((e) => e !== "");
  if (field === "transform_expression" && typeof value === "string" && value.trim() === "") return null;
  return value;
}

export async function planConfig(deps: Deps, scope: Scope, file: RelayFile, opts: { prune?: boolean } = {}): Promise<Plan> {
  const state = await readConfigState(deps, scope);
  checkReferences(file, state, opts.prune === true);
  const changes: ConfigChange[] = [];
  const steps: PlanStep[] = [];
  const add = (step: PlanStep, fields: FieldChange[]) => {
    steps.push(step);
    changes.push({ action: step.action, kind: SINGULAR[step.kind], name: step.key, fields });
  };

  for (const kind of RELAY_KINDS) {
    const existing = new Map(state[kind].map((s) => [s.key, s]));
    file[kind].forEach((raw: Record<string, unknown>, i: number) => {
      const key = String(raw[KEY_FIELD[kind]]);
      const entry = Object.fromEntries(Object.entries(raw).map(([f, v]) => [f, normalized(f, v)]));
      const path = [kind, i];
      const current = existing.get(key);
      if (!current) return add({ action: "create", kind, key, path, entry }, []);
      const fields = changedFields(kind, entry, current.entry);
      if (fields.length > 0) add({ action: "update", kind, key, path, id: current.id, entry }, fields);
    });
  }
  if (opts.prune) {
    for (const kind of [...RELAY_KINDS].reverse()) {
      const named = new Set(file[kind].map((e: Record<string, unknown>) => String(e[KEY_FIELD[kind]])));
      for (const s of state[kind]) if (!named.has(s.key)) add({ action: "delete", kind, key: s.key, path: [], id: s.id }, []);
    }
  }
  return { changes, steps, state };
}

function changedFields(kind: RelayKind, wanted: Record<string, unknown>, current: Record<string, unknown>): FieldChange[] {
  const secretFields = new Set([...secretPaths(kind, wanted), ...secretPaths(kind, current)].map((p) => p[0]!));
  const out: FieldChange[] = [];
  for (const field of Object.keys(wanted).sort()) {
    const after = wanted[field];
    if (after === undefined) continue;
    const before = current[field] ?? null;
    if (canonical(after) === canonical(before)) continue;
    out.push(secretFields.has(field) ? { field, secret: true } : { field, before, after });
  }
  return out;
}

/**
 * A connection names its source and destination: each must be in the file,
 * or in the environment and not about to be pruned. Every unknown name is a
 * problem at its place in the file, found before anything changes.
 */
function checkReferences(file: RelayFile, state: ConfigState, prune: boolean) {
  const sourceSlugs = new Set(file.sources.map((s) => s.slug));
  const destinationNames = new Set(file.destinations.map((d) => d.name));
  if (!prune) {
    for (const slug of state.sourceIds.keys()) sourceSlugs.add(slug);
    for (const d of state.destinations) destinationNames.add(d.key);
  } else {
    // Sources a file does not manage (a topic's) are never pruned: a connection may read from them.
    const managed = new Set(state.sources.map((s) => s.key));
    for (const slug of state.sourceIds.keys()) if (!managed.has(slug)) sourceSlugs.add(slug);
  }
  const problems: { field: string; message: string }[] = [];
  file.connections.forEach((c, i) => {
    if (!sourceSlugs.has(c.source)) problems.push({ field: filePath(["connections", i, "source"]), message: `unknown source "${c.source}"${prune && state.sourceIds.has(c.source) ? " (the file no longer names it, and --prune would delete it)" : ""}` });
    if (!destinationNames.has(c.destination)) problems.push({ field: filePath(["connections", i, "destination"]), message: `unknown destination "${c.destination}"` });
  });
  if (problems.length > 0) throw new AppError("validation_error", "Invalid relay file", problems);
}
