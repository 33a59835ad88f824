import { z } from "zod";
import { createConnectionInput } from "./connections";
import { createDestinationInput } from "./destinations";
import { createSourceInput } from "./sources";

/**
 * The relay file (docs/config-as-code.md): one environment's configuration as
 * one document, what `hookrelay export` writes and `hookrelay apply` reads.
 * Resources refer to each other by slug or name, never by id. Each entry is
 * the create body of its resource without ids, so the file accepts exactly
 * what the API accepts; unknown keys are refused so a typo is named, not
 * silently ignored. docs/hookrelay.schema.json is generated from this schema.
 */

/** A bound on each list: a file is read whole, and each entry costs a few statements. */
export const MAX_ENTRIES = 1000;

const sourceSlug = createSourceInput.shape.slug.unwrap();

export const relaySource = createSourceInput
  .omit({ org_id: true, env_id: true, type: true, is_ephemeral: true, expires_at: true, slug: true })
  .extend({ slug: sourceSlug })
  .strict()
  .meta({ description: "A source, keyed by slug (its ingest URL keeps the id the environment gave it)" });

export const relayDestination = createDestinationInput
  .omit({ org_id: true, env_id: true })
  .strict()
  .meta({ description: "A destination, keyed by name" });

const refName = z.string().trim().min(1).max(200);

export const relayConnection = createConnectionInput
  .omit({ org_id: true, env_id: true, source_id: true, destination_id: true })
  .extend({
    source: refName.describe("the slug of a source in this file or the environment"),
    destination: refName.describe("the name of a destination in this file or the environment"),
  })
  .strict()
  .meta({ description: "A connection, keyed by name: source (by slug) → destination (by name)" });

export type RelaySource = z.output<typeof relaySource>;
export type RelayDestination = z.output<typeof relayDestination>;
export type RelayConnection = z.output<typeof relayConnection>;

/** The kinds a file holds, in the order they are created (what is referred to comes first). */
export const RELAY_KINDS = ["sources", "destinations", "connections"] as const;
export type RelayKind = (typeof RELAY_KINDS)[number];

/** The field each kind's entries are keyed by. */
export const KEY_FIELD: Record<RelayKind, "slug" | "name"> = { sources: "slug", destinations: "name", connections: "name" };

const list = <T extends z.ZodType>(entry: T) => z.array(entry).max(MAX_ENTRIES).default([]);

export const relayFile = z
  .object({
    version: z.literal(1).describe("the format's version; this is 1"),
    sources: list(relaySource),
    destinations: list(relayDestination),
    connections: list(relayConnection),
  })
  .strict()
  .superRefine((file, ctx) => {
    for (const kind of RELAY_KINDS) {
      const seen = new Set<string>();
      const key = KEY_FIELD[kind];
      file[kind].forEach((entry: Record<string, unknown>, i: number) => {
        const name = String(entry[key]);
        if (seen.has(name)) ctx.addIssue({ code: "custom", path: [kind, i, key], message: `duplicate ${key} "${name}": each ${kind.slice(0, -1)} is named once` });
        seen.add(name);
      });
    }
  })
  .meta({ title: "hookrelay relay file", description: "One environment's configuration: `hookrelay export` writes it, `hookrelay apply -f` makes the environment match it (docs/config-as-code.md)" });

export type RelayFile = z.output<typeof relayFile>;

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

/** Custom header names whose values are credentials: exported as references like the other secrets. */
export const SECRET_HEADER = /auth|token|key|secret|password|passwd|cookie|signature|credential/i;

/** Where an entry's secrets are, as paths inside the entry (only those present). */
export function secretPaths(kind: RelayKind, entry: Record<string, unknown>): string[][] {
  const out: string[][] = [];
  if (kind === "sources") out.push(["verification_secret"]);
  if (kind === "destinations") {
    out.push(["signing_secret"]);
    for (const field of ["password", "token", "api_key"]) out.push(["auth_config", field]);
    const headers = entry.headers;
    if (headers && typeof headers === "object") for (const name of Object.keys(headers)) if (SECRET_HEADER.test(name)) out.push(["headers", name]);
  }
  return out.filter((p) => valueAt(entry, p) !== undefined && valueAt(entry, p) !== null);
}

export function valueAt(entry: unknown, path: readonly string[]): unknown {
  let v: unknown = entry;
  for (const part of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<string, unknown>)[part];
  }
  return v;
}

export function setAt(entry: Record<string, unknown>, path: readonly string[], value: unknown) {
  let v: Record<string, unknown> = entry;
  for (const part of path.slice(0, -1)) v = v[part] as Record<string, unknown>;
  v[path[path.length - 1]!] = value;
}

/** The stable reference name of a secret: resource kind, its key and the field (`SOURCE_GITHUB_SECRET`). */
export function secretRefName(kind: RelayKind, key: string, path: readonly string[]): string {
  const field = path[0] === "verification_secret" ? "SECRET" : path[0] === "headers" ? `HEADER_${path[1]}` : path[0] === "auth_config" ? `AUTH_${path[1]}` : path.join("_");
  return [kind.slice(0, -1), key, field].join("_").toUpperCase().replace(/[^A-Z0-9]+/g, "_").replace(/_+$/, "");
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
  if (out === null || typeof out !== "object") return { file: out, problems };
  for (const kind of RELAY_KINDS) {
    const list = (out as Record<string, unknown>)[kind];
    if (!Array.isArray(list)) continue;
    list.forEach((entry: unknown, i: number) => {
      if (entry === null || typeof entry !== "object" || Array.isArray(entry)) return;
      for (const path of secretPaths(kind, entry as Record<string, unknown>)) {
        const ref = secretRefOf(valueAt(entry, path));
        if (!ref) continue;
        const value = read(ref);
        if (value === undefined || value === "") {
          const what = ref.kind === "env" ? `environment variable ${ref.name} is not set` : `file ${ref.path} cannot be read`;
          problems.push({ field: filePath([kind, i, ...path]), message: `secret reference: ${what}` });
        } else setAt(entry as Record<string, unknown>, path, value);
      }
    });
  }
  return { file: out, problems };
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
  kind: z.enum(["source", "destination", "connection"]),
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
