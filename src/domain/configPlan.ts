import { AppError } from "../contracts/errors";
import {
  entriesOf,
  filePath,
  KEY_FIELD,
  REFERENCES,
  RELAY_KINDS,
  secretPaths,
  setAt,
  SINGULAR,
  storedConfig,
  valueAt,
  type ConfigChange,
  type FieldChange,
  type RelayFile,
  type RelayKind,
} from "../contracts/relayFile";
import { canonical, readConfigState, type ConfigState } from "./configState";
import type { Deps, Scope } from "./deps";

/**
 * What applying a relay file would change (docs/config-as-code.md): a create
 * for each entry the environment lacks, an update with the fields that differ
 * for each it has, and, only with `prune`, a delete for each managed
 * resource the file no longer names. A field the file leaves out is not
 * managed: created with the API's default, left as it is on update.
 * Secrets are compared in the clear here and never shown.
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
  /** The resource as it is (updates). */
  before?: Record<string, unknown>;
  /** The fields that differ (updates). */
  changed?: string[];
}

export interface Plan {
  changes: ConfigChange[];
  steps: PlanStep[];
  state: ConfigState;
}

/** Fields given as a JSON object or its JSON text: compared as objects. */
const JSON_FIELDS = new Set(["verification_config", "source_config", "json_schema", "schema"]);
const IP_FIELDS = new Set(["ip_allowlist", "ip_denylist"]);
/** What a secret reads as where a plan shows the object holding it. */
const HIDDEN = "********";

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

function normalizedEntry(kind: RelayKind, raw: Record<string, unknown>): Record<string, unknown> {
  const entry = Object.fromEntries(Object.entries(raw).map(([f, v]) => [f, normalized(f, v)]));
  if (kind === "notification_channels") entry.config = storedConfig(kind, entry);
  if (kind === "alert_rules" && (entry.rule_config !== undefined || entry.rule_type !== undefined)) entry.rule_config = storedConfig(kind, entry);
  return entry;
}

export async function planConfig(deps: Deps, scope: Scope, file: RelayFile, opts: { prune?: boolean } = {}): Promise<Plan> {
  const state = await readConfigState(deps, scope);
  checkReferences(file, state, opts.prune === true);
  const changes: ConfigChange[] = [];
  const steps: PlanStep[] = [];
  const problems: { field: string; message: string }[] = [];
  const add = (step: PlanStep, fields: FieldChange[]) => {
    steps.push(step);
    changes.push({ action: step.action, kind: SINGULAR[step.kind], name: step.key, fields });
  };

  for (const kind of RELAY_KINDS) {
    const existing = new Map(state[kind].map((s) => [s.key, s]));
    entriesOf(file, kind).forEach((raw, i) => {
      const key = String(raw[KEY_FIELD[kind]]);
      const entry = normalizedEntry(kind, raw);
      const path = [kind, i];
      const current = existing.get(key);
      if (!current) return add({ action: "create", kind, key, path, entry }, []);
      if (kind === "notification_channels" && entry.channel_type !== current.entry.channel_type) {
        problems.push({ field: filePath([...path, "channel_type"]), message: `cannot change from ${String(current.entry.channel_type)} to ${String(entry.channel_type)}: give the channel a new name` });
        return;
      }
      const fields = changedFields(kind, entry, current.entry);
      if (fields.length > 0) add({ action: "update", kind, key, path, id: current.id, entry, before: current.entry, changed: fields.map((f) => f.field) }, fields);
    });
  }
  if (problems.length > 0) throw new AppError("validation_error", "Invalid relay file", problems);
  if (opts.prune) {
    for (const kind of [...RELAY_KINDS].reverse()) {
      const named = new Set(entriesOf(file, kind).map((e) => String(e[KEY_FIELD[kind]])));
      for (const s of state[kind]) if (!named.has(s.key)) add({ action: "delete", kind, key: s.key, path: [], id: s.id }, []);
    }
  }
  return { changes, steps, state };
}

/** The fields that differ; a secret's value is never shown, nor a secret inside an object (headers, auth_config, a channel's config). */
function changedFields(kind: RelayKind, wanted: Record<string, unknown>, current: Record<string, unknown>): FieldChange[] {
  const secrets = [...secretPaths(kind, wanted), ...secretPaths(kind, current)];
  const out: FieldChange[] = [];
  for (const field of Object.keys(wanted).sort()) {
    const after = wanted[field];
    if (after === undefined) continue;
    const before = current[field] ?? null;
    if (canonical(after) === canonical(before)) continue;
    const inside = secrets.filter((p) => p[0] === field);
    if (inside.length === 0) {
      out.push({ field, before, after });
      continue;
    }
    if (inside.some((p) => p.length === 1)) {
      out.push({ field, secret: true });
      continue;
    }
    const [b, a] = [hidden(before, inside), hidden(after, inside)];
    out.push(canonical(a) === canonical(b) ? { field, secret: true } : { field, before: b, after: a });
  }
  return out;
}

function hidden(value: unknown, paths: string[][]): unknown {
  if (value === null || typeof value !== "object") return value;
  const copy = structuredClone(value) as Record<string, unknown>;
  for (const p of paths) if (valueAt(copy, p.slice(1)) != null) setAt(copy, p.slice(1), HIDDEN);
  return copy;
}

/**
 * The names an entry refers to must be in the file, or in the environment
 * and not about to be pruned. Every unknown name is a problem at its place
 * in the file, found before anything changes.
 */
function checkReferences(file: RelayFile, state: ConfigState, prune: boolean) {
  const known = {
    sources: new Set(file.sources.map((s) => s.slug)),
    destinations: new Set(file.destinations.map((d) => d.name)),
    notification_channels: new Set(file.notification_channels.map((c) => c.name)),
  };
  // A topic publishes onto a source of its own, `topic-<slug>` (src/domain/topics.ts): a topic the file creates makes that name.
  for (const t of file.topics) known.sources.add(`topic-${t.slug}`.slice(0, 100));
  const managedSources = new Set(state.sources.map((s) => s.key));
  // Sources a file does not manage (a topic's) are never pruned: an entry may always name them.
  for (const slug of state.sourceIds.keys()) if (!prune || !managedSources.has(slug)) known.sources.add(slug);
  if (!prune) {
    for (const d of state.destinations) known.destinations.add(d.key);
    for (const c of state.notification_channels) known.notification_channels.add(c.key);
  }
  const problems: { field: string; message: string }[] = [];
  for (const kind of RELAY_KINDS) {
    for (const ref of REFERENCES[kind] ?? []) {
      entriesOf(file, kind).forEach((entry, i) => {
        const value = entry[ref.field];
        const names = ref.many ? ((value as string[] | undefined) ?? []) : value === undefined || value === null ? [] : [value as string];
        names.forEach((name, j) => {
          if (known[ref.to].has(name)) return;
          const pruned = prune && state[ref.to].some((s) => s.key === name);
          problems.push({
            field: filePath(ref.many ? [kind, i, ref.field, j] : [kind, i, ref.field]),
            message: `unknown ${SINGULAR[ref.to].replace("_", " ")} "${name}"${pruned ? " (the file no longer names it, and --prune would delete it)" : ""}`,
          });
        });
      });
    }
  }
  if (problems.length > 0) throw new AppError("validation_error", "Invalid relay file", problems);
}
