import { deleteEnvironmentQuery, environmentBody, environmentList, environmentParam, createEnvironmentInput, updateEnvironmentInput } from "../../contracts/environments";
import { createEnvironment, deleteEnvironment, listEnvironments, updateEnvironment } from "../../domain/environments";
import { requires } from "../middleware/auth";
import { jsonBody, operation, responses, type Api } from "../openapi";

/** The caller's organization's environments (docs/api.md, Environments; docs/decisions.md D19, D20): every role reads them, admins manage them (docs/teams.md). */
export function registerEnvironmentRoutes(api: Api) {
  const tags = ["environments"];
  // Environments are the organization's: creating, renaming and deleting one is an admin's (docs/teams.md).
  const manage = { tags, middleware: [requires("administer")] };
  operation(
    api,
    { tags, method: "get", path: "/environments", summary: "List the organization's environments, oldest first", responses: responses({ status: 200, schema: environmentList }, [401]) },
    async (c) => c.json(await listEnvironments(c.get("deps"), c.get("scope")), 200),
  );
  operation(
    api,
    {
      ...manage,
      method: "post",
      path: "/environments",
      summary: "Create an environment (slug from the name when absent)",
      middleware: [requires("administer")],
      request: jsonBody(createEnvironmentInput),
      responses: responses({ status: 201, schema: environmentBody }, [400, 401, 403, 409]),
    },
    async (c, { body }) => c.json(await createEnvironment(c.get("deps"), c.get("scope"), body), 201),
  );
  operation(
    api,
    {
      ...manage,
      method: "patch",
      path: "/environments/{id}",
      summary: "Rename an environment or change its slug",
      middleware: [requires("administer")],
      request: { params: environmentParam, ...jsonBody(updateEnvironmentInput) },
      responses: responses({ status: 200, schema: environmentBody }, [400, 401, 403, 404, 409]),
    },
    async (c, { params, body }) => c.json(await updateEnvironment(c.get("deps"), c.get("scope"), params.id, body), 200),
  );
  operation(
    api,
    {
      ...manage,
      method: "delete",
      path: "/environments/{id}",
      summary: "Delete an environment",
      description:
        "Refused (409 conflict) for the environment the caller acts in, for the organization's last, and for one still holding resources (the message names them) unless force=true, which deletes them with it.",
      middleware: [requires("administer")],
      request: { params: environmentParam, query: deleteEnvironmentQuery },
      responses: responses({ status: 204 }, [401, 403, 404, 409]),
    },
    async (c, { params, query }) => {
      await deleteEnvironment(c.get("deps"), c.get("scope"), params.id, { force: query.force === "true" });
      return c.body(null, 204);
    },
  );
}
