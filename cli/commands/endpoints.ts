import { Option, type Command } from "commander";
import { recoverInput } from "../../src/contracts/recover";
import { createEndpointInput, rotateSecretInput, updateEndpointInput } from "../../src/contracts/endpoints";
import { listEndpointAttemptsQuery } from "../../src/contracts/messages";
import { act, dataOption, noun, verb, type Opts } from "../command";
import { parseInput, path, textQuery, type QueryValue } from "../context";
import { usageError } from "../errors";
import { ATTEMPT_COLUMNS } from "../output/attempts";
import { confirm } from "../prompt";
import { addFieldOptions, bodyOf, fieldKind } from "../schemaFlags";
import { cursorPageFlags, nextPage } from "../paging";
import { recoverFlags, runRecover } from "../recover";

const ID = "0123456789abcdef0123456789abcdef";
const domain = () => import("../../src/outbound/endpoints");
const endpointAttempts = () => import("../../src/outbound/endpointAttempts");

const COLUMNS = ["id", "url", "status", { key: "signing_algorithm", header: "signing" }, { key: "filter_types", header: "event types", get: (e: Record<string, unknown>) => e.filter_types ?? "(all)" }, "rate_limit_per_second", "expires_at", "description", "created_at"];

const HELP = {
  url: "where the messages are POSTed (http:// or https://)",
  filter_types: "only these event types: comma-separated, or a JSON array ('null': every type)",
  rate_limit_per_second: "requests per second to this endpoint",
  retry_schedule: "the delay before each retry, e.g. 5s,5m,30m,2h: 1 to 20 steps of 1s to 7d ('null': the default exponential retries)",
  expires_at: "ISO time after which it receives nothing",
  secret: "signing key: whsec_<base64> (hmac-sha256) or whsk_<base64> (ed25519); generated when absent",
  signing_algorithm: "hmac-sha256 (v1, a shared secret; the default) or ed25519 (v1a, verified with the public key: see `endpoints public-key`)",
  status: "active, or disabled (nothing is sent)",
};

/** `--app` on every verb: the application, by id or uid. */
function withApp(cmd: Command) {
  return cmd.addOption(new Option("--app <app>", "the application: its id or uid").makeOptionMandatory());
}

const base = (app: string) => path`/applications/${app}/endpoints`;
const one = (app: string, id: string, rest = "") => path`/applications/${app}/endpoints/${id}` + rest;

/** `hookrelay endpoints list|get|create|update|delete|secret|public-key|rotate-secret|attempts|recover --app APP`. */
export function registerEndpoints(program: Command) {
  const cmd = noun(program, "endpoints", "An application's endpoints: the URLs its messages are sent to, each with its signing secret", [
    "hookrelay endpoints create --app acme --url https://acme.example.com/webhooks --filter-types order.created,order.shipped",
    "hookrelay endpoints list --app acme",
    `hookrelay endpoints rotate-secret ${ID} --app acme`,
  ]);

  const list = withApp(verb(cmd, "list", "List the application's endpoints, newest first", ["hookrelay endpoints list --app acme", "hookrelay endpoints list --app acme --json | jq -r '.endpoints[].url'"]));
  act(list, async (ctx, opts) => {
    const app = opts.app as string;
    const res = await ctx.run({ method: "GET", path: base(app), expect: "endpoints", local: async (deps, scope) => (await domain()).listEndpoints(deps, scope, app) });
    ctx.out.result(res, { list: "endpoints", columns: COLUMNS, empty: "No endpoints." });
  });

  const get = withApp(verb(cmd, "get <id>", "Show one endpoint (never its secret: see `endpoints secret`)", [`hookrelay endpoints get ${ID} --app acme`]));
  act(get, async (ctx, opts, [id]) => {
    const app = opts.app as string;
    const res = await ctx.run({ method: "GET", path: one(app, id!), expect: "endpoint", local: async (deps, scope) => (await domain()).getEndpoint(deps, scope, app, id!) });
    ctx.out.result(res, { item: "endpoint" });
  });

  const create = withApp(
    verb(cmd, "create", "Add an endpoint to the application; its signing secret is generated unless given", [
      "hookrelay endpoints create --app acme --url https://acme.example.com/webhooks",
      "hookrelay endpoints create --app acme --url https://acme.example.com/orders --filter-types order.created,order.shipped --rate-limit-per-second 10 --json",
      "hookrelay endpoints create --app acme --data @endpoint.json",
    ]),
  );
  const createFlags = addFieldOptions(create, createEndpointInput, false, { help: HELP });
  create.addOption(dataOption());
  const required = Object.entries(createEndpointInput.shape)
    .filter(([, s]) => !fieldKind(s as never).optional)
    .map(([f]) => f);
  act(create, async (ctx, opts) => {
    const app = opts.app as string;
    const body = bodyOf(opts, createFlags, opts.data === undefined ? required : []);
    const res = await ctx.run({ method: "POST", path: base(app), body, expect: "endpoint", local: async (deps, scope) => (await domain()).createEndpoint(deps, scope, app, parseInput(createEndpointInput, body)) });
    ctx.out.result(res, { item: "endpoint" });
  });

  const update = withApp(
    verb(cmd, "update <id>", "Change fields of an endpoint (only the flags given); --status disabled stops sending to it", [
      `hookrelay endpoints update ${ID} --app acme --status disabled`,
      `hookrelay endpoints update ${ID} --app acme --filter-types null --expires-at 2030-01-01T00:00:00Z`,
      `hookrelay endpoints update ${ID} --app acme --retry-schedule 5s,5m,30m,2h`,
    ]),
  );
  const updateFlags = addFieldOptions(update, updateEndpointInput, true, { help: HELP });
  update.addOption(dataOption());
  act(update, async (ctx, opts, [id]) => {
    const app = opts.app as string;
    const body = bodyOf(opts, updateFlags, []);
    if (Object.keys(body).length === 0) throw usageError("nothing to update: give at least one field flag or --data (see `hookrelay endpoints update --help`)");
    const res = await ctx.run({ method: "PATCH", path: one(app, id!), body, expect: "endpoint", local: async (deps, scope) => (await domain()).updateEndpoint(deps, scope, app, id!, parseInput(updateEndpointInput, body)) });
    ctx.out.result(res, { item: "endpoint" });
  });

  const del = withApp(verb(cmd, "delete <id>", "Delete an endpoint; messages still queued for it are not sent", [`hookrelay endpoints delete ${ID} --app acme --yes`])).option("-y, --yes", "do not ask for confirmation");
  act(del, async (ctx, opts, [id]) => {
    const app = opts.app as string;
    await confirm(opts, `Delete endpoint ${id} of ${app}?`);
    const res = await ctx.run({ method: "DELETE", path: one(app, id!), expect: "success", local: async (deps, scope) => (await domain()).deleteEndpoint(deps, scope, app, id!) });
    ctx.out.result(res, { text: (_r, c) => `${c.green("✓")} Deleted endpoint ${c.cyan(id!)}` });
  });

  const secret = withApp(
    verb(cmd, "secret <id>", "Print the endpoint's signing secret (whsec_…), for the receiver to verify requests with", [
      `hookrelay endpoints secret ${ID} --app acme`,
      `export WEBHOOK_SECRET=$(hookrelay endpoints secret ${ID} --app acme)`,
    ]),
  );
  act(secret, async (ctx, opts, [id]) => {
    const app = opts.app as string;
    const res = await ctx.run({ method: "GET", path: one(app, id!, "/secret"), expect: "secret", local: async (deps, scope) => (await domain()).getEndpointSecret(deps, scope, app, id!) });
    ctx.out.result(res, { text: (r) => r.secret });
  });

  const publicKey = withApp(
    verb(cmd, "public-key <id>", "Print an ed25519 endpoint's public key (whpk_…): receivers verify its v1a signatures with it; a read key may", [
      `hookrelay endpoints public-key ${ID} --app acme`,
      `export WEBHOOK_PUBLIC_KEY=$(hookrelay endpoints public-key ${ID} --app acme)`,
    ]),
  );
  act(publicKey, async (ctx, opts, [id]) => {
    const app = opts.app as string;
    const res = await ctx.run({ method: "GET", path: one(app, id!, "/public-key"), expect: "public_key", local: async (deps, scope) => (await domain()).getEndpointPublicKey(deps, scope, app, id!) });
    ctx.out.result(res, { text: (r) => r.public_key });
  });

  const rotate = withApp(
    verb(cmd, "rotate-secret <id>", "Replace the signing secret (or ed25519 key) and print the new one; for 24 hours requests are signed with the old one too", [
      `hookrelay endpoints rotate-secret ${ID} --app acme`,
      `hookrelay endpoints rotate-secret ${ID} --app acme --secret whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw --json`,
    ]),
  ).option("--secret <key>", "the new key, whsec_… or whsk_… (default: a new one of the endpoint's algorithm)");
  act(rotate, async (ctx, opts: Opts, [id]) => {
    const app = opts.app as string;
    const body = opts.secret === undefined ? {} : { secret: opts.secret as string };
    const res = await ctx.run({
      method: "POST",
      path: one(app, id!, "/secret/rotate"),
      body,
      expect: "secret",
      local: async (deps, scope) => (await domain()).rotateEndpointSecret(deps, scope, app, id!, parseInput(rotateSecretInput, body)),
    });
    ctx.out.result(res, { text: (r) => r.secret });
    ctx.out.note("the old secret keeps signing beside this one for 24 hours: switch the receiver to the new one before then");
  });

  const attempts = cursorPageFlags(
    withApp(
      verb(cmd, "attempts <id>", "The endpoint's delivery attempts (every message, retries included), newest first, in pages", [
        `hookrelay endpoints attempts ${ID} --app acme`,
        `hookrelay endpoints attempts ${ID} --app acme --status failed --json`,
      ]),
    ).addOption(new Option("--status <status>", "only attempts with this status").choices(["queued", "delivering", "success", "failed"])),
  );
  act(attempts, async (ctx, opts, [id]) => {
    const app = opts.app as string;
    const query: Record<string, QueryValue> = { status: opts.status, cursor: opts.cursor, limit: opts.limit };
    const res = await ctx.run({
      method: "GET",
      path: one(app, id!, "/attempts"),
      query,
      expect: "attempts",
      local: async (deps, scope) => (await endpointAttempts()).listEndpointAttempts(deps, scope, app, id!, parseInput(listEndpointAttemptsQuery, textQuery(query), "query")),
    });
    ctx.out.result(res, { list: "attempts", columns: ATTEMPT_COLUMNS, empty: "No attempts." });
    nextPage(ctx, res, "attempts");
  });

  const recover = recoverFlags(
    withApp(
      verb(cmd, "recover <id>", "Send again every message whose latest attempt at the endpoint failed within --since/--until (a background job)", [
        `hookrelay endpoints recover ${ID} --app acme --since 2026-01-31T12:00:00Z --wait`,
        `hookrelay endpoints recover ${ID} --app acme --since 2026-01-31T12:00:00Z --until 2026-01-31T14:00:00Z --json`,
      ]),
    ),
  );
  act(recover, async (ctx, opts, [id]) => {
    const app = opts.app as string;
    await runRecover(ctx, opts, one(app, id!, "/recover"), async (deps, scope, body) => (await import("../../src/outbound/endpointRecovery")).recoverEndpoint(deps, scope, app, id!, parseInput(recoverInput, body)));
  });
  return cmd;
}
