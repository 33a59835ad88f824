import { successBody } from "../../contracts/common";
import { connectionBody, connectionList, createConnectionInput, listConnectionsQuery, testTransformInput, testTransformResult, updateConnectionInput } from "../../contracts/connections";
import { createConnection, deleteConnection, getConnection, listConnections, testTransform, updateConnection } from "../../domain/connections";
import { idParam, jsonBody, operation, responses, type Api } from "../openapi";

/** Connections CRUD (spec: POST /connections; docs/decisions.md D6) and the transform preview. */
export function registerConnectionRoutes(api: Api) {
  const tags = ["connections"];
  operation(
    api,
    { method: "post", path: "/connections", tags, summary: "Connect a source to a destination", request: jsonBody(createConnectionInput), responses: responses({ status: 201, schema: connectionBody }, [400, 401, 403, 404]) },
    async (c, { body }) => c.json(await createConnection(c.get("deps"), c.get("scope"), body), 201),
  );
  operation(
    api,
    {
      method: "post",
      path: "/connections/test-transform",
      tags,
      summary: "Run a JSONata transform against a stored event (or a given body) without saving it",
      description: "A transform stopped by its time or memory limit → 422 transform_limit_exceeded (docs/delivery.md).",
      request: jsonBody(testTransformInput),
      responses: responses({ status: 200, schema: testTransformResult }, [400, 401, 403, 404, 422]),
    },
    async (c, { body }) => c.json(await testTransform(c.get("deps"), c.get("scope"), body), 200),
  );
  operation(
    api,
    { method: "get", path: "/connections", tags, summary: "List connections, newest first", request: { query: listConnectionsQuery }, responses: responses({ status: 200, schema: connectionList }, [400, 401]) },
    async (c, { query }) => c.json(await listConnections(c.get("deps"), c.get("scope"), query), 200),
  );
  operation(
    api,
    { method: "get", path: "/connections/{id}", tags, summary: "Get a connection", request: { params: idParam }, responses: responses({ status: 200, schema: connectionBody }, [401, 404]) },
    async (c, { params }) => c.json(await getConnection(c.get("deps"), c.get("scope"), params.id), 200),
  );
  operation(
    api,
    {
      method: "patch",
      path: "/connections/{id}",
      tags,
      summary: "Update a connection (partial)",
      request: { params: idParam, ...jsonBody(updateConnectionInput) },
      responses: responses({ status: 200, schema: connectionBody }, [400, 401, 403, 404]),
    },
    async (c, { params, body }) => c.json(await updateConnection(c.get("deps"), c.get("scope"), params.id, body), 200),
  );
  operation(
    api,
    { method: "delete", path: "/connections/{id}", tags, summary: "Delete a connection", request: { params: idParam }, responses: responses({ status: 200, schema: successBody }, [401, 403, 404]) },
    async (c, { params }) => c.json(await deleteConnection(c.get("deps"), c.get("scope"), params.id), 200),
  );
}
