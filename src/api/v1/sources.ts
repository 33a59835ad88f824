import { successBody } from "../../contracts/common";
import { createSourceInput, listSourcesQuery, sourceBody, sourceList, sourceSecretBody, templateList, updateSourceInput } from "../../contracts/sources";
import { createSource, deleteSource, getSource, getSourceSecret, listSources, listTemplates, updateSource } from "../../domain/sources";
import { revealsSecret } from "../middleware/auth";
import { idParam, jsonBody, operation, responses, type Api } from "../openapi";

/** Sources CRUD and templates (docs/ingest.md, "Sources" and "Templates"). */
export function registerSourceRoutes(api: Api) {
  const tags = ["sources"];

  // Before /sources/{id}: "templates" is not an id.
  operation(api, { tags, method: "get", path: "/sources/templates", summary: "Source templates: verification settings per provider", responses: responses({ status: 200, schema: templateList }, [401]) }, (c) =>
    c.json(listTemplates(), 200),
  );

  operation(
    api,
    { tags, method: "get", path: "/sources", summary: "List sources, newest first", request: { query: listSourcesQuery }, responses: responses({ status: 200, schema: sourceList }, [400, 401]) },
    async (c, { query }) => c.json(await listSources(c.get("deps"), c.get("scope"), query), 200),
  );

  operation(
    api,
    { tags, method: "post", path: "/sources", summary: "Create a source (a template fills the verification settings)", request: jsonBody(createSourceInput), responses: responses({ status: 201, schema: sourceBody }, [400, 401, 404, 409]) },
    async (c, { body }) => c.json(await createSource(c.get("deps"), c.get("scope"), body), 201),
  );

  operation(
    api,
    { tags, method: "get", path: "/sources/{id}", summary: "Get a source", request: { params: idParam }, responses: responses({ status: 200, schema: sourceBody }, [401, 404]) },
    async (c, { params }) => c.json(await getSource(c.get("deps"), c.get("scope"), params.id), 200),
  );

  operation(
    api,
    {
      tags,
      method: "get",
      path: "/sources/{id}/secret",
      summary: "The verification secret in full (responses mask it); needs scope *",
      middleware: [revealsSecret],
      request: { params: idParam },
      responses: responses({ status: 200, schema: sourceSecretBody }, [401, 403, 404]),
    },
    async (c, { params }) => c.json(await getSourceSecret(c.get("deps"), c.get("scope"), params.id), 200),
  );

  operation(
    api,
    { tags, method: "patch", path: "/sources/{id}", summary: "Update a source; resuming a paused one releases its held events", request: { params: idParam, ...jsonBody(updateSourceInput) }, responses: responses({ status: 200, schema: sourceBody }, [400, 401, 404, 409]) },
    async (c, { params, body }) => c.json(await updateSource(c.get("deps"), c.get("scope"), params.id, body), 200),
  );

  operation(
    api,
    { tags, method: "delete", path: "/sources/{id}", summary: "Delete a source with its events", request: { params: idParam }, responses: responses({ status: 200, schema: successBody }, [401, 404]) },
    async (c, { params }) => c.json(await deleteSource(c.get("deps"), c.get("scope"), params.id), 200),
  );
}
