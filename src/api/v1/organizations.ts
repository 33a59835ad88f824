import { createOrganizationInput, deleteOrganizationQuery, organizationBody, organizationList, organizationParam, updateOrganizationInput } from "../../contracts/organizations";
import { createOrganization, deleteOrganization, listOrganizations, updateOrganization } from "../../domain/organizations";
import { instanceOwnerOnly } from "../middleware/auth";
import { jsonBody, operation, responses, type Api } from "../openapi";

/** Organizations (docs/teams.md, "Organizations"): the instance's owner makes them; a session switches between its own with X-Hookrelay-Org. */
export function registerOrganizationRoutes(api: Api) {
  const tags = ["organizations"];
  operation(
    api,
    {
      tags,
      method: "get",
      path: "/organizations",
      summary: "List the organizations the caller is an active member of, oldest first",
      description: "With the caller's role in each. The instance's owner sees every organization (role null where they are no member); an API key sees only its own.",
      responses: responses({ status: 200, schema: organizationList }, [401]),
    },
    async (c) => c.json(await listOrganizations(c.get("deps"), c.get("scope")), 200),
  );
  operation(
    api,
    {
      tags,
      method: "post",
      path: "/organizations",
      summary: "Create an organization (the instance's owner only)",
      description: "Also creates its first environment, production, and makes the caller its active owner. The slug comes from the name when absent.",
      middleware: [instanceOwnerOnly],
      request: jsonBody(createOrganizationInput),
      responses: responses({ status: 201, schema: organizationBody }, [400, 401, 403, 409]),
    },
    async (c, { body }) => c.json(await createOrganization(c.get("deps"), c.get("scope"), body), 201),
  );
  operation(
    api,
    {
      tags,
      method: "patch",
      path: "/organizations/{id}",
      summary: "Rename an organization or change its slug (its admins and owners, or the instance's owner)",
      request: { params: organizationParam, ...jsonBody(updateOrganizationInput) },
      responses: responses({ status: 200, schema: organizationBody }, [400, 401, 403, 404, 409]),
    },
    async (c, { params, body }) => c.json(await updateOrganization(c.get("deps"), c.get("scope"), params.id, body), 200),
  );
  operation(
    api,
    {
      tags,
      method: "delete",
      path: "/organizations/{id}",
      summary: "Delete an organization (its owners, or the instance's owner)",
      description:
        "Refused (409 conflict) for the organization the caller acts in, for the instance's last, and for one whose environments hold resources (the message names them) unless force=true, which deletes them with it. Another organization is 404 to a non-member.",
      request: { params: organizationParam, query: deleteOrganizationQuery },
      responses: responses({ status: 204 }, [401, 403, 404, 409]),
    },
    async (c, { params, query }) => {
      await deleteOrganization(c.get("deps"), c.get("scope"), params.id, { force: query.force === "true" });
      return c.body(null, 204);
    },
  );
}
