import { applicationBody, applicationList, appParam, createApplicationInput, listApplicationsQuery, updateApplicationInput } from "../../contracts/applications";
import { successBody } from "../../contracts/common";
import { eventTypeList } from "../../contracts/eventTypes";
import { createPortalLinkInput, portalLink } from "../../contracts/portal";
import { createApplication, deleteApplication, getApplication, listApplicationEventTypes, listApplications, updateApplication } from "../../outbound/applications";
import { createPortalLink, revokePortalLinks } from "../../outbound/portalLinks";
import { portalOperation } from "../middleware/portal";
import { jsonBody, operation, responses, type Api } from "../openapi";

/** Applications (docs/decisions.md D10, docs/outbound.md). `{appId}` is the application's id or uid. */
export function registerApplicationRoutes(api: Api) {
  const tags = ["applications"];
  operation(
    api,
    {
      tags,
      method: "post",
      path: "/applications",
      summary: "Create an application; uid unique per environment (defaults to the id)",
      request: jsonBody(createApplicationInput),
      responses: responses({ status: 201, schema: applicationBody }, [400, 401, 403, 404, 409]),
    },
    async (c, { body }) => c.json(await createApplication(c.get("deps"), c.get("scope"), body), 201),
  );
  operation(
    api,
    {
      tags,
      method: "get",
      path: "/applications",
      summary: "List applications, newest first, in cursor pages; search matches name or uid",
      request: { query: listApplicationsQuery },
      responses: responses({ status: 200, schema: applicationList }, [400, 401]),
    },
    async (c, { query }) => c.json(await listApplications(c.get("deps"), c.get("scope"), query), 200),
  );
  portalOperation(
    api,
    { tags, method: "get", path: "/applications/{appId}", summary: "Get an application", request: { params: appParam }, responses: responses({ status: 200, schema: applicationBody }, [401, 403, 404]) },
    async (c, { params }) => c.json(await getApplication(c.get("deps"), c.get("scope"), params.appId), 200),
  );
  operation(
    api,
    {
      tags,
      method: "patch",
      path: "/applications/{appId}",
      summary: "Update an application (partial)",
      request: { params: appParam, ...jsonBody(updateApplicationInput) },
      responses: responses({ status: 200, schema: applicationBody }, [400, 401, 403, 404, 409]),
    },
    async (c, { params, body }) => c.json(await updateApplication(c.get("deps"), c.get("scope"), params.appId, body), 200),
  );
  operation(
    api,
    {
      tags,
      method: "delete",
      path: "/applications/{appId}",
      summary: "Delete an application with its endpoints, messages and their attempts",
      request: { params: appParam },
      responses: responses({ status: 200, schema: successBody }, [401, 403, 404]),
    },
    async (c, { params }) => c.json(await deleteApplication(c.get("deps"), c.get("scope"), params.appId), 200),
  );
  operation(
    api,
    {
      tags,
      method: "post",
      path: "/applications/{appId}/portal",
      summary: "Create a consumer portal link for the application",
      description:
        "A short-lived signed link ({base_url}/portal#token=<token>) to the portal page for this one application. The token works as Authorization: Bearer <token> on the routes whose security lists `portal`, for this application only; every other route refuses it. Optional body {expires_in: seconds, 60 to 604800}; default HOOKRELAY_PORTAL_LINK_TTL (1 hour).",
      request: {
        params: appParam,
        body: { required: false, content: { "application/json": { schema: createPortalLinkInput } } },
      },
      responses: responses({ status: 200, schema: portalLink }, [400, 401, 403, 404, 409]),
    },
    async (c, { params, body }) => c.json(await createPortalLink(c.get("deps"), c.get("scope"), params.appId, body ?? {}), 200),
  );
  operation(
    api,
    {
      tags,
      method: "post",
      path: "/applications/{appId}/portal/revoke",
      summary: "Revoke every portal link issued for the application so far",
      description:
        "Every link minted before this call answers 401 from now on, on every node; links minted afterwards work. Disabling the application (PATCH status disabled) revokes its links too.",
      request: { params: appParam },
      responses: responses({ status: 200, schema: successBody }, [401, 403, 404]),
    },
    async (c, { params }) => c.json(await revokePortalLinks(c.get("deps"), c.get("scope"), params.appId), 200),
  );
  portalOperation(
    api,
    {
      tags,
      method: "get",
      path: "/applications/{appId}/event-types",
      summary: "The environment's event types, for choosing an endpoint's filter_types",
      request: { params: appParam },
      responses: responses({ status: 200, schema: eventTypeList }, [401, 403, 404]),
    },
    async (c, { params }) => c.json(await listApplicationEventTypes(c.get("deps"), c.get("scope"), params.appId), 200),
  );
}
