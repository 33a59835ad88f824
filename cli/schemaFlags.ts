/**
 * Flags from zod schemas: one flag per field of a route's input schema
 * (`--name`, `--filter-rules '<json>'`, `--ip-allowlist a,b`, `--enabled` /
 * `--no-enabled`, …), parsed by the field's type, and the request body read
 * back from them on top of `--data`.
 */
import { InvalidArgumentError, Option, type Command } from "commander";
import type { z } from "zod";
import { bodyFrom, parseFileArg, parseJsonArg, parseListArg, type Opts } from "./command";
import { usageError } from "./errors";

type Kind = { kind: "string" | "number" | "boolean" | "enum" | "list" | "json"; values?: string[]; nullable: boolean; optional: boolean };

type Def = { type: string; innerType?: ZodLike; in?: ZodLike; out?: ZodLike; options?: ZodLike[]; element?: ZodLike; entries?: Record<string, string> };
export type ZodLike = { _zod: { def: Def }; description?: string };

/** What a field accepts, read from its zod schema (the CLI-friendliest member of a union). */
export function fieldKind(schema: ZodLike): Kind {
  let nullable = false;
  let optional = false;
  const walk = (s: ZodLike): Omit<Kind, "nullable" | "optional"> => {
    const def = s._zod.def;
    switch (def.type) {
      case "optional":
      case "default":
      case "prefault":
        optional = true;
        return walk(def.innerType!);
      case "nullable":
        nullable = true;
        return walk(def.innerType!);
      case "readonly":
      case "catch":
        return walk(def.innerType!);
      case "pipe":
        return walk(def.in!._zod.def.type === "transform" ? def.out! : def.in!);
      case "string":
        return { kind: "string" };
      case "number":
      case "int":
      case "bigint":
        return { kind: "number" };
      case "boolean":
        return { kind: "boolean" };
      case "enum":
        return { kind: "enum", values: Object.values(def.entries ?? {}).map(String) };
      case "array":
        return walk(def.element!).kind === "string" ? { kind: "list" } : { kind: "json" };
      case "union": {
        const kinds = def.options!.map(walk);
        for (const want of ["boolean", "list", "json", "enum", "number", "string"] as const) {
          const hit = kinds.find((k) => k.kind === want);
          if (hit) return hit;
        }
        return { kind: "json" };
      }
      default:
        return { kind: "json" };
    }
  };
  const k = walk(schema);
  return { ...k, nullable, optional };
}

export const flagName = (field: string) => "--" + field.replace(/_/g, "-");

function describe(field: string, k: Kind, forUpdate: boolean, help?: string) {
  const what =
    help ??
    (k.kind === "enum"
      ? field.replace(/_/g, " ")
      : k.kind === "list"
        ? `${field.replace(/_/g, " ")}: comma-separated, or a JSON array`
        : k.kind === "json"
          ? `${field.replace(/_/g, " ")}: JSON, or @file.json`
          : field.replace(/_/g, " "));
  return what + (forUpdate && k.nullable ? " ('null' clears it)" : "");
}

/** commander turns a parsed `null` into "": a nullable field's `null` travels as this marker instead. */
const NULL = Symbol("null");

function parserFor(field: string, k: Kind) {
  const flag = flagName(field);
  return (raw: string): unknown => {
    if (k.nullable && raw === "null") return NULL;
    switch (k.kind) {
      case "number": {
        const n = Number(raw);
        if (raw.trim() === "" || !Number.isFinite(n)) throw new InvalidArgumentError(`${flag} must be a number.`);
        return n;
      }
      case "enum":
        if (!k.values!.includes(raw)) throw new InvalidArgumentError(`${flag} must be one of ${k.values!.join(", ")}.`);
        return raw;
      case "list":
        if (raw.trim().startsWith("[")) return parseJsonArg(flag)(raw);
        return parseListArg(raw);
      case "json":
        return parseJsonArg(flag)(raw);
      default:
        return raw;
    }
  };
}


export interface FieldOptions {
  /** Better help text for a field than its name. */
  help?: Record<string, string>;
  /** Fields to leave out of the flags (still settable through --data). */
  skip?: string[];
  /** Extra flags that read a file into a field: `{ "--transform-file": "transform_expression" }`. */
  files?: Record<string, string>;
  /** Other names for a field's flag, parsed the same way: `{ "--schema": "json_schema" }`. */
  aliases?: Record<string, string>;
}

type FieldBinding = { field: string; attr: string; kind: Kind };

/** Adds one flag per schema field to the command; returns how to read them back into a body. */
export function addFieldOptions(cmd: Command, schema: z.ZodObject, forUpdate: boolean, o: FieldOptions = {}): FieldBinding[] {
  const bindings: FieldBinding[] = [];
  for (const [field, s] of Object.entries(schema.shape)) {
    if (o.skip?.includes(field)) continue;
    const k = fieldKind(s as unknown as ZodLike);
    const flag = flagName(field);
    const help = describe(field, k, forUpdate, o.help?.[field] ?? (field === "source_id" ? "the source: its id or slug" : (s as unknown as ZodLike).description));
    if (k.kind === "boolean") {
      const opt = new Option(flag, help);
      cmd.addOption(opt);
      cmd.addOption(new Option(`--no-${flag.slice(2)}`, `set ${field} to false`));
      bindings.push({ field, attr: opt.attributeName(), kind: k });
      continue;
    }
    const placeholder = k.kind === "number" ? "n" : k.kind === "json" ? "json" : k.kind === "list" ? "list" : "value";
    const opt = new Option(`${flag} <${placeholder}>`, help);
    if (k.kind === "enum") opt.choices(k.nullable && forUpdate ? [...k.values!, "null"] : k.values!);
    opt.argParser(parserFor(field, k));
    cmd.addOption(opt);
    bindings.push({ field, attr: opt.attributeName(), kind: k });
  }
  for (const [flag, field] of Object.entries(o.aliases ?? {})) {
    const k = fieldKind(schema.shape[field] as unknown as ZodLike);
    const opt = new Option(`${flag} <${k.kind === "json" ? "json" : "value"}>`, `same as ${flagName(field)}`).argParser(parserFor(field, k));
    cmd.addOption(opt);
    bindings.push({ field, attr: opt.attributeName(), kind: k });
  }
  for (const [flag, field] of Object.entries(o.files ?? {})) {
    const opt = new Option(`${flag} <file>`, `read ${field} from a file (- for stdin)`).argParser(parseFileArg(flag));
    cmd.addOption(opt);
    bindings.push({ field, attr: opt.attributeName(), kind: { kind: "string", nullable: false, optional: true } });
  }
  return bindings;
}

/** The body from `--data` and the field flags; create also checks the required fields are there. */
export function bodyOf(opts: Opts, bindings: FieldBinding[], required: string[]) {
  const fields: Record<string, unknown> = {};
  for (const b of bindings) if (opts[b.attr] !== undefined) fields[b.field] = opts[b.attr] === NULL ? null : opts[b.attr];
  const body = bodyFrom(opts.data, fields);
  const missing = required.filter((f) => body[f] === undefined);
  if (missing.length > 0) throw usageError(`missing ${missing.map(flagName).join(", ")} (or give them in --data)`);
  return body;
}
