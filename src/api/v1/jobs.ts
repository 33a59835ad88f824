import { jobProgress } from "../../contracts/jobs";
import { getJob } from "../../domain/jobs";
import { idParam, operation, responses, type Api } from "../openapi";

/** Progress of background jobs: bulk retry, DLQ redrive and replay (same shape as GET /replay/{job_id}). */
export function registerJobRoutes(api: Api) {
  operation(
    api,
    {
      tags: ["jobs"],
      method: "get",
      path: "/jobs/{id}",
      summary: "Progress of a bulk retry, redrive or replay job (kept 24 hours after it completes)",
      request: { params: idParam },
      responses: responses({ status: 200, schema: jobProgress }, [401, 404]),
    },
    async (c, { params }) => c.json(await getJob(c.get("deps"), c.get("scope"), params.id), 200),
  );
}
