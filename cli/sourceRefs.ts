import type { Context } from "./context";
import { CliError, EXIT } from "./errors";

type SourceRow = { id: string; name: string; slug: string };

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
