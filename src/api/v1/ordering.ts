import { endpointParams } from "../../contracts/endpoints";
import { orderingList, skipOrderingInput, skipOrderingResult } from "../../contracts/ordering";
import { connectionOrdering, skipConnectionKey } from "../../domain/ordering";
import { endpointOrdering, skipEndpointKey } from "../../outbound/endpointOrdering";
import { idParam, jsonBody, operation, responses, type Api } from "../openapi";

const LIST = "Keys that wait behind their head or are blocked (docs/delivery.md, Ordered delivery), the longest waiting first, at most 1,000.";
const SKIP = "Moves a blocked key on: its head stays in the DLQ (it can still be redriven) and the next delivery of the key is sent. 409 when the key is not blocked.";

/** Ordered delivery's lines of a connection and of an application endpoint. */
export function registerOrderingRoutes(api: Api) {
  operation(
    api,
    { method: "get", path: "/connections/{id}/ordering", tags: ["connections"], summary: "A connection's ordering keys waiting or blocked", description: LIST, request: { params: idParam }, responses: responses({ status: 200, schema: orderingList }, [401, 404]) },
    async (c, { params }) => c.json(await connectionOrdering(c.get("deps"), c.get("scope"), params.id), 200),
  );
  operation(
    api,
    {
      method: "post",
      path: "/connections/{id}/ordering/skip",
      tags: ["connections"],
      summary: "Skip a blocked ordering key's head",
      description: SKIP,
      request: { params: idParam, ...jsonBody(skipOrderingInput) },
      responses: responses({ status: 200, schema: skipOrderingResult }, [400, 401, 403, 404, 409]),
    },
    async (c, { params, body }) => c.json(await skipConnectionKey(c.get("deps"), c.get("scope"), params.id, body.key), 200),
  );
  const base = "/applications/{appId}/endpoints/{id}/ordering";
  operation(
    api,
    { method: "get", path: base, tags: ["endpoints"], summary: "An endpoint's ordering keys waiting or blocked", description: LIST, request: { params: endpointParams }, responses: responses({ status: 200, schema: orderingList }, [401, 404]) },
    async (c, { params }) => c.json(await endpointOrdering(c.get("deps"), c.get("scope"), params.appId, params.id), 200),
  );
  operation(
    api,
    {
      method: "post",
      path: `${base}/skip`,
      tags: ["endpoints"],
      summary: "Skip a blocked ordering key's head",
      description: SKIP,
      request: { params: endpointParams, ...jsonBody(skipOrderingInput) },
      responses: responses({ status: 200, schema: skipOrderingResult }, [400, 401, 403, 404, 409]),
    },
    async (c, { params, body }) => c.json(await skipEndpointKey(c.get("deps"), c.get("scope"), params.appId, params.id, body.key), 200),
  );
}
