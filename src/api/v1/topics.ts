import { successBody } from "../../contracts/common";
import { createTopicInput, listTopicsQuery, publishInput, publishResult, topicBody, topicList, topicParam, updateTopicInput } from "../../contracts/topics";
import { createTopic, deleteTopic, getTopic, listTopics, publishToTopic, updateTopic } from "../../domain/topics";
import { jsonBody, operation, responses, type Api } from "../openapi";

/** Topics CRUD and publishing (spec: Topics and event types; docs/decisions.md D11). `{id}` is the topic's id or slug. */
export function registerTopicRoutes(api: Api) {
  const tags = ["topics"];
  operation(
    api,
    { tags, method: "get", path: "/topics", summary: "List topics, newest first", request: { query: listTopicsQuery }, responses: responses({ status: 200, schema: topicList }, [400, 401]) },
    async (c, { query }) => c.json(await listTopics(c.get("deps"), c.get("scope"), query), 200),
  );
  operation(
    api,
    {
      tags,
      method: "post",
      path: "/topics",
      summary: "Create a topic (and its source, of type topic)",
      request: jsonBody(createTopicInput),
      responses: responses({ status: 201, schema: topicBody }, [400, 401, 403, 404, 409]),
    },
    async (c, { body }) => c.json(await createTopic(c.get("deps"), c.get("scope"), body), 201),
  );
  operation(
    api,
    { tags, method: "get", path: "/topics/{id}", summary: "Get a topic", request: { params: topicParam }, responses: responses({ status: 200, schema: topicBody }, [401, 404]) },
    async (c, { params }) => c.json(await getTopic(c.get("deps"), c.get("scope"), params.id), 200),
  );
  operation(
    api,
    {
      tags,
      method: "patch",
      path: "/topics/{id}",
      summary: "Update a topic (partial); status active or paused",
      request: { params: topicParam, ...jsonBody(updateTopicInput) },
      responses: responses({ status: 200, schema: topicBody }, [400, 401, 403, 404, 409]),
    },
    async (c, { params, body }) => c.json(await updateTopic(c.get("deps"), c.get("scope"), params.id, body), 200),
  );
  operation(
    api,
    {
      tags,
      method: "delete",
      path: "/topics/{id}",
      summary: "Delete a topic with its source, events, connections and collections",
      request: { params: topicParam },
      responses: responses({ status: 200, schema: successBody }, [401, 403, 404]),
    },
    async (c, { params }) => c.json(await deleteTopic(c.get("deps"), c.get("scope"), params.id), 200),
  );
  operation(
    api,
    {
      tags,
      method: "post",
      path: "/topics/{id}/publish",
      summary: "Publish an event: stored on the topic's source and delivered through its connections",
      description:
        "The payload must satisfy the topic's schema and, when an event type named event_type has a json_schema, that schema too (422 schema_violation, details.errors). A paused topic refuses publishes (409 conflict).",
      request: { params: topicParam, ...jsonBody(publishInput) },
      responses: responses({ status: 200, schema: publishResult }, [400, 401, 403, 404, 409, 413, 422]),
    },
    async (c, { params, body }) => c.json(await publishToTopic(c.get("deps"), c.get("scope"), params.id, body), 200),
  );
}
