import type { Command } from "commander";
import { createConnectionInput, listConnectionsQuery, testTransformInput, updateConnectionInput } from "../../src/contracts/connections";
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
  return r;
}
