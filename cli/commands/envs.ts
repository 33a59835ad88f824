import type { Command } from "commander";
import { createEnvironmentInput, updateEnvironmentInput } from "../../src/contracts/environments";
import { AppError } from "../../src/contracts/errors";
import type { Context } from "../context";
import { path } from "../context";
import { appErrorToCli } from "../errors";
import { confirm } from "../prompt";
import { Resource } from "../resource";

const domain = () => import("../../src/domain/environments");

/** `<id>` may be the slug: the API's paths take the id, so the slug is looked up among the organization's environments. */
async function environmentId(ctx: Context, ref: string): Promise<string> {
  if (/^[0-9a-f]{32}$/.test(ref)) return ref;
  const res = await ctx.run<{ environments: { id: string; slug: string }[] }>({
    method: "GET",
    path: "/environments",
    expect: "environments",
    local: async (deps, scope) => (await domain()).listEnvironments(deps, scope),
  });
  const found = res.environments.find((e) => e.slug === ref.toLowerCase());
  if (!found) throw appErrorToCli(new AppError("not_found", `No environment "${ref}" in the organization`));
  return found.id;
}

/** `hookrelay envs list|create|update|delete`: the organization's environments (docs/cli.md, Environments). */
export function registerEnvs(program: Command) {
  const r = new Resource(
    program,
    {
      noun: "envs",
      singular: "environment",
      description: "The organization's environments; --env picks the one other commands act in",
      path: "/environments",
      listKey: "environments",
      itemKey: "environment",
      columns: ["id", "name", "slug", "created_at", "updated_at"],
      exampleId: "staging",
      domain,
      resolveId: environmentId,
    },
    ["hookrelay envs list", "hookrelay envs create --name Staging", "hookrelay --env staging sources list"],
  );
  r.list({ local: (m, deps, scope) => m.listEnvironments(deps, scope), examples: ["hookrelay envs list", "hookrelay envs list --json"] });
  r.create({
    input: createEnvironmentInput,
    help: { slug: "unique in the organization; --env and X-Hookrelay-Env name the environment by it (default: from the name)" },
    local: (m, deps, scope, body) => m.createEnvironment(deps, scope, body),
    examples: ["hookrelay envs create --name Staging", "hookrelay envs create --name 'Staging EU' --slug staging-eu --json"],
  });
  r.update({
    input: updateEnvironmentInput,
    local: (m, deps, scope, id, body) => m.updateEnvironment(deps, scope, id, body),
    examples: ["hookrelay envs update staging --name 'Staging (old)'", "hookrelay envs update staging --slug stage"],
  });
  r.verb(
    "delete <id>",
    "Delete an environment; one still holding resources is refused unless --force, which deletes them with it",
    ["hookrelay envs delete staging --yes", "hookrelay envs delete staging --force --yes"],
    (cmd) => cmd.option("--force", "also delete everything the environment holds").option("-y, --yes", "do not ask for confirmation"),
    async (ctx, opts, [ref], load) => {
      const id = await environmentId(ctx, ref!);
      await confirm(opts, `Delete environment ${ref === id ? id : `${ref} (${id})`}${opts.force ? " and everything it holds" : ""}?`);
      const force = opts.force === true;
      if (ctx.mode === "remote") {
        const p = path`/environments/${id}`;
        const res = await ctx.remote!.fetch("DELETE", p, { query: force ? { force: "true" } : {} });
        // 204: no body to check; any other answer is hookrelay's error body (or some other server's).
        if (res.status !== 204) throw ctx.remote!.failure("DELETE", p, res, await res.json().catch(() => undefined));
      } else {
        await ctx.run({ method: "DELETE", path: "", expect: "success", local: async (deps, scope) => (await load()).deleteEnvironment(deps, scope, id, { force }) });
      }
      ctx.out.result({ success: true }, { text: (_r, c) => `${c.green("✓")} Deleted environment ${c.cyan(id)}` });
    },
  );
  return r;
}
