import { z } from "zod";
import { applicationSecretPaths, CHANGE_KINDS, ENTRY_SCHEMAS, KEY_FIELD, relayApplication, RELAY_KINDS, secretPaths, setAt, SINGULAR, valueAt, type RelayKind } from "./relayEntries";

export * from "./relayEntries";

/**
 * The relay file (docs/config-as-code.md): one environment's configuration as
 * one document, what `hookrelay export` writes and `hookrelay apply` reads:
 * `version: 1`, then a list per kind of resource (src/contracts/relayEntries.ts).
 * docs/hookrelay.schema.json is generated from this schema.
 */

/** A bound on each list: a file is read whole, and each entry costs a few statements. */
export const MAX_ENTRIES = 1000;

const list = <T extends z.ZodType>(entry: T) => z.array(entry).max(MAX_ENTRIES).default([]);

export const relayFile = z
  .object({
    version: z.literal(1).describe("the format's version; this is 1"),
    sources: list(ENTRY_SCHEMAS.sources),
    destinations: list(ENTRY_SCHEMAS.destinations),
    notification_channels: list(ENTRY_SCHEMAS.notification_channels),
    topics: list(ENTRY_SCHEMAS.topics),
    event_types: list(ENTRY_SCHEMAS.event_types),
    connections: list(ENTRY_SCHEMAS.connections),
    alert_rules: list(ENTRY_SCHEMAS.alert_rules),
    collections: list(ENTRY_SCHEMAS.collections),
    applications: list(relayApplication),
  })
  .strict()
  .superRefine((file, ctx) => {
    for (const kind of RELAY_KINDS) {
      const seen = new Set<string>();
      const key = KEY_FIELD[kind];
      (file[kind] as Record<string, unknown>[]).forEach((entry, i) => {
        const name = String(entry[key]);
        if (seen.has(name)) ctx.addIssue({ code: "custom", path: [kind, i, key], message: `duplicate ${key} "${name}": each ${SINGULAR[kind].replace("_", " ")} is named once` });
        seen.add(name);
      });
    }
    const apps = new Set<string>();
    file.applications.forEach((app, i) => {
      if (apps.has(app.name)) ctx.addIssue({ code: "custom", path: ["applications", i, "name"], message: `duplicate name "${app.name}": each application is named once` });
      apps.add(app.name);
      const urls = new Set<string>();
      (app.endpoints ?? []).forEach((e, j) => {
        if (urls.has(e.url)) ctx.addIssue({ code: "custom", path: ["applications", i, "endpoints", j, "url"], message: `duplicate url "${e.url}": each endpoint of an application is named once` });
        urls.add(e.url);
      });
    });
  })
  .meta({ title: "hookrelay relay file", description: "One environment's configuration: `hookrelay export` writes it, `hookrelay apply -f` makes the environment match it (docs/config-as-code.md)" });

export type RelayFile = z.output<typeof relayFile>;

/** A file's entries of one kind, as plain records. */
export const entriesOf = (file: RelayFile, kind: RelayKind) => file[kind] as Record<string, unknown>[];

/** A place in the file as a reader writes it: `connections[2].destination`. */
export function filePath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out === "" ? String(part) : `.${String(part)}`;
  }
  return out || "(file)";
}

/** Zod's issues as field problems named by their place in the file. */
export function fileProblems(error: z.ZodError): { field: string; message: string }[] {
  return error.issues.map((i) => ({ field: filePath(i.path), message: i.message }));
}

// ---------------------------------------------------------------- secrets

/** `${NAME}`: the value of an environment variable where apply runs. */
export const ENV_REF = /^\$\{([A-Za-z_][A-Za-z0-9_]{0,199})\}$/;
/** `file:/path`: the content of a file (a trailing newline dropped), e.g. a mounted secret. */
export const FILE_REF = /^file:(\/.{1,4095})$/;

export type SecretRef = { kind: "env"; name: string } | { kind: "file"; path: string };

export function secretRefOf(value: unknown): SecretRef | null {
  if (typeof value !== "string") return null;
  const env = ENV_REF.exec(value);
  if (env) return { kind: "env", name: env[1]! };
  const file = FILE_REF.exec(value);
  return file ? { kind: "file", path: file[1]! } : null;
}

/**
 * Every secret reference of a file, as read and before it is checked against
 * the schema (a `${NAME}` is no valid signing key), replaced by what `read`
 * gives for it. A reference `read` cannot resolve is a problem named by its
 * place in the file; the caller changes nothing when there is any. `read` is
 * the caller's: the CLI reads its environment and files, the server none.
 */
export function resolveSecretRefs(raw: unknown, read: (ref: SecretRef) => string | undefined): { file: unknown; problems: { field: string; message: string }[] } {
  const out = structuredClone(raw);
  const problems: { field: string; message: string }[] = [];
  for (const path of secretPathsOf(out)) {
    const ref = secretRefOf(valueAt(out, path.map(String)));
    if (!ref) continue;
    const value = read(ref);
    if (value === undefined || value === "") {
      const what = ref.kind === "env" ? `environment variable ${ref.name} is not set` : `file ${ref.path} cannot be read (or is not a regular file of at most 64 KiB)`;
      problems.push({ field: filePath(path), message: `secret reference: ${what}` });
    } else setAt(out as Record<string, unknown>, path.map(String), value);
  }
  return { file: out, problems };
}

/** Every secret of a file as read (before the schema), as paths from its root. */
export function secretPathsOf(raw: unknown): (string | number)[][] {
  const out: (string | number)[][] = [];
  if (raw === null || typeof raw !== "object") return out;
  const root = raw as Record<string, unknown>;
  for (const kind of RELAY_KINDS) {
    const list = root[kind];
    if (!Array.isArray(list)) continue;
    list.forEach((entry: unknown, i: number) => {
      if (entry === null || typeof entry !== "object" || Array.isArray(entry)) return;
      for (const path of secretPaths(kind, entry as Record<string, unknown>)) out.push([kind, i, ...path]);
    });
  }
  return [...out, ...applicationSecretPaths(root.applications)];
}

// ---------------------------------------------------------------- apply

export const applyConfigInput = z.object({
  document: z.unknown().describe("the relay file, its secret references already resolved"),
  dry_run: z.boolean().default(false).describe("plan only: change nothing"),
  prune: z.boolean().default(false).describe("delete what the file does not name; otherwise nothing is deleted"),
});
export type ApplyConfigInput = z.input<typeof applyConfigInput>;

export const fieldChange = z.object({
  field: z.string(),
  before: z.unknown().optional(),
  after: z.unknown().optional(),
  secret: z.boolean().optional().describe("the value is a secret: neither side is shown"),
});
export type FieldChange = z.infer<typeof fieldChange>;

export const configChange = z.object({
  action: z.enum(["create", "update", "delete"]),
  kind: z.enum(CHANGE_KINDS),
  name: z.string().describe("the slug or name the file keys it by"),
  fields: z.array(fieldChange).describe("update: the fields that change"),
});
export type ConfigChange = z.infer<typeof configChange>;

export const applyConfigResult = z.object({
  changes: z.array(configChange),
  applied: z.boolean().describe("false for a dry run, or when nothing differed"),
});
export type ApplyConfigResult = z.infer<typeof applyConfigResult>;

export const exportConfigQuery = z.object({
  format: z.enum(["yaml", "json"]).default("yaml"),
  include_secrets: z
    .enum(["true", "false", "1", "0"])
    .optional()
    .transform((v) => v === "true" || v === "1")
    .describe("write secrets in full instead of ${NAME} references; needs the admin role and an API key of scope *"),
});
