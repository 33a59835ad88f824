import type { Command } from "commander";
import { createConnectionInput, listConnectionsQuery, testTransformInput, updateConnectionInput } from "../../src/contracts/connections";
import { skipOrderingInput } from "../../src/contracts/ordering";
import { bodyFrom, dataOption, parseFileArg, parseJsonArg } from "../command";
import { parseInput } from "../context";
import { Resource } from "../resource";

const ID = "0123456789abcdef0123456789abcdef";

/** `hookrelay connections list|get|create|update|delete|test-transform`. */
export function registerConnections(program: Command) {
  const r = new Resource(program, {
    noun: "connections",
    singular: "connection",
    description: "Routes from a source to a destination, with filter rules and a JSONata transform",
    path: "/connections",
    listKey: "connections",
    itemKey: "connection",
    columns: ["id", "name", "source_name", "destination_name", { key: "enabled", get: (c) => (c.enabled ? "enabled" : "disabled") }, "event_count", "last_event_at"],
    exampleId: ID,
    domain: () => import("../../src/domain/connections"),
  });
  const fields = {
    help: {
      filter_rules: `all must match: '[{"field":"body.type","operator":"eq","value":"order.created"}]', or @rules.json`,
      transform_expression: "JSONata expression producing the delivered body",
      enabled: "deliver through this connection",
      transform_enabled: "apply transform_expression",
      ordered: "deliver one event at a time per ordering key, in the order received",
      ordering_key: "the field path giving each event's key, e.g. body.customer.id or headers.x-shop (null: one line)",
      on_dlq: "continue: a key whose head reached the DLQ moves on; block: it waits for a redrive or --skip",
    },
    files: { "--transform-file": "transform_expression" },
  };
  r.list({
    query: listConnectionsQuery,
    local: (m, deps, scope, q) => m.listConnections(deps, scope, q),
    examples: ["hookrelay connections list", "hookrelay connections list --source-id src_0123456789abcdef0123456789abcdef --json"],
  });
  r.get({ local: (m, deps, scope, id) => m.getConnection(deps, scope, id) });
  r.create({
    input: createConnectionInput,
    ...fields,
    local: (m, deps, scope, body) => m.createConnection(deps, scope, body),
    examples: [
      "hookrelay connections create --name orders --source-id src_… --destination-id dst_…",
      `hookrelay connections create --name paid --source-id src_… --destination-id dst_… --filter-rules '[{"field":"body.type","operator":"eq","value":"invoice.paid"}]'`,
      "hookrelay connections create --name slim --source-id src_… --destination-id dst_… --transform-file slim.jsonata --transform-enabled",
    ],
  });
  r.update({
    input: updateConnectionInput,
    ...fields,
    local: (m, deps, scope, id, body) => m.updateConnection(deps, scope, id, body),
    examples: [`hookrelay connections update ${ID} --no-enabled`, `hookrelay connections update ${ID} --transform-file slim.jsonata --transform-enabled`, `hookrelay connections update ${ID} --filter-rules null`],
  });
  r.delete({ local: (m, deps, scope, id) => m.deleteConnection(deps, scope, id) });
  r.verb(
    "test-transform",
    "Run a JSONata transform against a stored event (or a given body) without saving anything",
    ["hookrelay connections test-transform --transform-file slim.jsonata --event-id evt_…", `hookrelay connections test-transform --expression '{"id": id}' --body '{"id": 1, "x": 2}'`],
    (cmd) =>
      cmd
        .option("--expression <jsonata>", "the JSONata expression")
        .option("--transform-file <file>", "read the expression from a file", parseFileArg("--transform-file"))
        .option("--event-id <id>", "a stored event to transform")
        .option("--body <json>", "a JSON body to transform instead (or @file.json)", parseJsonArg("--body"))
        .addOption(dataOption()),
    async (ctx, o, _args, domain) => {
      const body = bodyFrom(o.data, { transform_expression: o.expression ?? o.transformFile, event_id: o.eventId, body: o.body });
      const res = await ctx.run({ method: "POST", path: "/connections/test-transform", body, expect: "result", local: async (deps, scope) => (await domain()).testTransform(deps, scope, parseInput(testTransformInput, body)) });
      ctx.out.result(res, { text: (r) => JSON.stringify(r.result, null, 2) });
    },
  );
  r.verb(
    "ordering <id>",
    "The ordered connection's keys waiting behind their head or blocked; --skip <key> moves a blocked key on (its head stays in the DLQ)",
    [`hookrelay connections ordering ${ID}`, `hookrelay connections ordering ${ID} --skip cus_42`, `hookrelay connections ordering ${ID} --skip-null --json`],
    (cmd) => cmd.option("--skip <key>", "move this blocked key on").option("--skip-null", "move the null-key line on"),
    async (ctx, o, [id]) => {
      const ordering = () => import("../../src/domain/ordering");
      if (o.skip !== undefined || o.skipNull) {
        const body = { key: o.skipNull ? null : (o.skip as string) };
        const res = await ctx.run({
          method: "POST",
          path: `/connections/${encodeURIComponent(id!)}/ordering/skip`,
          body,
          expect: "skipped_attempt_id",
          local: async (deps, scope) => (await ordering()).skipConnectionKey(deps, scope, id!, parseInput(skipOrderingInput, body).key),
        });
        ctx.out.result(res, { text: (r) => `skipped ${r.skipped_attempt_id}: key ${JSON.stringify(r.key)} moves on` });
        return;
      }
      const res = await ctx.run({
        method: "GET",
        path: `/connections/${encodeURIComponent(id!)}/ordering`,
        expect: "keys",
        local: async (deps, scope) => (await ordering()).connectionOrdering(deps, scope, id!),
      });
      ctx.out.result(res, { list: "keys", columns: ["key", { key: "blocked", get: (k) => (k.blocked ? "blocked" : "waiting") }, "waiting", "since", "head_attempt_id"], empty: "No key waiting or blocked." });
    },
  );
  return r;
}
