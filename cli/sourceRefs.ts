/**
 * Sources are addressed by id or slug (or name) everywhere in the CLI:
 * `sources get gh`, `--source-id gh`, `listen gh`, `events tail --source gh`.
 * Every command resolves them here.
 */
import type { Context } from "./context";
import { CliError, EXIT } from "./errors";

type SourceRow = { id: string; name: string; slug: string };

/** `src_` + 32 hex, or the bare hex: passed on as given (the server answers for it) without a lookup. */
const SOURCE_ID = /^(src_)?[0-9a-f]{32}$/i;

/** `src_…`, the bare hex id, the slug or the name → source rows (one list call). */
export async function resolveSources(ctx: Context, refs: string[]): Promise<SourceRow[]> {
  if (refs.length === 0) return [];
  const { sources } = await ctx.run<{ sources: SourceRow[] }>({
    method: "GET",
    path: "/sources",
    expect: "sources",
    local: async (deps, scope) => (await import("../src/domain/sources")).listSources(deps, scope, {}),
  });
  return refs.map((ref) => {
    const r = ref.trim();
    const hit =
      sources.find((s) => s.id === r || s.id === `src_${r}`) ?? sources.find((s) => s.slug === r.toLowerCase()) ?? sources.find((s) => s.name.toLowerCase() === r.toLowerCase());
    if (!hit) throw new CliError(`no source "${ref}" (give its id, slug or name; see \`hookrelay sources list\`)`, EXIT.error, "not_found", { error: { code: "not_found", message: `Source ${ref} not found` } });
    return hit;
  });
}

/** One source reference → the id to send. */
export async function sourceId(ctx: Context, ref: string): Promise<string> {
  const r = ref.trim();
  if (SOURCE_ID.test(r)) return r;
  return (await resolveSources(ctx, [r]))[0]!.id;
}

/** A request body or query naming a source (`source_id`, from `--source-id` or `--data`): the reference becomes its id, in place. */
export async function resolveSourceField(ctx: Context, fields: Record<string, unknown>) {
  if (typeof fields.source_id === "string" && fields.source_id !== "") fields.source_id = await sourceId(ctx, fields.source_id);
}
