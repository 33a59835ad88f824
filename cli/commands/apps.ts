import type { Command } from "commander";
import { createApplicationInput, listApplicationsQuery, updateApplicationInput } from "../../src/contracts/applications";
import { createPortalLinkInput } from "../../src/contracts/portal";
import { parseIntArg } from "../command";
import { parseInput, path, textQuery, type QueryValue } from "../context";
import { cursorPageFlags, nextPage } from "../paging";
import { Resource } from "../resource";

const ID = "0123456789abcdef0123456789abcdef";
const portalLinks = () => import("../../src/outbound/portalLinks");

/** `hookrelay apps list|get|create|update|delete|portal|portal-revoke`; an application is named by its id or its uid. */
export function registerApps(program: Command) {
  const r = new Resource(
    program,
    {
      noun: "apps",
      singular: "application",
      description: "Applications you send webhooks to (outbound): one per customer, with endpoints, messages and a consumer portal link",
      path: "/applications",
      listKey: "applications",
      itemKey: "application",
      columns: ["id", "uid", "name", "status", { key: "endpoint_count", header: "endpoints" }, { key: "message_count", header: "messages" }, "rate_limit", "created_at"],
      exampleId: "acme",
      domain: () => import("../../src/outbound/applications"),
    },
    [
      "hookrelay apps create --name 'Acme Corp' --uid acme",
      "hookrelay endpoints create --app acme --url https://acme.example.com/webhooks --filter-types order.created",
      "hookrelay messages send acme --type order.created --data @order.json",
      "hookrelay apps portal acme",
    ],
  );
  const fields = {
    skip: ["org_id", "env_id"],
    help: {
      uid: "your own id for the customer (letters, digits, . - _), unique in the environment; paths accept it instead of the id",
      metadata: "a JSON object of your own: JSON, or @file.json",
      rate_limit: "messages per second across the application's endpoints",
      status: "active, or disabled (sending refused, portal links revoked)",
      allow_private_endpoints: "true lets endpoints added through its portal links reach private addresses (as far as the server allows); default false",
    },
  };

  r.verb(
    "list",
    "List applications, newest first, in pages; --search matches the name or the uid",
    ["hookrelay apps list", "hookrelay apps list --search acme", "hookrelay apps list --limit 100 --json | jq -r '.applications[].uid'"],
    (cmd) =>
      cursorPageFlags(cmd.option("--search <text>", "part of the name or the uid")),
    async (ctx, opts, _args, domain) => {
      const query: Record<string, QueryValue> = { search: opts.search, cursor: opts.cursor, limit: opts.limit };
      const res = await ctx.run({
        method: "GET",
        path: "/applications",
        query,
        expect: "applications",
        local: async (deps, scope) => (await domain()).listApplications(deps, scope, parseInput(listApplicationsQuery, textQuery(query), "query")),
      });
      ctx.out.result(res, { list: "applications", columns: r.spec.columns, empty: "No applications." });
      nextPage(ctx, res, "applications");
    },
  );
  r.get({ local: (m, deps, scope, id) => m.getApplication(deps, scope, id), examples: ["hookrelay apps get acme", `hookrelay apps get ${ID} --json`] });
  r.create({
    input: createApplicationInput,
    ...fields,
    local: (m, deps, scope, body) => m.createApplication(deps, scope, body),
    examples: ["hookrelay apps create --name 'Acme Corp' --uid acme", `hookrelay apps create --name Globex --uid globex --metadata '{"plan":"pro"}' --rate-limit 20 --json`],
  });
  r.update({
    input: updateApplicationInput,
    ...fields,
    local: (m, deps, scope, id, body) => m.updateApplication(deps, scope, id, body),
    examples: ["hookrelay apps update acme --status disabled", "hookrelay apps update acme --rate-limit null --description 'Moved to the EU region'"],
  });
  r.delete({ local: (m, deps, scope, id) => m.deleteApplication(deps, scope, id), description: "Delete an application with its endpoints, messages and their attempts", examples: ["hookrelay apps delete acme --yes"] });
  r.verb(
    "portal <app>",
    "Create a consumer portal link: the application's own page to manage its endpoints and see its messages, without a login",
    ["hookrelay apps portal acme", "hookrelay apps portal acme --expires-in 86400 --json"],
    (cmd) => cmd.option("--expires-in <seconds>", "how long the link works, 60 to 604800 (default HOOKRELAY_PORTAL_LINK_TTL, 1 hour)", parseIntArg("--expires-in", 1)),
    async (ctx, opts, [app]) => {
      const body = opts.expiresIn === undefined ? {} : { expires_in: opts.expiresIn as number };
      const res = await ctx.run({
        method: "POST",
        path: path`/applications/${app!}/portal`,
        body,
        expect: "url",
        local: async (deps, scope) => (await portalLinks()).createPortalLink(deps, scope, app!, parseInput(createPortalLinkInput, body)),
      });
      ctx.out.result(res, { text: (r) => r.url });
      ctx.out.note(`expires ${res.expires_at}; whoever has the link manages ${app}'s endpoints until then`);
    },
  );
  r.verb(
    "portal-revoke <app>",
    "Revoke every consumer portal link issued for the application so far (links minted afterwards work)",
    ["hookrelay apps portal-revoke acme", "hookrelay apps portal-revoke acme --json"],
    (cmd) => cmd,
    async (ctx, _opts, [app]) => {
      const res = await ctx.run({
        method: "POST",
        path: path`/applications/${app!}/portal/revoke`,
        expect: "success",
        local: async (deps, scope) => (await portalLinks()).revokePortalLinks(deps, scope, app!),
      });
      ctx.out.result(res, { text: () => `revoked every portal link of ${app} issued so far` });
    },
  );
  return r;
}
