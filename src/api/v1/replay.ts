import { jobIdParam, jobProgress, replayInput, replayStarted } from "../../contracts/jobs";
import { getReplay, startReplay } from "../../domain/replay";
import { jsonBody, operation, responses, type Api } from "../openapi";

/** Replay jobs (docs/decisions.md D7; spec: Replay). */
export function registerReplayRoutes(api: Api) {
  const tags = ["replay"];

  operation(
    api,
    {
      tags,
      method: "post",
      path: "/replay",
      summary: "Re-deliver the events received between from and to (ascending) to a destination, rate_limit events per second",
      request: jsonBody(replayInput),
      responses: responses({ status: 202, schema: replayStarted, description: "Job started" }, [400, 401, 404]),
    },
    async (c, { body }) => c.json(await startReplay(c.get("deps"), c.get("scope"), body), 202),
  );

  operation(
    api,
    {
      tags,
      method: "get",
      path: "/replay/{job_id}",
      summary: "Progress of a replay job (kept 24 hours after it completes)",
      request: { params: jobIdParam },
      responses: responses({ status: 200, schema: jobProgress }, [401, 404]),
    },
    async (c, { params }) => c.json(await getReplay(c.get("deps"), c.get("scope"), params.job_id), 200),
  );
}
