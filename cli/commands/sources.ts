import type { Command } from "commander";
import { createSourceInput, listSourcesQuery, updateSourceInput } from "../../src/contracts/sources";
import { path } from "../context";
import { Resource } from "../resource";
import { sourceId } from "../sourceRefs";

const ID = "src_0123456789abcdef0123456789abcdef";

/** `hookrelay sources list|get|create|update|delete|templates|secret`. */
export function registerSources(program: Command) {
  const r = new Resource(
    program,
    {
      noun: "sources",
      singular: "source",
      description: "Where webhooks come in: ingest URL, signature verification, dedup, IP filter, schema",
      path: "/sources",
      listKey: "sources",
      itemKey: "source",
      columns: ["id", "name", "status", "verification_type", "event_count", "last_event_at", "ingest_url"],
      exampleId: ID,
      domain: () => import("../../src/domain/sources"),
      resolveId: sourceId,
    },
    ["hookrelay sources create --name github --template github --verification-secret \"$GITHUB_SECRET\"", "hookrelay sources list", "hookrelay sources get github   # by id or slug", "hookrelay sources templates"],
  );
  const help = {
    template: "provider preset filling the verification settings (see `hookrelay sources templates`)",
    verification_enabled: "check signatures",
    verification_secret: "the shared signing secret",
    verification_header: "header carrying the signature",
    verification_config: 'hmac details as JSON: {"encoding":"base64","prefix":"sha256=",…}, or @file.json',
    dedup_enabled: "drop duplicates within the dedup window",
    dedup_field: "header name (strategy header) or body path like data.id (strategy field)",
    dedup_window_seconds: "how long a duplicate is remembered (default 3600)",
    ip_allowlist: "only these CIDRs/addresses: comma list or JSON array",
    ip_denylist: "never these CIDRs/addresses: comma list or JSON array",
    expires_at: "ephemeral sources: ISO 8601 time after which requests get 410",
    request_limit: "ephemeral sources: requests accepted before 410",
    json_schema: "JSON Schema the body must match: JSON, or @schema.json",
    schema_validation_enabled: "check bodies against json_schema",
    is_ephemeral: "a temporary source (expires_at / request_limit)",
  };
  r.list({
    query: listSourcesQuery,
    local: (m, deps, scope, q) => m.listSources(deps, scope, q),
    examples: ["hookrelay sources list", "hookrelay sources list --status paused --json | jq -r '.sources[].ingest_url'"],
  });
  r.get({ local: (m, deps, scope, id) => m.getSource(deps, scope, id), description: "Show one source (by id or slug)", examples: [`hookrelay sources get ${ID}`, "hookrelay sources get github --json"] });
  r.create({
    input: createSourceInput,
    help,
    local: (m, deps, scope, body) => m.createSource(deps, scope, body),
    examples: [
      "hookrelay sources create --name shop",
      "hookrelay sources create --name stripe --template stripe --verification-secret whsec_…",
      "hookrelay sources create --name orders --dedup-enabled --dedup-strategy field --dedup-field data.id --ip-allowlist 10.0.0.0/8,192.0.2.7",
      "hookrelay sources create --data @source.json --json",
    ],
  });
  r.update({
    input: updateSourceInput,
    help,
    local: (m, deps, scope, id, body) => m.updateSource(deps, scope, id, body),
    examples: [`hookrelay sources update github --status paused`, `hookrelay sources update ${ID} --json-schema @order.schema.json --schema-validation-enabled --schema-action reject`, `hookrelay sources update ${ID} --ip-denylist null`],
  });
  r.delete({ local: (m, deps, scope, id) => m.deleteSource(deps, scope, id), description: "Delete a source with its events" });
  r.verb(
    "templates",
    "List the provider templates (github, stripe, shopify, slack, svix, …) a source can start from",
    ["hookrelay sources templates", "hookrelay sources templates --json | jq '.templates[].id'"],
    () => {},
    async (ctx, _o, _a, domain) => {
      const res = await ctx.run({ method: "GET", path: "/sources/templates", expect: "templates", local: async () => (await domain()).listTemplates() });
      ctx.out.result(res, { list: "templates", columns: ["id", "name", "verification_type", "verification_header", "description"] });
    },
  );
  r.verb(
    "secret <id>",
    "Print the source's verification secret in full (other responses mask it)",
    [`hookrelay sources secret ${ID}`],
    () => {},
    async (ctx, _o, [ref], domain) => {
      const id = await sourceId(ctx, ref!);
      const res = await ctx.run<{ secret: string | null }>({ method: "GET", path: path`/sources/${id}/secret`, expect: "secret", local: async (deps, scope) => (await domain()).getSourceSecret(deps, scope, id) });
      ctx.out.result(res, { text: (r) => r.secret ?? "" });
    },
  );
  return r;
}
