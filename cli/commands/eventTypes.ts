import type { Command } from "commander";
import { createEventTypeInput, listEventTypesQuery, updateEventTypeInput } from "../../src/contracts/eventTypes";
import { Resource } from "../resource";

/** `hookrelay event-types list|get|create|update|delete`; an event type is named by its id or its name. */
export function registerEventTypes(program: Command) {
  const r = new Resource(
    program,
    {
      noun: "event-types",
      singular: "event type",
      description: "The catalogue of event names, each with an optional JSON Schema that publishes and messages must match",
      path: "/event-types",
      listKey: "event_types",
      itemKey: "event_type",
      columns: ["id", "name", "status", { key: "json_schema", header: "schema", get: (t) => (t.json_schema ? "yes" : "") }, "description", "updated_at"],
      exampleId: "order.created",
      domain: () => import("../../src/domain/eventTypes"),
    },
    ["hookrelay event-types create --name order.created --schema @order.schema.json", "hookrelay event-types list", "hookrelay event-types get order.created --json"],
  );
  const fields = {
    help: {
      name: "letters, digits and . _ : / - (order.created, issues/opened); unique",
      json_schema: "JSON Schema payloads of this type must match: JSON, or @schema.json",
      status: "active, or deprecated (still validates)",
    },
    aliases: { "--schema": "json_schema" },
  };
  r.list({ query: listEventTypesQuery, local: (m, deps, scope, q) => m.listEventTypes(deps, scope, q), examples: ["hookrelay event-types list", "hookrelay event-types list --status deprecated --json"] });
  r.get({ local: (m, deps, scope, id) => m.getEventType(deps, scope, id) });
  r.create({
    input: createEventTypeInput,
    ...fields,
    local: (m, deps, scope, body) => m.createEventType(deps, scope, body),
    description: "Create an event type",
    examples: ["hookrelay event-types create --name order.created --schema @order.schema.json", `hookrelay event-types create --name push --description 'GitHub push' --schema '{"type":"object","required":["ref"]}'`],
  });
  r.update({
    input: updateEventTypeInput,
    ...fields,
    local: (m, deps, scope, id, body) => m.updateEventType(deps, scope, id, body),
    description: "Change fields of an event type (only the flags given)",
    examples: ["hookrelay event-types update order.created --status deprecated", "hookrelay event-types update order.created --schema null"],
  });
  r.delete({ local: (m, deps, scope, id) => m.deleteEventType(deps, scope, id), description: "Delete an event type", examples: ["hookrelay event-types delete order.created --yes"] });
  return r;
}
