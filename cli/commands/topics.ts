import type { Command } from "commander";
import { createTopicInput, listTopicsQuery, updateTopicInput } from "../../src/contracts/topics";
import { payloadArg } from "../command";
import { path } from "../context";
import { Resource } from "../resource";

const ID = "0123456789abcdef0123456789abcdef";

/** `hookrelay topics list|get|create|update|delete|publish`; a topic is named by its id or its slug. */
export function registerTopics(program: Command) {
  const r = new Resource(
    program,
    {
      noun: "topics",
      singular: "topic",
      description: "Named channels applications publish events to, each with an optional JSON Schema and its own source",
      path: "/topics",
      listKey: "topics",
      itemKey: "topic",
      columns: ["id", "name", "slug", "status", { key: "schema", get: (t) => (t.schema ? "yes" : "") }, "source_id", "created_at"],
      exampleId: "order-events",
      domain: () => import("../../src/domain/topics"),
    },
    ["hookrelay topics create --name 'Order events' --schema @order.schema.json", "hookrelay topics publish order-events --event-type order.created --data @order.json", "hookrelay topics list"],
  );
  const fields = {
    help: {
      slug: "URL-safe name used in the publish path (default: from the name)",
      schema: "JSON Schema published payloads must match: JSON, or @schema.json",
      status: "active, or paused (publishing refused)",
    },
  };
  r.list({ query: listTopicsQuery, local: (m, deps, scope, q) => m.listTopics(deps, scope, q), examples: ["hookrelay topics list", "hookrelay topics list --status paused --json"] });
  r.get({ local: (m, deps, scope, id) => m.getTopic(deps, scope, id), examples: ["hookrelay topics get order-events", `hookrelay topics get ${ID} --json`] });
  r.create({
    input: createTopicInput,
    ...fields,
    local: (m, deps, scope, body) => m.createTopic(deps, scope, body),
    examples: ["hookrelay topics create --name 'Order events'", "hookrelay topics create --name orders --slug orders --schema @order.schema.json --json"],
  });
  r.update({
    input: updateTopicInput,
    ...fields,
    local: (m, deps, scope, id, body) => m.updateTopic(deps, scope, id, body),
    examples: ["hookrelay topics update order-events --status paused", "hookrelay topics update order-events --schema null"],
  });
  r.delete({
    local: (m, deps, scope, id) => m.deleteTopic(deps, scope, id),
    description: "Delete a topic with its source, events, connections and collections",
    examples: ["hookrelay topics delete order-events --yes"],
  });
  r.verb(
    "publish <topic>",
    "Publish an event: checked against the topic's schema (and the event type's), stored on its source and delivered through its connections",
    [
      "hookrelay topics publish order-events --data @order.json",
      `hookrelay topics publish order-events --event-type order.created --data '{"id": "ord_1", "total": 4200}'`,
      "jq -c . order.json | hookrelay topics publish order-events --data - --json",
    ],
    (cmd) =>
      cmd
        .requiredOption("--data <json>", "the payload: inline JSON, @file.json, or - for stdin", payloadArg)
        .option("--event-type <name>", "the event's type; an event type of that name with a schema checks the payload too"),
    async (ctx, opts, [topic], domain) => {
      const body = { payload: opts.data as unknown, ...(opts.eventType ? { event_type: opts.eventType as string } : {}) };
      const res = await ctx.run({ method: "POST", path: path`/topics/${topic!}/publish`, body, expect: "event_id", local: async (deps, scope) => (await domain()).publishToTopic(deps, scope, topic!, body) });
      ctx.out.result(res, { text: (r, c) => `${c.green("✓")} Published ${c.cyan(r.event_id)} to topic ${topic}` });
    },
  );
  return r;
}
