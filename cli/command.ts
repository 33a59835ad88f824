/**
 * Helpers every command file uses: declaring nouns and verbs with a
 * description and examples, the global flags on every verb, the action
 * wrapper that builds the context, and the parsers for flag values and
 * `--data @file.json` / `--data -` bodies.
 */
import { Command, InvalidArgumentError, Option } from "commander";
import { readFileSync } from "node:fs";
import { createContext, type Context } from "./context";
import type { GlobalFlags } from "./context/target";
import { usageError } from "./errors";

/** Every command's help ends with examples (a test walks the tree to check). */
function withExamples(cmd: Command, list: string[]) {
  if (list.length > 0) cmd.addHelpText("after", "\nExamples:\n" + list.map((e) => (e.startsWith("#") ? `  ${e}` : `  $ ${e}`)).join("\n"));
  return cmd;
}

/** A `<noun>` command grouping verbs (`hookrelay sources …`). */
export function noun(program: Command, name: string, description: string, exampleList: string[]): Command {
  return withExamples(program.command(name).description(description), exampleList);
}

/** A verb: description and examples; `finishGlobalOptions` later gives it the global flags. */
export function verb(parent: Command, nameAndArgs: string, description: string, exampleList: string[]): Command {
  const cmd = parent.command(nameAndArgs).description(description);
  verbs.add(cmd);
  return withExamples(cmd, exampleList);
}

const verbs = new WeakSet<Command>();
/** Which global flags a command carries (the program: all of them). */
const globalsOn = new WeakMap<Command, Set<string>>();

const GLOBAL_OPTIONS = [
  ["url", "--url <url>", "URL of a running hookrelay (remote mode) [HOOKRELAY_URL]"],
  ["apiKey", "--api-key <key>", "API key for remote mode [HOOKRELAY_API_KEY]"],
  ["profile", "--profile <name>", "saved login profile [HOOKRELAY_PROFILE]"],
  ["dataDir", "--data-dir <dir>", "work directly on a local data dir (local mode) [HOOKRELAY_DATA_DIR]"],
  ["databaseUrl", "--database-url <url>", "work directly on a PostgreSQL database (local mode) [HOOKRELAY_DATABASE_URL]"],
  ["org", "--org <slug>", "organization to act in, by slug or id: a session's or local mode's (an API key has its own) [HOOKRELAY_ORG]"],
  ["env", "--env <slug>", "environment to act in, by slug or id: a session's or local mode's (an API key has its own) [HOOKRELAY_ENV]"],
  ["json", "--json", "print the API's JSON response and nothing else"],
] as const;

/**
 * Adds the global flags to every verb once its own options exist, so
 * `keys create --data-dir DIR --json` works. Where a verb has a field flag of
 * the same name (`destinations create --url`), the field wins there and the
 * global goes before the noun (`hookrelay --url … destinations create`).
 */
export function finishGlobalOptions(program: Command) {
  globalsOn.set(program, new Set(GLOBAL_OPTIONS.map(([k]) => k)));
  const visit = (cmd: Command) => {
    if (verbs.has(cmd)) {
      const added = new Set<string>();
      const shadowed: string[] = [];
      for (const [key, flags, description] of GLOBAL_OPTIONS) {
        const long = flags.split(" ")[0]!;
        if (cmd.options.some((o) => o.long === long)) {
          shadowed.push(long);
          continue;
        }
        cmd.addOption(new Option(flags, description).helpGroup("Global options:"));
        added.add(key);
      }
      globalsOn.set(cmd, added);
      if (shadowed.length > 0) {
        const path = [cmd.parent?.parent ? cmd.parent.name() : "", cmd.name()].filter(Boolean).join(" ");
        cmd.addHelpText("after", `\nHere ${shadowed.join(", ")} is a field of the request; the global ${shadowed.join(", ")} goes before the command: hookrelay ${shadowed.map((f) => `${f} …`).join(" ")} ${path} …`);
      }
    }
    for (const c of cmd.commands) visit(c);
  };
  visit(program);
}

const GLOBAL_KEYS = ["url", "apiKey", "profile", "dataDir", "databaseUrl", "org", "env", "json"] as const;

/** The global flags as given on the verb or any ancestor; the nearest wins. */
export function globalFlags(cmd: Command): GlobalFlags {
  const out: Record<string, unknown> = {};
  for (let c: Command | null = cmd; c; c = c.parent) {
    const o = c.opts();
    const own = globalsOn.get(c);
    for (const k of GLOBAL_KEYS) if (own?.has(k) && out[k] === undefined && o[k] !== undefined) out[k] = o[k];
  }
  return out as GlobalFlags;
}

export type Opts = Record<string, any>;

/** The action: build the context from the flags, run, always close (local mode holds the database). */
export function act(cmd: Command, fn: (ctx: Context, opts: Opts, args: string[]) => Promise<void>) {
  return cmd.action(async (...a: unknown[]) => {
    const self = a[a.length - 1] as Command;
    const ctx = await createContext(globalFlags(self));
    try {
      await fn(ctx, self.opts(), self.processedArgs as string[]);
    } finally {
      await ctx.close();
    }
  });
}

// ---------------------------------------------------------------- flag value parsers (bad values are usage errors, exit 2)

export const parseIntArg = (name: string, min = 0) => (raw: string) => {
  if (!/^-?\d+$/.test(raw.trim())) throw new InvalidArgumentError(`${name} must be a whole number.`);
  const n = Number(raw);
  if (n < min) throw new InvalidArgumentError(`${name} must be at least ${min}.`);
  return n;
};

export const parseJsonArg = (name: string) => (raw: string) => {
  const text = raw.startsWith("@") ? readFileArg(raw.slice(1), name) : raw;
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new InvalidArgumentError(`${name} must be JSON (${(err as Error).message}).`);
  }
};

/** `--data '{…}'`, `--data @payload.json`, `--data -` (stdin): any JSON value. */
export function payloadArg(raw: string) {
  if (raw === "") throw new InvalidArgumentError("--data needs a JSON payload.");
  return parseJsonArg("--data")(raw === "-" ? "@-" : raw);
}

export const parseListArg = (raw: string) =>
  raw
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);

export const parseBoolArg = (name: string) => (raw: string) => {
  const v = raw.trim().toLowerCase();
  if (["1", "true", "yes", "on"].includes(v)) return true;
  if (["0", "false", "no", "off"].includes(v)) return false;
  throw new InvalidArgumentError(`${name} must be true or false.`);
};

/** `--transform-file f.jsonata`: the file's text. */
export const parseFileArg = (name: string) => (file: string) => readFileArg(file, name);

function readFileArg(file: string, name: string) {
  try {
    return file === "-" ? readFileSync(0, "utf8") : readFileSync(file, "utf8");
  } catch (err) {
    throw new InvalidArgumentError(`${name}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}).`);
  }
}

/** `--data` on create/update verbs. */
export const dataOption = () => new Option("--data <json>", "the full JSON body: inline, @file.json, or - for stdin (flags override its fields)");

/**
 * The request body of a create/update: `--data` (inline JSON, `@file`, `-`)
 * as the base, then every flag that was given on top.
 */
export function bodyFrom(data: string | undefined, fields: Record<string, unknown>): Record<string, unknown> {
  let base: Record<string, unknown> = {};
  if (data !== undefined) {
    const text = data === "-" ? readStdin() : data.startsWith("@") ? readOrUsage(data.slice(1)) : data;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      throw usageError(`--data must be a JSON object (${(err as Error).message})`);
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw usageError("--data must be a JSON object");
    base = parsed as Record<string, unknown>;
  }
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) base[k] = v;
  return base;
}

function readStdin() {
  try {
    return readFileSync(0, "utf8");
  } catch {
    throw usageError("--data -: cannot read standard input");
  }
}

function readOrUsage(file: string) {
  try {
    return readFileSync(file, "utf8");
  } catch (err) {
    throw usageError(`--data @${file}: cannot read the file (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
}
