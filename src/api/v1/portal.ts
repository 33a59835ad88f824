import { portalSession } from "../../contracts/portal";
import { getPortalSession } from "../../outbound/portalLinks";
import { portalOperation } from "../middleware/portal";
import { responses, type Api } from "../openapi";

/** The portal page's first call: which application its link is for, and until when (docs/outbound.md, "The portal"). */
export function registerPortalRoutes(api: Api) {
  portalOperation(
    api,
    {
      tags: ["portal"],
      method: "get",
      path: "/portal/session",
      summary: "The portal link's application and expiry; answers a portal token only (others → 403)",
      responses: responses({ status: 200, schema: portalSession }, [401, 403, 404]),
    },
    async (c) => c.json(await getPortalSession(c.get("deps"), c.get("scope")), 200),
  );
}
