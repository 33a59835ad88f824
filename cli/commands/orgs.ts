import type { Command } from "commander";
import { createOrganizationInput, updateOrganizationInput } from "../../src/contracts/organizations";
import { AppError } from "../../src/contracts/errors";
import type { Context } from "../context";
import { path } from "../context";
import { appErrorToCli } from "../errors";
import { confirm } from "../prompt";
import { Resource } from "../resource";

const domain = () => import("../../src/domain/organizations");

/** `<id>` may be the slug: the API's paths take the id, so the slug is looked up among the organizations the caller sees. */
async function organizationId(ctx: Context, ref: string): Promise<string> {
  if (/^[0-9a-f]{32}$/.test(ref)) return ref;
  const res = await ctx.run<{ organizations: { id: string; slug: string }[] }>({
    method: "GET",
    path: "/organizations",
    expect: "organizations",
    local: async (deps, scope) => (await domain()).listOrganizations(deps, scope),
  });
  const found = res.organizations.find((o) => o.slug === ref.toLowerCase());
  if (!found) throw appErrorToCli(new AppError("not_found", `No organization "${ref}" among yours`));
  return found.id;
}

/** `hookrelay orgs list|create|update|delete`: organizations (docs/cli.md, Organizations; docs/teams.md). */
export function registerOrgs(program: Command) {
  const r = new Resource(
    program,
    {
      noun: "orgs",
      singular: "organization",
      description: "Organizations you belong to (the instance's owner: all); --org picks the one other commands act in",
      path: "/organizations",
      listKey: "organizations",
      itemKey: "organization",
      columns: ["id", "name", "slug", "role", "created_at"],
      exampleId: "acme",
      domain,
      resolveId: organizationId,
    },
    ["hookrelay orgs list", "hookrelay orgs create --name Acme", "hookrelay --org acme sources list"],
  );
  r.list({ local: (m, deps, scope) => m.listOrganizations(deps, scope), examples: ["hookrelay orgs list", "hookrelay orgs list --json"] });
  r.create({
    description: "Create an organization with its production environment, you as its owner (the instance's owner only)",
    input: createOrganizationInput,
    help: { slug: "unique in the instance; --org and X-Hookrelay-Org name the organization by it (default: from the name)" },
    local: (m, deps, scope, body) => m.createOrganization(deps, scope, body),
    examples: ["hookrelay orgs create --name Acme", "hookrelay orgs create --name 'Acme EU' --slug acme-eu --json"],
  });
  r.update({
    input: updateOrganizationInput,
    local: (m, deps, scope, id, body) => m.updateOrganization(deps, scope, id, body),
    examples: ["hookrelay orgs update acme --name 'Acme Inc'", "hookrelay orgs update acme --slug acme-inc"],
  });
  r.verb(
    "delete <id>",
    "Delete an organization (its owners, or the instance's owner); one whose environments hold resources is refused unless --force, which deletes them with it",
    ["hookrelay orgs delete acme --yes", "hookrelay orgs delete acme --force --yes"],
    (cmd) => cmd.option("--force", "also delete everything the organization's environments hold").option("-y, --yes", "do not ask for confirmation"),
    async (ctx, opts, [ref], load) => {
      const id = await organizationId(ctx, ref!);
      await confirm(opts, `Delete organization ${ref === id ? id : `${ref} (${id})`}${opts.force ? " and everything it holds" : ""}?`);
      const force = opts.force === true;
      if (ctx.mode === "remote") {
        const p = path`/organizations/${id}`;
        const res = await ctx.remote!.fetch("DELETE", p, { query: force ? { force: "true" } : {} });
        // 204: no body to check; any other answer is hookrelay's error body (or some other server's).
        if (res.status !== 204) throw ctx.remote!.failure("DELETE", p, res, await res.json().catch(() => undefined));
      } else {
        await ctx.run({ method: "DELETE", path: "", expect: "success", local: async (deps, scope) => (await load()).deleteOrganization(deps, scope, id, { force }) });
      }
      ctx.out.result({ success: true }, { text: (_r, c) => `${c.green("✓")} Deleted organization ${c.cyan(id)}` });
    },
  );
  return r;
}
