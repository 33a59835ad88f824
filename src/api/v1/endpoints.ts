import { appParam } from "../../contracts/applications";
import { publicKeyBody } from "../../contracts/destinations";
import { successBody } from "../../contracts/common";
import { createEndpointInput, endpointBody, endpointList, endpointParams, endpointSecret, rotateSecretInput, updateEndpointInput } from "../../contracts/endpoints";
import { endpointAttempts, listEndpointAttemptsQuery } from "../../contracts/messages";
import { createEndpoint, deleteEndpoint, getEndpoint, getEndpointPublicKey, getEndpointSecret, listEndpoints, rotateEndpointSecret, updateEndpoint } from "../../outbound/endpoints";
import { listEndpointAttempts } from "../../outbound/endpointAttempts";
import { recoverInput, recoverStarted } from "../../contracts/recover";
import { recoverEndpoint } from "../../outbound/endpointRecovery";
import { revealsSecret } from "../middleware/auth";
import { portalOperation } from "../middleware/portal";
import { jsonBody, operation, responses, type Api } from "../openapi";

/** An application's endpoints (docs/decisions.md D10, docs/outbound.md); every route is open to the application's portal link. */
export function registerEndpointRoutes(api: Api) {
  const tags = ["endpoints"];
  const base = "/applications/{appId}/endpoints";
  portalOperation(
    api,
    {
      tags,
      method: "post",
      path: base,
      summary: "Create an endpoint; the signing secret is generated unless given",
      request: { params: appParam, ...jsonBody(createEndpointInput) },
      responses: responses({ status: 201, schema: endpointBody }, [400, 401, 403, 404]),
    },
    async (c, { params, body }) => c.json(await createEndpoint(c.get("deps"), c.get("scope"), params.appId, body), 201),
  );
  portalOperation(
    api,
    { tags, method: "get", path: base, summary: "List the application's endpoints, newest first", request: { params: appParam }, responses: responses({ status: 200, schema: endpointList }, [401, 403, 404]) },
    async (c, { params }) => c.json(await listEndpoints(c.get("deps"), c.get("scope"), params.appId), 200),
  );
  portalOperation(
    api,
    { tags, method: "get", path: `${base}/{id}`, summary: "Get an endpoint", request: { params: endpointParams }, responses: responses({ status: 200, schema: endpointBody }, [401, 403, 404]) },
    async (c, { params }) => c.json(await getEndpoint(c.get("deps"), c.get("scope"), params.appId, params.id), 200),
  );
  portalOperation(
    api,
    {
      tags,
      method: "patch",
      path: `${base}/{id}`,
      summary: "Update an endpoint (partial); status active or disabled",
      request: { params: endpointParams, ...jsonBody(updateEndpointInput) },
      responses: responses({ status: 200, schema: endpointBody }, [400, 401, 403, 404]),
    },
    async (c, { params, body }) => c.json(await updateEndpoint(c.get("deps"), c.get("scope"), params.appId, params.id, body), 200),
  );
  portalOperation(
    api,
    {
      tags,
      method: "delete",
      path: `${base}/{id}`,
      summary: "Delete an endpoint; its queued deliveries are dropped",
      request: { params: endpointParams },
      responses: responses({ status: 200, schema: successBody }, [401, 403, 404]),
    },
    async (c, { params }) => c.json(await deleteEndpoint(c.get("deps"), c.get("scope"), params.appId, params.id), 200),
  );
  portalOperation(
    api,
    {
      tags,
      method: "get",
      path: `${base}/{id}/secret`,
      summary: "Read the endpoint's signing secret; needs scope *",
      middleware: [revealsSecret],
      request: { params: endpointParams },
      responses: responses({ status: 200, schema: endpointSecret }, [401, 403, 404]),
    },
    async (c, { params }) => c.json(await getEndpointSecret(c.get("deps"), c.get("scope"), params.appId, params.id), 200),
  );
  portalOperation(
    api,
    {
      tags,
      method: "get",
      path: `${base}/{id}/public-key`,
      summary: "Read the endpoint's Ed25519 public key (whpk_…), which verifies its v1a signatures; a read key may",
      description: "409 when the endpoint signs with hmac-sha256: a shared secret has no public half.",
      request: { params: endpointParams },
      responses: responses({ status: 200, schema: publicKeyBody }, [401, 403, 404, 409]),
    },
    async (c, { params }) => c.json(await getEndpointPublicKey(c.get("deps"), c.get("scope"), params.appId, params.id), 200),
  );
  portalOperation(
    api,
    {
      tags,
      method: "post",
      path: `${base}/{id}/secret/rotate`,
      summary: "Rotate the signing secret; the old one keeps signing beside it for 24 hours",
      description: "Optional body {secret: whsec_…} sets the new secret; without it one is generated. Answers the new secret.",
      middleware: [revealsSecret],
      request: { params: endpointParams, body: { required: false, content: { "application/json": { schema: rotateSecretInput } } } },
      responses: responses({ status: 200, schema: endpointSecret }, [400, 401, 403, 404]),
    },
    async (c, { params, body }) => c.json(await rotateEndpointSecret(c.get("deps"), c.get("scope"), params.appId, params.id, body ?? {}), 200),
  );
  portalOperation(
    api,
    {
      tags,
      method: "get",
      path: `${base}/{id}/attempts`,
      summary: "The endpoint's delivery attempts, newest first, in cursor pages",
      request: { params: endpointParams, query: listEndpointAttemptsQuery },
      responses: responses({ status: 200, schema: endpointAttempts }, [400, 401, 403, 404]),
    },
    async (c, { params, query }) => c.json(await listEndpointAttempts(c.get("deps"), c.get("scope"), params.appId, params.id, query), 200),
  );
  // Operators only: a portal link cannot start a recovery (a job that may send a whole outage again).
  operation(
    api,
    {
      tags,
      method: "post",
      path: `${base}/{id}/recover`,
      summary: "Send again every message whose latest attempt at this endpoint failed within [since, until) (a background job: GET /jobs/{job_id})",
      request: { params: endpointParams, ...jsonBody(recoverInput) },
      responses: responses({ status: 202, schema: recoverStarted, description: "Job started" }, [400, 401, 403, 404]),
    },
    async (c, { params, body }) => c.json(await recoverEndpoint(c.get("deps"), c.get("scope"), params.appId, params.id, body), 202),
  );
}
