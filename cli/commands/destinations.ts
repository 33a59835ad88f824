import type { Command } from "commander";
import { recoverInput } from "../../src/contracts/recover";
import { createDestinationInput, listDestinationsQuery, updateDestinationInput } from "../../src/contracts/destinations";
import { parseInput, path } from "../context";
import { recoverFlags, runRecover } from "../recover";
import { Resource } from "../resource";

const ID = "dst_0123456789abcdef0123456789abcdef";

/** `hookrelay destinations list|get|create|update|delete|secret|public-key|recover`. */
export function registerDestinations(program: Command) {
  const r = new Resource(program, {
    noun: "destinations",
    singular: "destination",
    description: "Where events are delivered: URL, method, auth, retry policy, signing secret",
    path: "/destinations",
    listKey: "destinations",
    itemKey: "destination",
    columns: ["id", "name", "url", "http_method", "status", "max_retries", "retry_strategy", "created_at"],
    exampleId: ID,
    domain: () => import("../../src/domain/destinations"),
  });
  const help = {
    url: "where to deliver (http:// or https://)",
    headers: "extra request headers: JSON object, or @file.json",
    auth_config: 'auth settings: {"username","password"} (basic), {"token"} (bearer), {"key","api_key"} (api_key)',
    signing_secret: "Standard Webhooks key: whsec_… (hmac-sha256) or whsk_… (ed25519); generated when absent",
    signing_algorithm: "hmac-sha256 (v1, a shared secret; the default) or ed25519 (v1a, verified with the public key: see `destinations public-key`)",
    retry_schedule: "the delay before each retry, e.g. 5s,5m,30m,2h: 1 to 20 steps of 1s to 7d, in place of the retry strategy, interval and max retries",
  };
  r.list({ query: listDestinationsQuery, local: (m, deps, scope, q) => m.listDestinations(deps, scope, q), examples: ["hookrelay destinations list", "hookrelay destinations list --status paused --json"] });
  r.get({ local: (m, deps, scope, id) => m.getDestination(deps, scope, id) });
  r.create({
    input: createDestinationInput,
    help,
    local: (m, deps, scope, body) => m.createDestination(deps, scope, body),
    examples: [
      "hookrelay destinations create --name api --url https://api.example.com/webhooks",
      `hookrelay destinations create --name billing --url https://billing.internal/hook --auth-type bearer --auth-config '{"token":"s3cret"}' --max-retries 5`,
      "hookrelay destinations create --data @destination.json --json",
    ],
  });
  r.update({
    input: updateDestinationInput,
    help,
    local: (m, deps, scope, id, body) => m.updateDestination(deps, scope, id, body),
    examples: [`hookrelay destinations update ${ID} --status paused`, `hookrelay destinations update ${ID} --rate-limit-per-second null --timeout-ms 10000`, `hookrelay destinations update ${ID} --retry-schedule 5s,5m,30m,2h,5h,10h,10h`],
  });
  r.delete({ local: (m, deps, scope, id) => m.deleteDestination(deps, scope, id), description: "Delete a destination (and its connections)" });
  r.verb(
    "secret <id>",
    "Print the destination's signing secret (whsec_…), to verify deliveries",
    [`hookrelay destinations secret ${ID}`, `export WEBHOOK_SECRET=$(hookrelay destinations secret ${ID})`],
    () => {},
    async (ctx, _o, [id], domain) => {
      const res = await ctx.run({ method: "GET", path: path`/destinations/${id!}/secret`, expect: "secret", local: async (deps, scope) => (await domain()).getDestinationSecret(deps, scope, id!) });
      ctx.out.result(res, { text: (r) => r.secret });
    },
  );
  r.verb(
    "public-key <id>",
    "Print an ed25519 destination's public key (whpk_…): receivers verify its v1a signatures with it; a read key may",
    [`hookrelay destinations public-key ${ID}`, `export WEBHOOK_PUBLIC_KEY=$(hookrelay destinations public-key ${ID})`],
    () => {},
    async (ctx, _o, [id], domain) => {
      const res = await ctx.run({ method: "GET", path: path`/destinations/${id!}/public-key`, expect: "public_key", local: async (deps, scope) => (await domain()).getDestinationPublicKey(deps, scope, id!) });
      ctx.out.result(res, { text: (r) => r.public_key });
    },
  );
  r.verb(
    "recover <id>",
    "Send again every event whose latest attempt at the destination failed within --since/--until (a background job)",
    [`hookrelay destinations recover ${ID} --since 2026-01-31T12:00:00Z --until 2026-01-31T14:00:00Z --wait`, `hookrelay destinations recover ${ID} --since 2026-01-31T12:00:00Z --json`],
    recoverFlags,
    async (ctx, o, [id]) =>
      runRecover(ctx, o, path`/destinations/${id!}/recover`, async (deps, scope, body) => (await import("../../src/domain/recovery")).recoverDestination(deps, scope, id!, parseInput(recoverInput, body))),
  );
  return r;
}
