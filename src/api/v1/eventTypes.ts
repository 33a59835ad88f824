import { successBody } from "../../contracts/common";
import { createEventTypeInput, eventTypeBody, eventTypeList, eventTypeParam, listEventTypesQuery, updateEventTypeInput } from "../../contracts/eventTypes";
import { createEventType, deleteEventType, getEventType, listEventTypes, updateEventType } from "../../domain/eventTypes";
import { jsonBody, operation, responses, type Api } from "../openapi";

/** Event types CRUD (spec: Topics and event types; docs/decisions.md D11). `{id}` is the event type's id or name. */
export function registerEventTypeRoutes(api: Api) {
  const tags = ["event-types"];
  operation(
    api,
    { tags, method: "get", path: "/event-types", summary: "List event types, newest first", request: { query: listEventTypesQuery }, responses: responses({ status: 200, schema: eventTypeList }, [400, 401]) },
    async (c, { query }) => c.json(await listEventTypes(c.get("deps"), c.get("scope"), query), 200),
  );
  operation(
    api,
    {
      tags,
      method: "post",
      path: "/event-types",
      summary: "Create an event type; name unique per environment, json_schema checked",
      request: jsonBody(createEventTypeInput),
      responses: responses({ status: 201, schema: eventTypeBody }, [400, 401, 403, 404, 409]),
    },
    async (c, { body }) => c.json(await createEventType(c.get("deps"), c.get("scope"), body), 201),
  );
  operation(
    api,
    { tags, method: "get", path: "/event-types/{id}", summary: "Get an event type", request: { params: eventTypeParam }, responses: responses({ status: 200, schema: eventTypeBody }, [401, 404]) },
    async (c, { params }) => c.json(await getEventType(c.get("deps"), c.get("scope"), params.id), 200),
  );
  operation(
    api,
    {
      tags,
      method: "patch",
      path: "/event-types/{id}",
      summary: "Update an event type (partial)",
      request: { params: eventTypeParam, ...jsonBody(updateEventTypeInput) },
      responses: responses({ status: 200, schema: eventTypeBody }, [400, 401, 403, 404, 409]),
    },
    async (c, { params, body }) => c.json(await updateEventType(c.get("deps"), c.get("scope"), params.id, body), 200),
  );
  operation(
    api,
    { tags, method: "delete", path: "/event-types/{id}", summary: "Delete an event type", request: { params: eventTypeParam }, responses: responses({ status: 200, schema: successBody }, [401, 403, 404]) },
    async (c, { params }) => c.json(await deleteEventType(c.get("deps"), c.get("scope"), params.id), 200),
  );
}
