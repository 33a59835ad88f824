import { successBody } from "../../contracts/common";
import { createDestinationInput, destinationBody, destinationList, destinationSecret, listDestinationsQuery, publicKeyBody, updateDestinationInput } from "../../contracts/destinations";
import { createDestination, deleteDestination, getDestination, getDestinationPublicKey, getDestinationSecret, listDestinations, updateDestination } from "../../domain/destinations";
import { recoverInput, recoverStarted } from "../../contracts/recover";
import { recoverDestination } from "../../domain/recovery";
import { revealsSecret } from "../middleware/auth";
import { idParam, jsonBody, operation, responses, type Api } from "../openapi";

/** Destinations CRUD (docs/decisions.md D6); the signing secret is readable only at /secret. */
export function registerDestinationRoutes(api: Api) {
  const tags = ["destinations"];
  operation(
    api,
    { method: "post", path: "/destinations", tags, summary: "Create a destination", request: jsonBody(createDestinationInput), responses: responses({ status: 201, schema: destinationBody }, [400, 401, 403, 404]) },
    async (c, { body }) => c.json(await createDestination(c.get("deps"), c.get("scope"), body), 201),
  );
  operation(
    api,
    { method: "get", path: "/destinations", tags, summary: "List destinations, newest first", request: { query: listDestinationsQuery }, responses: responses({ status: 200, schema: destinationList }, [400, 401]) },
    async (c, { query }) => c.json(await listDestinations(c.get("deps"), c.get("scope"), query), 200),
  );
  operation(
    api,
    { method: "get", path: "/destinations/{id}", tags, summary: "Get a destination", request: { params: idParam }, responses: responses({ status: 200, schema: destinationBody }, [401, 404]) },
    async (c, { params }) => c.json(await getDestination(c.get("deps"), c.get("scope"), params.id), 200),
  );
  operation(
    api,
    {
      method: "get",
      path: "/destinations/{id}/secret",
      tags,
      summary: "Read the destination's signing secret; needs scope *",
      middleware: [revealsSecret],
      request: { params: idParam },
      responses: responses({ status: 200, schema: destinationSecret }, [401, 403, 404]),
    },
    async (c, { params }) => c.json(await getDestinationSecret(c.get("deps"), c.get("scope"), params.id), 200),
  );
  operation(
    api,
    {
      method: "get",
      path: "/destinations/{id}/public-key",
      tags,
      summary: "Read the destination's Ed25519 public key (whpk_…), which verifies its v1a signatures; a read key may",
      description: "409 when the destination signs with hmac-sha256: a shared secret has no public half.",
      request: { params: idParam },
      responses: responses({ status: 200, schema: publicKeyBody }, [401, 404, 409]),
    },
    async (c, { params }) => c.json(await getDestinationPublicKey(c.get("deps"), c.get("scope"), params.id), 200),
  );
  operation(
    api,
    {
      method: "patch",
      path: "/destinations/{id}",
      tags,
      summary: "Update a destination (partial)",
      request: { params: idParam, ...jsonBody(updateDestinationInput) },
      responses: responses({ status: 200, schema: destinationBody }, [400, 401, 403, 404]),
    },
    async (c, { params, body }) => c.json(await updateDestination(c.get("deps"), c.get("scope"), params.id, body), 200),
  );
  operation(
    api,
    { method: "delete", path: "/destinations/{id}", tags, summary: "Delete a destination and its connections", request: { params: idParam }, responses: responses({ status: 200, schema: successBody }, [401, 403, 404]) },
    async (c, { params }) => c.json(await deleteDestination(c.get("deps"), c.get("scope"), params.id), 200),
  );
  operation(
    api,
    {
      method: "post",
      path: "/destinations/{id}/recover",
      tags,
      summary: "Send again every event whose latest attempt at this destination failed within [since, until) (a background job: GET /jobs/{job_id})",
      request: { params: idParam, ...jsonBody(recoverInput) },
      responses: responses({ status: 202, schema: recoverStarted, description: "Job started" }, [400, 401, 403, 404]),
    },
    async (c, { params, body }) => c.json(await recoverDestination(c.get("deps"), c.get("scope"), params.id, body), 202),
  );
}
