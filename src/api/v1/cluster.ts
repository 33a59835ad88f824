import { listCluster } from "../../cluster/listing";
import { clusterBody } from "../../contracts/cluster";
import { instanceOwnerOnly } from "../middleware/auth";
import { operation, responses, type Api } from "../openapi";

/** The nodes sharing this database: the installation's, not an organization's, with host names and PIDs: the instance's owner only (others 403). */
export function registerClusterRoutes(api: Api) {
  operation(
    api,
    {
      tags: ["cluster"],
      method: "get",
      path: "/cluster",
      middleware: [instanceOwnerOnly],
      summary: "The live serve nodes sharing this database, and which one is the scheduler (the instance's owner only)",
      responses: responses({ status: 200, schema: clusterBody }, [401, 403]),
    },
    async (c) => c.json(await listCluster(c.get("deps")), 200),
  );
}
