import { statsBody } from "../../contracts/stats";
import { getStats } from "../../domain/stats";
import { operation, responses, type Api } from "../openapi";

/** The dashboard's numbers in one request. */
export function registerStatsRoutes(api: Api) {
  operation(
    api,
    {
      tags: ["stats"],
      method: "get",
      path: "/stats",
      summary: "Traffic, delivery and queue numbers for the last 24 hours, hour by hour",
      responses: responses({ status: 200, schema: statsBody }, [401]),
    },
    async (c) => c.json(await getStats(c.get("deps"), c.get("scope")), 200),
  );
}
