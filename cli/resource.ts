/**
 * The resource command factory: `hookrelay <noun> list|get|create|update|delete`
 * (and any extra verb) from the route's path, the contracts schemas and the
 * domain functions. Create/update flags are derived from the input schema
 * (schemaFlags.ts), so they mirror the API fields; `--data` takes a whole
 * JSON body. A noun file is then a few declarations.
 */
import { Option, type Command } from "commander";
import type { z } from "zod";
import type { Deps, Scope } from "../src/domain/deps";
import { act, dataOption, noun, parseIntArg, verb, type Opts } from "./command";
import { parseInput, path as encodePath, textQuery, type Context, type QueryValue } from "./context";
import { usageError } from "./errors";
import type { ColumnSpec, View } from "./output";
import { confirm } from "./prompt";
import { addFieldOptions, bodyOf, fieldKind, flagName, type FieldOptions, type ZodLike } from "./schemaFlags";
import { resolveSourceField } from "./sourceRefs";

type Local<M, A extends unknown[], T = unknown> = (m: M, deps: Deps, scope: Scope, ...args: A) => Promise<T>;

export interface ResourceSpec<M> {
  /** Plural noun and API path segment owner: `destinations`. */
  noun: string;
  /** For messages: `destination`. */
  singular: string;
  description: string;
  /** `/destinations` */
  path: string;
  /** Response keys: `{destinations: [...]}` and `{destination: {...}}`. */
  listKey: string;
  itemKey: string;
  /** Table columns of `list`. */
  columns: ColumnSpec[];
  /** Record fields of `get`/`create`/`update` on a terminal (default: all). */
  detail?: ColumnSpec[];
  /** An id for examples: `dst_0123…`. */
  exampleId: string;
  /** The domain module, loaded only when local mode runs. */
  domain: () => Promise<M>;
  /** Turns what the user typed for `<id>` into the id (sources: a slug or name too). */
  resolveId?: (ctx: Context, ref: string) => Promise<string>;
}

// ---------------------------------------------------------------- the factory

/** Flags of a create/update beyond the schema's fields, folded into the body before it is sent. */
interface BodyHooks {
  extraFlags?: (cmd: Command) => void;
  /** Changes the body in place (update: with the resolved id, before the "nothing to update" check). */
  mapBody?: (ctx: Context, opts: Opts, body: Record<string, unknown>, id?: string) => Promise<void> | void;
}

export interface VerbOptions {
  examples?: string[];
  description?: string;
}

export class Resource<M> {
  readonly cmd: Command;

  constructor(
    program: Command,
    readonly spec: ResourceSpec<M>,
    examples: string[] = [`hookrelay ${spec.noun} list`, `hookrelay ${spec.noun} get ${spec.exampleId} --json`],
  ) {
    this.cmd = noun(program, spec.noun, spec.description, examples);
  }

  private itemPath(id: string) {
    return this.spec.path + encodePath`/${id}`;
  }

  /** The `<id>` argument as the id the API takes. */
  async id(ctx: Context, ref: string) {
    return this.spec.resolveId ? this.spec.resolveId(ctx, ref) : ref;
  }

  /** The key of the one-item answer (`source`), or `id` where the item is the answer itself (events). */
  private get itemKey() {
    return this.spec.itemKey || "id";
  }

  private get itemView(): View {
    return { item: this.spec.itemKey, columns: this.spec.detail };
  }

  /** `list`: query flags from the list query schema (values passed as text, as in a URL). */
  list(o: VerbOptions & { query?: z.ZodObject; help?: Record<string, string>; skip?: string[]; local: Local<M, [query: any]>; extraFlags?: (cmd: Command) => void; mapQuery?: (opts: Opts, q: Record<string, QueryValue>) => void; paged?: boolean }) {
    const cmd = verb(this.cmd, "list", o.description ?? `List ${this.spec.noun}`, o.examples ?? [`hookrelay ${this.spec.noun} list`, `hookrelay ${this.spec.noun} list --json`]);
    const bindings: { field: string; attr: string }[] = [];
    for (const [field, s] of Object.entries(o.query?.shape ?? {})) {
      if (o.skip?.includes(field) || (o.paged && ["limit", "offset", "cursor", "direction"].includes(field))) continue;
      const k = fieldKind(s as unknown as ZodLike);
      const opt = new Option(`${flagName(field)} <value>`, o.help?.[field] ?? (field === "source_id" ? "only this source (its id or slug)" : `only these: ${field.replace(/_/g, " ")}`));
      if (k.kind === "enum") opt.choices(k.values!);
      cmd.addOption(opt);
      bindings.push({ field, attr: opt.attributeName() });
    }
    if (o.paged) {
      cmd.option("--limit <n>", "page size, 1 to 100 (default 50)", parseIntArg("--limit", 1));
      cmd.option("--offset <n>", "skip this many", parseIntArg("--offset", 0));
      cmd.option("--cursor <cursor>", "continue from a page's next_cursor");
    }
    o.extraFlags?.(cmd);
    act(cmd, async (ctx, opts) => {
      const query: Record<string, QueryValue> = {};
      for (const b of bindings) if (opts[b.attr] !== undefined) query[b.field] = opts[b.attr];
      if (o.paged) for (const k of ["limit", "offset", "cursor"]) if (opts[k] !== undefined) query[k] = opts[k];
      o.mapQuery?.(opts, query);
      await resolveSourceField(ctx, query);
      const res = await ctx.run({
        method: "GET",
        path: this.spec.path,
        query,
        expect: this.spec.listKey,
        local: async (deps, scope) => o.local(await this.spec.domain(), deps, scope, o.query ? parseInput(o.query, textQuery(query), "query") : {}),
      });
      ctx.out.result(res, { list: this.spec.listKey, columns: this.spec.columns, empty: `No ${this.spec.noun}.` });
    });
    return cmd;
  }

  get(o: VerbOptions & { local: Local<M, [id: string]>; view?: (ctx: Context) => View }) {
    const cmd = verb(this.cmd, "get <id>", o.description ?? `Show one ${this.spec.singular}`, o.examples ?? [`hookrelay ${this.spec.noun} get ${this.spec.exampleId}`]);
    act(cmd, async (ctx, _opts, [ref]) => {
      const id = await this.id(ctx, ref!);
      const res = await ctx.run({ method: "GET", path: this.itemPath(id), expect: this.itemKey, local: async (deps, scope) => o.local(await this.spec.domain(), deps, scope, id) });
      ctx.out.result(res, o.view?.(ctx) ?? this.itemView);
    });
    return cmd;
  }

  create(o: VerbOptions & FieldOptions & BodyHooks & { input: z.ZodObject; local: Local<M, [body: any]> }) {
    const required = Object.entries(o.input.shape)
      .filter(([, s]) => !fieldKind(s as unknown as ZodLike).optional)
      .map(([f]) => f);
    const cmd = verb(
      this.cmd,
      "create",
      o.description ?? `Create ${article(this.spec.singular)}`,
      o.examples ?? [`hookrelay ${this.spec.noun} create ${required.map((f) => `${flagName(f)} …`).join(" ")}`, `hookrelay ${this.spec.noun} create --data @${this.spec.singular}.json --json`],
    );
    const bindings = addFieldOptions(cmd, o.input, false, o);
    o.extraFlags?.(cmd);
    cmd.addOption(dataOption());
    act(cmd, async (ctx, opts) => {
      const body = bodyOf(opts, bindings, opts.data === undefined ? required : []);
      await o.mapBody?.(ctx, opts, body);
      await resolveSourceField(ctx, body);
      const res = await ctx.run({ method: "POST", path: this.spec.path, body, expect: this.itemKey, local: async (deps, scope) => o.local(await this.spec.domain(), deps, scope, parseInput(o.input, body)) });
      ctx.out.result(res, this.itemView);
    });
    return cmd;
  }

  update(o: VerbOptions & FieldOptions & BodyHooks & { input: z.ZodObject; local: Local<M, [id: string, body: any]> }) {
    const cmd = verb(
      this.cmd,
      "update <id>",
      o.description ?? `Change fields of ${article(this.spec.singular)} (only the flags given)`,
      o.examples ?? [`hookrelay ${this.spec.noun} update ${this.spec.exampleId} --name renamed`, `hookrelay ${this.spec.noun} update ${this.spec.exampleId} --data - < patch.json`],
    );
    const bindings = addFieldOptions(cmd, o.input, true, o);
    o.extraFlags?.(cmd);
    cmd.addOption(dataOption());
    act(cmd, async (ctx, opts, [ref]) => {
      const body = bodyOf(opts, bindings, []);
      const nothing = () => usageError(`nothing to update: give at least one field flag or --data (see \`hookrelay ${this.spec.noun} update --help\`)`);
      if (!o.mapBody && Object.keys(body).length === 0) throw nothing();
      const id = await this.id(ctx, ref!);
      if (o.mapBody) {
        await o.mapBody(ctx, opts, body, id);
        if (Object.keys(body).length === 0) throw nothing();
      }
      await resolveSourceField(ctx, body);
      const res = await ctx.run({ method: "PATCH", path: this.itemPath(id), body, expect: this.itemKey, local: async (deps, scope) => o.local(await this.spec.domain(), deps, scope, id, parseInput(o.input, body)) });
      ctx.out.result(res, this.itemView);
    });
    return cmd;
  }

  delete(o: VerbOptions & { local: Local<M, [id: string]> }) {
    const cmd = verb(this.cmd, "delete <id>", o.description ?? `Delete ${article(this.spec.singular)}`, o.examples ?? [`hookrelay ${this.spec.noun} delete ${this.spec.exampleId} --yes`]).option("-y, --yes", "do not ask for confirmation");
    act(cmd, async (ctx, opts, [ref]) => {
      const id = await this.id(ctx, ref!);
      await confirm(opts, `Delete ${this.spec.singular} ${ref === id ? id : `${ref} (${id})`}?`);
      const res = await ctx.run({ method: "DELETE", path: this.itemPath(id), expect: "success", local: async (deps, scope) => o.local(await this.spec.domain(), deps, scope, id) });
      ctx.out.result(res, { text: (_r, c) => `${c.green("✓")} Deleted ${this.spec.singular} ${c.cyan(id)}` });
    });
    return cmd;
  }

  /** Any other verb: the command builds its operation from flags and arguments. */
  verb(nameAndArgs: string, description: string, examples: string[], setup: (cmd: Command) => void, run: (ctx: Context, opts: Opts, args: string[], domain: () => Promise<M>) => Promise<void>) {
    const cmd = verb(this.cmd, nameAndArgs, description, examples);
    setup(cmd);
    act(cmd, (ctx, opts, args) => run(ctx, opts, args, this.spec.domain));
    return cmd;
  }
}

/** "a destination", "an environment": the help reads as English. */
function article(noun: string): string {
  return `${/^[aeio]/i.test(noun) ? "an" : "a"} ${noun}`;
}
