import { listCluster } from "../../cluster/listing";
import { clusterBody } from "../../contracts/cluster";
import { operation, responses, type Api } from "../openapi";

/** The nodes sharing this database: the same for every org (the cluster is the installation's). */
export function registerClusterRoutes(api: Api) {
  operation(
    api,
    {
      tags: ["cluster"],
      method: "get",
      path: "/cluster",
      summary: "The live serve nodes sharing this database, and which one is the scheduler",
      responses: responses({ status: 200, schema: clusterBody }, [401]),
    },
    async (c) => c.json(await listCluster(c.get("deps")), 200),
  );
}
