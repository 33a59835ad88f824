import { Option, type Command } from "commander";
import { createApiKeyInput } from "../../src/contracts/apiKeys";
import { act, noun, verb } from "../command";
import { parseInput, path } from "../context";

const domain = () => import("../../src/domain/apiKeys");

type Created = { id: string; name: string; key: string; key_prefix: string; scopes: string | null; created_at: string };

/** `hookrelay keys create|list|revoke`: remote needs a logged-in session; local mode needs none. */
export function registerKeys(program: Command) {
  const keys = noun(program, "keys", "Manage API keys (remote: needs `hookrelay login`; local: --data-dir)", [
    "hookrelay keys create --name ci --data-dir /var/lib/hookrelay --json",
    "hookrelay keys list",
  ]);

  act(
    verb(keys, "create", "Create an API key; the key is shown once", [
      "hookrelay keys create --name ci",
      "hookrelay keys create --name dashboards --scopes read --json",
      "hookrelay keys create --name ci --data-dir ./data --json   # local, no login needed",
    ])
      .requiredOption("--name <name>", "a name to recognise the key by")
      .addOption(new Option("--scopes <scopes>", "what the key may do: * (everything) or read (GET only)").choices(["*", "read"]))
      .option("--org-id <id>", "organization (default: yours)")
      .option("--env-id <id>", "environment (default: yours)"),
    async (ctx, o) => {
      const body = { name: o.name, scopes: o.scopes, org_id: o.orgId, env_id: o.envId };
      const res = await ctx.run<Created>({
        method: "POST",
        path: "/auth/api-keys",
        body,
        expect: "key",
        local: async (deps, scope) => (await domain()).createApiKey(deps, scope, parseInput(createApiKeyInput, body)),
      });
      ctx.out.result(res, {
        text: (r, c) =>
          ctx.out.tty
            ? `${c.green("✓")} Created API key ${c.cyan(r.id)} (${r.name}, scopes ${r.scopes ?? "*"})\n\n  ${c.bold(r.key)}\n\n${c.yellow("Copy it now: it is shown only once.")}`
            : r.key,
      });
    },
  );

  act(
    verb(keys, "list", "List API keys (masked: only the first 12 characters)", ["hookrelay keys list", "hookrelay keys list --json | jq '.api_keys[].name'"]),
    async (ctx) => {
      const res = await ctx.run({ method: "GET", path: "/auth/api-keys", expect: "api_keys", local: async (deps, scope) => (await domain()).listApiKeys(deps, scope) });
      ctx.out.result(res, {
        list: "api_keys",
        columns: ["id", "name", "key_prefix", "scopes", { key: "revoked", get: (r) => (r.revoked ? "revoked" : "active"), header: "status" }, "request_count", "last_used_at", "created_at"],
        empty: "No API keys yet: create one with `hookrelay keys create --name NAME`.",
      });
    },
  );

  act(verb(keys, "revoke <id>", "Revoke an API key, at once and for good", ["hookrelay keys revoke ak_0123456789abcdef0123456789abcdef"]), async (ctx, _o, [id]) => {
    const res = await ctx.run({ method: "DELETE", path: path`/auth/api-keys/${id!}`, expect: "success", local: async (deps, scope) => (await domain()).revokeApiKey(deps, scope, id!) });
    ctx.out.result(res, { text: (_r, c) => `${c.green("✓")} Revoked API key ${c.cyan(id!)}` });
  });
}
